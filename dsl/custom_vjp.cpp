// Tracing an author's backward into a custom_vjp node; see custom_vjp.hpp.
#include "minigrad/dsl/custom_vjp.hpp"

#include <memory>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/region.hpp"

namespace mg {

namespace {

// The float values of `g` that the nodes fwd built (ids from `start` on) read although
// they are not among xs: values made before fwd ran, and values of enclosing graphs (new
// region inputs). Their influence on y is exactly what the author's backward does not
// account for.
std::vector<ir::Value> values_read_besides(ir::Graph& g, ir::NodeId start, const std::vector<ir::Value>& xs,
                                           ir::Value y) {
  std::vector<bool> seen(g.size(), false);
  for (const ir::Value& x : xs) seen[x.id] = true;
  std::vector<ir::Value> out;
  auto note = [&](ir::NodeId id) {
    if (seen[id]) return;
    seen[id] = true;
    if (is_float(g.node(id).type.dtype)) out.push_back(g.value(id));
  };
  if (y.id < start) note(y.id);  // fwd returned an outside value as it is
  for (ir::NodeId id = start; id < g.size(); ++id) {
    const ir::Node& n = g.node(id);
    if (n.kind == ir::NodeKind::input) note(id);
    for (ir::NodeId in : n.inputs)
      if (in < start) note(in);
  }
  return out;
}

}  // namespace

Tensor CustomVjp::operator()(const Tensors& xs, Loc loc) const {
  const SourceLoc at_loc = SourceLoc::from(loc);
  LocScope at(at_loc);
  std::vector<ir::Value> xv;
  for (const Tensor& x : xs) {
    if (!x.valid()) throw UserError("custom_vjp: an input is an empty Tensor handle", at_loc);
    xv.push_back(x.value());
  }
  if (xv.empty()) throw UserError("custom_vjp: needs at least one input", at_loc);
  ir::Graph& g = *ir::capture_target(xv);
  const ir::NodeId fwd_start = static_cast<ir::NodeId>(g.size());
  std::pair<Tensor, Tensors> f;
  {
    LocScope own_lines(SourceLoc{}, true);  // fwd's calls stamp their own lines
    f = fwd_(xs);
  }
  std::vector<ir::Value> res;
  if (!f.first.valid()) throw UserError("custom_vjp: the forward returns an empty Tensor handle", at_loc);
  const ir::Value y = ir::capture(f.first.value(), g);
  for (const Tensor& r : f.second) {
    if (!r.valid()) throw UserError("custom_vjp: a residual is an empty Tensor handle", at_loc);
    res.push_back(ir::capture(r.value(), g));
  }
  const std::vector<ir::Value> fwd_reads = values_read_besides(g, fwd_start, xv, y);

  auto body = std::make_shared<ir::Graph>();
  body->set_owner(body);
  Tensors rt, xt;
  std::vector<ir::NodeId> order;
  for (std::size_t i = 0; i < res.size(); ++i) {
    rt.emplace_back(body->add_input("r" + std::to_string(i), res[i].type(), at_loc));
    order.push_back(rt.back().value().id);
  }
  for (std::size_t j = 0; j < xs.size(); ++j) xt.emplace_back(body->add_input("x" + std::to_string(j), xs[j].type(), at_loc));
  const Tensor dy(body->add_input("dy", y.type(), at_loc));
  Tensors dx;
  std::vector<ir::Value> captured;
  {
    ir::CaptureScope capture(*body, g);
    {
      LocScope own_lines(SourceLoc{}, true);
      dx = bwd_(rt, xt, dy);
    }
    if (dx.size() != xs.size())
      throw UserError("custom_vjp: the backward returns " + std::to_string(dx.size()) + " gradients for " +
                          std::to_string(xs.size()) + " inputs",
                      at_loc);
    for (std::size_t j = 0; j < dx.size(); ++j) {
      if (!dx[j].valid()) throw UserError("custom_vjp: the backward returns an empty Tensor handle", at_loc);
      dx[j] = Tensor(ir::capture(dx[j].value(), *body));
      if (dx[j].type() != xs[j].type())
        throw ShapeError("custom_vjp: the backward returns " + to_string(dx[j].type()) + " for input " +
                             std::to_string(j) + " of type " + to_string(xs[j].type()),
                         at_loc);
    }
    captured = capture.captured();
    order.insert(order.end(), capture.captured_inputs().begin(), capture.captured_inputs().end());
  }
  // What fwd read besides xs rides along as residuals the backward ignores, so that the
  // grad pass sees them and can refuse to drop their gradient (ir/ops/custom_vjp.cpp).
  for (std::size_t k = 0; k < fwd_reads.size(); ++k)
    order.push_back(body->add_input("f" + std::to_string(k), fwd_reads[k].type(), at_loc).id);
  for (const Tensor& t : xt) order.push_back(t.value().id);
  order.push_back(dy.value().id);
  for (const Tensor& t : dx) body->outputs.push_back(t.value().id);

  std::vector<ir::Value> in{y};
  in.insert(in.end(), res.begin(), res.end());
  in.insert(in.end(), captured.begin(), captured.end());
  in.insert(in.end(), fwd_reads.begin(), fwd_reads.end());
  in.insert(in.end(), xv.begin(), xv.end());
  const ir::OpDef& def = ir::op("custom_vjp");
  const auto nres = static_cast<std::int64_t>(res.size() + captured.size() + fwd_reads.size());
  const ir::Value v = ir::make_op(g, def, in,
                                  {{"num_residuals", nres}, {"fwd_reads", static_cast<std::int64_t>(fwd_reads.size())}});
  g.mutable_node(v.id).regions.push_back(ir::clone_region(*body, order));
  std::vector<Type> types;
  for (const ir::Value& x : in) types.push_back(x.type());
  try {
    def.check_regions(g.node(v.id), types);
  } catch (const ir::TypeRuleError& e) {
    throw ShapeError("op 'custom_vjp': " + e.message, at_loc);
  }
  return Tensor(v);
}

}  // namespace mg
