// Builder functions over make_op; see ops.hpp.
#include "minigrad/ir/ops.hpp"

#include <algorithm>

#include "minigrad/ir/errors.hpp"

namespace mg::ir {

Value unary(std::string_view name, Value x, Attrs attrs) { return make_op(op(name), {x}, std::move(attrs)); }
Value binary(std::string_view name, Value a, Value b) { return make_op(op(name), {a, b}); }

Value cast(Value x, DType to) {
  if (x.dtype() == to) return x;
  return make_op(op("cast"), {x}, {{"dtype", to}});
}

Value where(Value cond, Value a, Value b) { return make_op(op("where"), {cond, a, b}); }

Value full(Graph& g, Type type, double value) {
  return make_op(g, op("full"), {}, {{"shape", type.shape}, {"dtype", type.dtype}, {"value", value}});
}
Value full_like(Value like, double value) { return full(*like.graph, like.type(), value); }
Value scale(Value x, double c) { return mul(x, full_like(x, c)); }
Value add_scalar(Value x, double c) { return add(x, full_like(x, c)); }

Value broadcast_to(Value x, Shape shape) {
  if (x.shape() == shape) return x;
  return make_op(op("broadcast_to"), {x}, {{"shape", std::move(shape)}});
}

Value reshape(Value x, Shape shape) {
  if (x.shape() == shape) return x;
  return make_op(op("reshape"), {x}, {{"shape", std::move(shape)}});
}

Value permute(Value x, I64List perm) {
  bool identity = static_cast<int>(perm.size()) == x.rank();  // else let the op's rule reject it
  for (std::size_t i = 0; i < perm.size(); ++i) identity &= perm[i] == static_cast<std::int64_t>(i);
  if (identity) return x;
  return make_op(op("permute"), {x}, {{"perm", std::move(perm)}});
}

Value transpose_last2(Value x) {
  int r = x.rank();
  MG_ASSERT(r >= 2, "transpose_last2 needs rank >= 2");
  I64List perm(static_cast<std::size_t>(r));
  for (int i = 0; i < r; ++i) perm[i] = i;
  std::swap(perm[r - 1], perm[r - 2]);
  return permute(x, perm);
}

Value reduce(std::string_view name, Value x, I64List axes, bool keepdim) {
  return make_op(op(name), {x}, {{"axes", std::move(axes)}, {"keepdim", keepdim}});
}

Value sum_to(Value x, const Shape& shape) {
  if (x.shape() == shape) return x;
  const Shape& xs = x.shape();
  int lead = x.rank() - static_cast<int>(shape.size());
  MG_ASSERT(lead >= 0, "sum_to: target rank larger than source");
  I64List axes;
  for (int i = 0; i < x.rank(); ++i)
    if (i < lead || (shape[i - lead] == 1 && xs[i] != 1)) axes.push_back(i);
  Value s = axes.empty() ? x : reduce_sum(x, axes, false);
  return reshape(s, shape);
}

Shape keepdim_shape(const Shape& shape, const I64List& axes) {
  Shape k = shape;
  for (auto a : axes) k[static_cast<std::size_t>(a)] = 1;
  return k;
}

Value expand_reduced(Value g, const Shape& shape, const I64List& axes) {
  return broadcast_to(reshape(g, keepdim_shape(shape, axes)), shape);
}

Value matmul(Value a, Value b) { return make_op(op("matmul"), {a, b}); }

// ---- index ops (ir/ops/index.cpp) ----
Value gather(Value x, Value index, std::int64_t axis) {
  return make_op(op("gather"), {x, index}, {{"axis", axis}});
}
Value scatter_add(Value base, Value index, Value src, std::int64_t axis) {
  return make_op(op("scatter_add"), {base, index, src}, {{"axis", axis}});
}
Value index_select(Value x, Value index, std::int64_t axis) {
  return make_op(op("index_select"), {x, index}, {{"axis", axis}});
}
Value index_add(Value base, Value index, Value src, std::int64_t axis) {
  return make_op(op("index_add"), {base, index, src}, {{"axis", axis}});
}
Value cumsum(Value x, std::int64_t axis) { return make_op(op("cumsum"), {x}, {{"axis", axis}}); }
// ---- end index ops ----

// ---- shape ops (ir/ops/shape.cpp) ----
Value slice(Value x, I64List starts, I64List stops, I64List steps) {
  bool all = starts.size() == x.shape().size() && stops.size() == starts.size() && steps.size() == starts.size();
  for (std::size_t i = 0; all && i < starts.size(); ++i)
    all = starts[i] == 0 && stops[i] == x.shape()[i] && steps[i] == 1;
  if (all) return x;
  return make_op(op("slice"), {x}, {{"starts", std::move(starts)}, {"stops", std::move(stops)}, {"steps", std::move(steps)}});
}
Value pad(Value x, I64List low, I64List high, I64List interior, double value) {
  auto zero = [](const I64List& l) { return std::all_of(l.begin(), l.end(), [](auto v) { return v == 0; }); };
  if (low.size() == x.shape().size() && high.size() == low.size() && interior.size() == low.size() &&
      zero(low) && zero(high) && zero(interior))
    return x;
  return make_op(op("pad"), {x},
                 {{"low", std::move(low)}, {"high", std::move(high)}, {"interior", std::move(interior)}, {"value", value}});
}
Value concat(std::vector<Value> xs, std::int64_t axis) {
  if (xs.size() == 1) return xs[0];
  return make_op(op("concat"), std::move(xs), {{"axis", axis}});
}
Value flip(Value x, I64List axes) {
  if (axes.empty()) return x;
  return make_op(op("flip"), {x}, {{"axes", std::move(axes)}});
}
Value squeeze(Value x, I64List axes) {
  if (axes.empty()) return x;
  return make_op(op("squeeze"), {x}, {{"axes", std::move(axes)}});
}
Value unsqueeze(Value x, I64List axes) {
  if (axes.empty()) return x;
  return make_op(op("unsqueeze"), {x}, {{"axes", std::move(axes)}});
}
// ---- end shape ops ----

}  // namespace mg::ir
