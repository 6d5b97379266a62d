// Lowering of elementwise expressions: dtype agreement, NumPy broadcasting through
// explicit broadcast_to nodes, scalars as constants of the tensor operands' dtype.
#include <cmath>

#include "minigrad/dsl/broadcast.hpp"
#include "minigrad/dsl/expr.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/region.hpp"

namespace mg {

namespace dsl {
std::optional<Shape> broadcast_shapes(std::span<const Shape> shapes) {
  std::size_t rank = 0;
  for (auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (auto& s : shapes) {
    std::size_t off = rank - s.size();
    for (std::size_t i = 0; i < s.size(); ++i) {
      std::int64_t& o = out[off + i];
      if (s[i] == o || s[i] == 1) continue;
      if (o != 1) return std::nullopt;
      o = s[i];
    }
  }
  return out;
}
}  // namespace dsl

namespace detail {

Tensor lower_elementwise(std::string_view op, std::vector<Lowered> args, const Attrs& attrs, Loc loc) {
  SourceLoc where_loc = SourceLoc::from(loc);
  LocScope scope(where_loc);
  const bool is_where = op == "where";
  const std::size_t first_value = is_where ? 1 : 0;
  auto fail = [&](const std::string& msg) -> Tensor {
    throw ShapeError("op '" + std::string(op) + "': " + msg, ambient_loc());
  };
  auto types = [&] {
    std::string s;
    for (auto& a : args) {
      s += s.empty() ? "" : " and ";
      s += std::holds_alternative<Tensor>(a) ? to_string(std::get<Tensor>(a).type()) : "a scalar";
    }
    return s;
  };

  ir::Graph* g = nullptr;
  std::optional<DType> dtype;
  std::vector<Shape> shapes;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!std::holds_alternative<Tensor>(args[i])) continue;
    const Tensor& t = std::get<Tensor>(args[i]);
    if (!t.valid()) fail("an operand is an empty Tensor handle");
    if (g && &t.graph() != g) {
      // Inside a traced region body, values of the graphs around it are captured.
      const ir::Value two[2] = {ir::Value{g, 0}, t.value()};
      ir::Graph* inner = ir::capture_target(two);
      if (!ir::is_tracing(*inner)) fail("operands come from different graphs");
      g = inner;
    } else {
      g = &t.graph();
    }
    shapes.push_back(t.shape());
    if (i < first_value) continue;
    if (!dtype) dtype = t.dtype();
    else if (*dtype != t.dtype())
      fail("dtype mismatch between " + types() + "; cast one operand explicitly");
  }
  if (is_where && !std::holds_alternative<Tensor>(args[0])) fail("the condition must be a bool tensor");
  if (!dtype) fail("needs at least one tensor operand besides the condition");
  auto shape = dsl::broadcast_shapes(shapes);
  if (!shape) fail("cannot broadcast " + types() + " (NumPy rules: trailing dimensions must match or be 1)");

  std::vector<ir::Value> operands;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (auto* t = std::get_if<Tensor>(&args[i])) {
      operands.push_back(ir::broadcast_to(t->value(), *shape));
      continue;
    }
    double v = std::get<double>(args[i]);
    if (*dtype == DType::boolean) fail("a scalar cannot be combined with a bool tensor");
    if (*dtype == DType::i64 && std::trunc(v) != v)
      fail("the scalar " + std::to_string(v) + " is not an integer but the tensor is i64; cast it first");
    operands.push_back(ir::full(*g, Type{*dtype, *shape}, v));
  }
  return Tensor(ir::make_op(ir::op(op), std::move(operands), attrs));
}

}  // namespace detail
}  // namespace mg
