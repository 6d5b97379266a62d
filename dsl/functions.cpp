// The non-elementwise DSL; see functions.hpp. Checks here speak the user's language
// (negative axes, Python slices); the IR op's own shape rule is the final authority.
#include "minigrad/dsl/functions.hpp"

#include <algorithm>
#include <numeric>

#include "minigrad/dsl/broadcast.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"

namespace mg {

namespace {

[[noreturn]] void fail(std::string_view op, const std::string& msg) {
  throw ShapeError("op '" + std::string(op) + "': " + msg, ambient_loc());
}

void check(std::string_view op, const Tensor& x) {
  if (!x.valid()) fail(op, "the input is an empty Tensor handle");
}

std::int64_t norm_axis(std::string_view op, std::int64_t axis, int rank) {
  std::int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank)
    fail(op, "axis " + std::to_string(axis) + " is out of range for a tensor of rank " + std::to_string(rank));
  return a;
}

I64List norm_axes(std::string_view op, const Axes& axes, const Tensor& x) {
  I64List out;
  if (axes.all) {
    out.resize(static_cast<std::size_t>(x.rank()));
    std::iota(out.begin(), out.end(), 0);
    return out;
  }
  for (auto a : axes.list) out.push_back(norm_axis(op, a, x.rank()));
  std::sort(out.begin(), out.end());
  if (std::adjacent_find(out.begin(), out.end()) != out.end()) fail(op, "an axis is repeated");
  return out;
}

Tensor reduction(std::string_view op, const Tensor& x, const Axes& axes, bool keepdim, Loc loc,
                 Attrs extra = {}) {
  LocScope at(SourceLoc::from(loc));
  check(op, x);
  extra.set("axes", norm_axes(op, axes, x));
  extra.set("keepdim", keepdim);
  return Tensor(ir::make_op(ir::op(op), {x.value()}, std::move(extra)));
}

Tensor along_axis(std::string_view op, const Tensor& x, std::int64_t axis, Loc loc, Attrs extra = {}) {
  LocScope at(SourceLoc::from(loc));
  check(op, x);
  extra.set("axis", norm_axis(op, axis, x.rank()));
  return Tensor(ir::make_op(ir::op(op), {x.value()}, std::move(extra)));
}

}  // namespace

Tensor sum(const Tensor& x, Axes axes, bool keepdim, Loc loc) { return reduction("reduce_sum", x, axes, keepdim, loc); }
Tensor mean(const Tensor& x, Axes axes, bool keepdim, Loc loc) { return reduction("reduce_mean", x, axes, keepdim, loc); }
Tensor max(const Tensor& x, Axes axes, bool keepdim, Loc loc) { return reduction("reduce_max", x, axes, keepdim, loc); }
Tensor min(const Tensor& x, Axes axes, bool keepdim, Loc loc) { return reduction("reduce_min", x, axes, keepdim, loc); }
Tensor prod(const Tensor& x, Axes axes, bool keepdim, Loc loc) { return reduction("reduce_prod", x, axes, keepdim, loc); }
Tensor var(const Tensor& x, Axes axes, std::int64_t correction, bool keepdim, Loc loc) {
  return reduction("var", x, axes, keepdim, loc, {{"correction", correction}});
}
Tensor logsumexp(const Tensor& x, Axes axes, bool keepdim, Loc loc) { return reduction("logsumexp", x, axes, keepdim, loc); }
Tensor argmax(const Tensor& x, std::int64_t axis, bool keepdim, Loc loc) {
  return along_axis("argmax", x, axis, loc, {{"keepdim", keepdim}});
}
Tensor argmin(const Tensor& x, std::int64_t axis, bool keepdim, Loc loc) {
  return along_axis("argmin", x, axis, loc, {{"keepdim", keepdim}});
}
Tensor softmax(const Tensor& x, std::int64_t axis, Loc loc) { return along_axis("softmax", x, axis, loc); }
Tensor log_softmax(const Tensor& x, std::int64_t axis, Loc loc) { return along_axis("log_softmax", x, axis, loc); }
Tensor cumsum(const Tensor& x, std::int64_t axis, Loc loc) { return along_axis("cumsum", x, axis, loc); }

