// Constants and masks made in a tensor's own graph: full_like/zeros_like/ones_like,
// tril/triu and masked_fill (declared in dsl/functions.hpp). Each is a composition of
// existing IR ops (full, arange, sub, le/ge, broadcast_to, where), so gradients, folding,
// fusion and the C99 backend need nothing new: the masks depend only on constants and fold
// away, and where's VJP routes the cotangent to the kept entries.
#include <cmath>

#include "minigrad/dsl/broadcast.hpp"
#include "minigrad/dsl/functions.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"

namespace mg {

namespace {

[[noreturn]] void fail(std::string_view op, const std::string& msg) {
  throw ShapeError("op '" + std::string(op) + "': " + msg, ambient_loc());
}

void check(std::string_view op, const Tensor& x, const char* what = "the input") {
  if (!x.valid()) fail(op, std::string(what) + " is an empty Tensor handle");
}

// `value` as a constant of dtype `dt` must mean what it says.
void check_value(std::string_view op, double value, DType dt) {
  if (dt == DType::i64 && std::trunc(value) != value)
    fail(op, "the value " + std::to_string(value) + " is not an integer but the dtype is i64");
  if (dt == DType::boolean && value != 0 && value != 1)
    fail(op, "the value " + std::to_string(value) + " is not 0 or 1 but the dtype is bool");
}

// i64[n] = 0, 1, ..., n-1 in x's graph.
ir::Value iota(ir::Graph& g, std::int64_t n) {
  return ir::make_op(g, ir::op("arange"), {},
                     {{"start", 0.0}, {"step", 1.0}, {"n", n}, {"dtype", DType::i64}});
}

// x where (column - row) `cmp` k over the last two axes, zero elsewhere.
Tensor band(std::string_view op, const Tensor& x, std::int64_t k, std::string_view cmp, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check(op, x);
  const int r = x.rank();
  if (r < 2) fail(op, "needs a tensor of rank >= 2 (its last two axes are the matrix), got " + to_string(x.type()));
  const std::int64_t n = x.shape()[r - 2], m = x.shape()[r - 1];
  ir::Graph& g = x.graph();
  const Shape nm{n, m};
  ir::Value rows = ir::broadcast_to(ir::reshape(iota(g, n), {n, 1}), nm);
  ir::Value cols = ir::broadcast_to(ir::reshape(iota(g, m), {1, m}), nm);
  ir::Value keep = ir::binary(cmp, ir::sub(cols, rows), ir::full(g, Type{DType::i64, nm}, static_cast<double>(k)));
  keep = ir::broadcast_to(keep, x.shape());
  return Tensor(ir::where(keep, x.value(), ir::full(g, x.type(), 0.0)));
}

// where(mask, value, x), all three broadcast to their common shape.
Tensor fill(const Tensor& x, const Tensor& mask, ir::Value value) {
  const std::string_view op = "masked_fill";
  if (mask.dtype() != DType::boolean) fail(op, "the mask must be bool, got " + to_string(mask.type()));
  if (&mask.graph() != &x.graph()) fail(op, "the mask comes from a different graph than the tensor");
  const Shape shapes[] = {x.shape(), mask.shape()};
  auto shape = dsl::broadcast_shapes(shapes);
  if (!shape)
    fail(op, "cannot broadcast the mask " + to_string(mask.type()) + " with the tensor " + to_string(x.type()) +
                 " (NumPy rules: trailing dimensions must match or be 1)");
  return Tensor(ir::where(ir::broadcast_to(mask.value(), *shape), ir::broadcast_to(value, *shape),
                          ir::broadcast_to(x.value(), *shape)));
}

}  // namespace

Tensor full_like(const Tensor& x, double value, std::optional<DType> dtype, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("full_like", x);
  const DType dt = dtype.value_or(x.dtype());
  check_value("full_like", value, dt);
  return Tensor(ir::full(x.graph(), Type{dt, x.shape()}, value));
}

Tensor zeros_like(const Tensor& x, std::optional<DType> dtype, Loc loc) { return full_like(x, 0.0, dtype, loc); }
Tensor ones_like(const Tensor& x, std::optional<DType> dtype, Loc loc) { return full_like(x, 1.0, dtype, loc); }

Tensor tril(const Tensor& x, std::int64_t k, Loc loc) { return band("tril", x, k, "le", loc); }
Tensor triu(const Tensor& x, std::int64_t k, Loc loc) { return band("triu", x, k, "ge", loc); }

Tensor masked_fill(const Tensor& x, const Tensor& mask, double value, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("masked_fill", x);
  check("masked_fill", mask, "the mask");
  check_value("masked_fill", value, x.dtype());
  return fill(x, mask, ir::full(x.graph(), Type{x.dtype(), {}}, value));
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check("masked_fill", x);
  check("masked_fill", mask, "the mask");
  check("masked_fill", value, "the value");
  if (value.rank() != 0 || value.dtype() != x.dtype())
    fail("masked_fill", "the value must be a 0-d tensor of the tensor's dtype " + std::string(name_of(x.dtype())) +
                            ", got " + to_string(value.type()));
  if (&value.graph() != &x.graph()) fail("masked_fill", "the value comes from a different graph than the tensor");
  return fill(x, mask, value.value());
}

}  // namespace mg
