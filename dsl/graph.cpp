// mg::Graph: inputs, constants and the creation ops.
#include "minigrad/dsl/graph.hpp"

#include <cmath>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"

namespace mg {

namespace {
void check_shape(std::string_view op, const Shape& s) {
  for (auto d : s)
    if (d < 0) throw ShapeError("op '" + std::string(op) + "': negative dimension in " + to_string(s), ambient_loc());
}
}  // namespace

Graph::Graph() : ir_(std::make_shared<ir::Graph>()) { ir_->set_owner(ir_); }

Graph::Graph(std::shared_ptr<ir::Graph> ir) : ir_(std::move(ir)) {
  MG_ASSERT(ir_ != nullptr, "mg::Graph: null ir::Graph");
  if (!ir_->owner()) ir_->set_owner(ir_);
}

Graph graph_of(const Tensor& x, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  if (!x.valid()) throw UserError("graph_of: the tensor is an empty handle", ambient_loc());
  std::shared_ptr<ir::Graph> owner = x.graph().owner();
  if (!owner)
    throw UserError("graph_of: the tensor's graph is not owned by an mg::Graph (it was built on an ir::Graph directly)",
                    ambient_loc());
  return Graph(std::move(owner));
}

Tensor Graph::input(std::string name, Shape shape, Loc loc) {
  return input(std::move(name), default_float, std::move(shape), loc);
}

Tensor Graph::input(std::string name, DType dtype, Shape shape, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  return Tensor(ir_->add_input(std::move(name), Type{dtype, std::move(shape)}, ambient_loc()));
}

Tensor Graph::constant(Array value, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  if (!value.valid()) throw UserError("constant: array has no storage", ambient_loc());
  return Tensor(ir_->add_constant(std::move(value), ambient_loc()));
}

Tensor Graph::scalar(double value, DType dtype, Loc loc) { return full({}, value, dtype, loc); }

Tensor Graph::full(Shape shape, double value, DType dtype, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check_shape("full", shape);
  return Tensor(ir::full(*ir_, Type{dtype, std::move(shape)}, value));
}
Tensor Graph::zeros(Shape shape, DType dtype, Loc loc) { return full(std::move(shape), 0.0, dtype, loc); }
Tensor Graph::ones(Shape shape, DType dtype, Loc loc) { return full(std::move(shape), 1.0, dtype, loc); }

Tensor Graph::arange(double start, double stop, double step, DType dtype, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  if (step == 0) throw ShapeError("op 'arange': step must not be zero", ambient_loc());
  auto n = static_cast<std::int64_t>(std::max(0.0, std::ceil((stop - start) / step)));
  return Tensor(ir::make_op(*ir_, ir::op("arange"), {},
                            {{"start", start}, {"step", step}, {"n", n}, {"dtype", dtype}}));
}

Tensor Graph::eye(std::int64_t n, std::int64_t m, DType dtype, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  if (m < 0) m = n;
  check_shape("eye", {n, m});
  return Tensor(ir::make_op(*ir_, ir::op("eye"), {}, {{"n", n}, {"m", m}, {"dtype", dtype}}));
}

Tensor Graph::randn(Shape shape, std::uint64_t seed, DType dtype, double mean, double std, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check_shape("random_normal", shape);
  return Tensor(ir::make_op(*ir_, ir::op("random_normal"), {},
                            {{"shape", shape}, {"dtype", dtype}, {"seed", static_cast<std::int64_t>(seed)},
                             {"mean", mean}, {"std", std}}));
}

Tensor Graph::rand(Shape shape, std::uint64_t seed, DType dtype, double low, double high, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check_shape("random_uniform", shape);
  return Tensor(ir::make_op(*ir_, ir::op("random_uniform"), {},
                            {{"shape", shape}, {"dtype", dtype}, {"seed", static_cast<std::int64_t>(seed)},
                             {"low", low}, {"high", high}}));
}

}  // namespace mg