Tensor matmul(const Tensor& a, const Tensor& b, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("matmul", a);
  check("matmul", b);
  auto types = [&] { return to_string(a.type()) + " @ " + to_string(b.type()); };
  if (a.rank() == 0 || b.rank() == 0) fail("matmul", "operands must have rank >= 1, got " + types());
  if (a.dtype() != b.dtype()) fail("matmul", "dtype mismatch in " + types() + "; cast one operand explicitly");
  ir::Value av = a.value(), bv = b.value();
  if (a.rank() == 1) av = ir::reshape(av, {1, a.shape()[0]});
  if (b.rank() == 1) bv = ir::reshape(bv, {b.shape()[0], 1});
  Shape as = av.shape(), bs = bv.shape();
  const std::int64_t m = as[as.size() - 2], k = as.back(), k2 = bs[bs.size() - 2], n = bs.back();
  if (k != k2) fail("matmul", "inner dimensions differ (" + std::to_string(k) + " vs " + std::to_string(k2) + ") in " + types());
  Shape abatch(as.begin(), as.end() - 2), bbatch(bs.begin(), bs.end() - 2);
  if (bbatch.empty() && !abatch.empty()) {
    // [..., m, k] @ [k, n] (a Linear on a sequence): one GEMM over all rows, as torch does,
    // not b broadcast to every batch entry (a weight-sized copy per entry, kept for backward).
    std::int64_t rows = m;
    for (std::int64_t d : abatch) rows *= d;
    Shape result = abatch;
    result.push_back(m);
    if (b.rank() != 1) result.push_back(n);
    return Tensor(ir::reshape(ir::matmul(ir::reshape(av, {rows, k}), bv), result));
  }
  Shape both[] = {abatch, bbatch};
  auto batch = dsl::broadcast_shapes(both);
  if (!batch) fail("matmul", "batch dimensions cannot be broadcast in " + types());
  Shape at_shape = *batch, bt_shape = *batch;
  at_shape.insert(at_shape.end(), {m, k});
  bt_shape.insert(bt_shape.end(), {k, n});
  if (abatch != *batch) av = ir::broadcast_to(av, at_shape);
  if (bbatch != *batch) bv = ir::broadcast_to(bv, bt_shape);
  ir::Value out = ir::matmul(av, bv);
  Shape result = *batch;
  if (a.rank() != 1) result.push_back(m);
  if (b.rank() != 1) result.push_back(n);
  return Tensor(ir::reshape(out, result));
}

Tensor reshape(const Tensor& x, Shape shape, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("reshape", x);
  std::int64_t known = 1;
  int infer = -1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0) fail("reshape", "only one dimension can be -1 in " + to_string(shape));
      infer = static_cast<int>(i);
    } else if (shape[i] < 0) {
      fail("reshape", "negative dimension in " + to_string(shape));
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      fail("reshape", "cannot infer -1 in " + to_string(shape) + " for " + to_string(x.type()));
    shape[static_cast<std::size_t>(infer)] = x.numel() / known;
  }
  if (numel(shape) != x.numel())
    fail("reshape", "cannot reshape " + to_string(x.type()) + " (" + std::to_string(x.numel()) +
                        " elements) to " + to_string(shape));
  return Tensor(ir::reshape(x.value(), shape));
}

Tensor permute(const Tensor& x, std::vector<std::int64_t> perm, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("permute", x);
  if (static_cast<int>(perm.size()) != x.rank())
    fail("permute", "permutation of length " + std::to_string(perm.size()) + " for rank " + std::to_string(x.rank()));
  for (auto& p : perm) p = norm_axis("permute", p, x.rank());
  return Tensor(ir::permute(x.value(), perm));
}

Tensor transpose(const Tensor& x, std::int64_t d0, std::int64_t d1, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("transpose", x);
  I64List perm(static_cast<std::size_t>(x.rank()));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[norm_axis("transpose", d0, x.rank())], perm[norm_axis("transpose", d1, x.rank())]);
  return Tensor(ir::permute(x.value(), perm));
}

Tensor broadcast_to(const Tensor& x, Shape shape, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("broadcast_to", x);
  Shape both[] = {x.shape(), shape};
  auto b = dsl::broadcast_shapes(both);
  if (!b || *b != shape) fail("broadcast_to", "cannot broadcast " + to_string(x.type()) + " to " + to_string(shape));
  return Tensor(ir::broadcast_to(x.value(), shape));
}

Tensor squeeze(const Tensor& x, Axes axes, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("squeeze", x);
  I64List list;
  if (axes.all) {
    for (int i = 0; i < x.rank(); ++i)
      if (x.shape()[i] == 1) list.push_back(i);
  } else {
    list = norm_axes("squeeze", axes, x);
    for (auto a : list)
      if (x.shape()[a] != 1) fail("squeeze", "axis " + std::to_string(a) + " of " + to_string(x.type()) + " is not of size 1");
  }
  if (list.empty()) return x;
  return Tensor(ir::make_op(ir::op("squeeze"), {x.value()}, {{"axes", list}}));
}

Tensor unsqueeze(const Tensor& x, std::int64_t axis, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("unsqueeze", x);
  std::int64_t a = norm_axis("unsqueeze", axis, x.rank() + 1);
  return Tensor(ir::make_op(ir::op("unsqueeze"), {x.value()}, {{"axes", I64List{a}}}));
}

Tensor flatten(const Tensor& x, std::int64_t start, std::int64_t end, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("flatten", x);
  if (x.rank() == 0) return reshape(x, {1}, loc);
  std::int64_t s = norm_axis("flatten", start, x.rank()), e = norm_axis("flatten", end, x.rank());
  if (s > e) fail("flatten", "start axis after end axis");
  Shape shape(x.shape().begin(), x.shape().begin() + s);
  std::int64_t mid = 1;
  for (std::int64_t i = s; i <= e; ++i) mid *= x.shape()[i];
  shape.push_back(mid);
  shape.insert(shape.end(), x.shape().begin() + e + 1, x.shape().end());
  return Tensor(ir::reshape(x.value(), shape));
}

Tensor slice(const Tensor& x, std::vector<Slice> per_axis, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("slice", x);
  if (static_cast<int>(per_axis.size()) > x.rank())
    fail("slice", std::to_string(per_axis.size()) + " slices for a tensor of rank " + std::to_string(x.rank()));
  per_axis.resize(static_cast<std::size_t>(x.rank()));
  I64List starts, stops, steps, flips;
  for (std::size_t i = 0; i < per_axis.size(); ++i) {
    const Slice& s = per_axis[i];
    const std::int64_t d = x.shape()[i];
    if (s.step == 0) fail("slice", "step must not be zero");
    auto clampi = [&](std::int64_t v, std::int64_t lo, std::int64_t hi) {
      if (v < 0) v += d;
      return std::clamp(v, lo, hi);
    };
    if (s.step > 0) {
      std::int64_t b = s.start ? clampi(*s.start, 0, d) : 0;
      std::int64_t e = s.stop ? clampi(*s.stop, 0, d) : d;
      starts.push_back(b);
      stops.push_back(std::max(b, e));
      steps.push_back(s.step);
    } else {
      // x[b:e:-k] walks down from b; express it on the flipped axis (index j = d-1-i).
      std::int64_t b = s.start ? clampi(*s.start, -1, d - 1) : d - 1;
      std::int64_t e = s.stop ? clampi(*s.stop, -1, d - 1) : -1;
      std::int64_t fb = d - 1 - b, fe = d - 1 - e;
      starts.push_back(fb);
      stops.push_back(std::max(fb, fe));
      steps.push_back(-s.step);
      flips.push_back(static_cast<std::int64_t>(i));
    }
  }
  ir::Value v = x.value();
  if (!flips.empty()) v = ir::make_op(ir::op("flip"), {v}, {{"axes", flips}});
  bool identity = true;
  for (std::size_t i = 0; i < starts.size(); ++i)
    identity = identity && starts[i] == 0 && stops[i] == x.shape()[i] && steps[i] == 1;
  if (identity) return Tensor(v);
  return Tensor(ir::make_op(ir::op("slice"), {v}, {{"starts", starts}, {"stops", stops}, {"steps", steps}}));
}

Tensor slice(const Tensor& x, std::int64_t axis, std::optional<std::int64_t> start,
             std::optional<std::int64_t> stop, std::int64_t step, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("slice", x);
  std::vector<Slice> per_axis(static_cast<std::size_t>(x.rank()));
  per_axis[norm_axis("slice", axis, x.rank())] = Slice{start, stop, step};
  return slice(x, per_axis, loc);
}

Tensor concat(const std::vector<Tensor>& xs, std::int64_t axis, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  if (xs.empty()) fail("concat", "needs at least one tensor");
  std::vector<ir::Value> vs;
  for (auto& x : xs) {
    check("concat", x);
    vs.push_back(x.value());
  }
  if (vs.size() == 1) return xs[0];
  return Tensor(ir::make_op(ir::op("concat"), vs, {{"axis", norm_axis("concat", axis, xs[0].rank())}}));
}

Tensor stack(const std::vector<Tensor>& xs, std::int64_t axis, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  if (xs.empty()) fail("stack", "needs at least one tensor");
  std::vector<Tensor> parts;
  for (auto& x : xs) {
    check("stack", x);
    if (x.type() != xs[0].type())
      fail("stack", "all tensors must have one type, got " + to_string(xs[0].type()) + " and " + to_string(x.type()));
    parts.push_back(unsqueeze(x, axis, loc));
  }
  return concat(parts, axis, loc);
}

Tensor pad(const Tensor& x, std::vector<std::pair<std::int64_t, std::int64_t>> widths, double value, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("pad", x);
  if (static_cast<int>(widths.size()) > x.rank())
    fail("pad", std::to_string(widths.size()) + " pad widths for a tensor of rank " + std::to_string(x.rank()));
  I64List low(static_cast<std::size_t>(x.rank()), 0), high = low, interior = low;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    if (widths[i].first < 0 || widths[i].second < 0) fail("pad", "pad widths must be non-negative");
    low[i] = widths[i].first;
    high[i] = widths[i].second;
  }
  return Tensor(ir::make_op(ir::op("pad"), {x.value()},
                            {{"low", low}, {"high", high}, {"interior", interior}, {"value", value}}));
}

Tensor flip(const Tensor& x, Axes axes, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("flip", x);
  return Tensor(ir::make_op(ir::op("flip"), {x.value()}, {{"axes", norm_axes("flip", axes, x)}}));
}

Tensor gather(const Tensor& x, std::int64_t axis, const Tensor& index, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("gather", x);
  check("gather", index);
  return Tensor(ir::make_op(ir::op("gather"), {x.value(), index.value()},
                            {{"axis", norm_axis("gather", axis, x.rank())}}));
}

Tensor index_select(const Tensor& x, std::int64_t axis, const Tensor& index, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("index_select", x);
  check("index_select", index);
  return Tensor(ir::make_op(ir::op("index_select"), {x.value(), index.value()},
                            {{"axis", norm_axis("index_select", axis, x.rank())}}));
}

Tensor one_hot(const Tensor& index, std::int64_t num_classes, DType dtype, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("one_hot", index);
  return Tensor(ir::make_op(ir::op("one_hot"), {index.value()}, {{"num_classes", num_classes}, {"dtype", dtype}}));
}

Tensor cast(const Tensor& x, DType to, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("cast", x);
  return Tensor(ir::cast(x.value(), to));
}

Tensor stop_gradient(const Tensor& x, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("stop_gradient", x);
  return Tensor(ir::unary("stop_gradient", x.value()));
}

}  // namespace mg
