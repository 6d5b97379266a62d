// The reverse-mode driver; the derivative knowledge lives in the registry's VJP rules.
#include "minigrad/passes/grad.hpp"

#include <memory>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/printer.hpp"

namespace mg::passes {

using ir::Node;
using ir::NodeId;
using ir::Value;

namespace {

std::string describe(const Value& v) { return ir::describe_value(*v.graph, v.id); }

// The role of a backward pass's nodes: second_order when what it differentiates reads
// adjoint nodes (grad of grad), so pictures of Hessians and PINN losses separate the passes.
ir::Role backward_role(const std::vector<bool>& needed, const ir::Graph& g) {
  for (NodeId id = 0; id < needed.size(); ++id)
    if (needed[id] && (g.node(id).role == ir::Role::adjoint || g.node(id).role == ir::Role::second_order))
      return ir::Role::second_order;
  return ir::Role::adjoint;
}

}  // namespace

std::vector<Value> vjp(std::span<const Value> outputs, std::span<const Value> cotangents,
                       std::span<const Value> wrt) {
  SourceLoc call = ambient_loc();
  if (outputs.empty()) throw GradError("vjp: no outputs given", call);
  if (outputs.size() != cotangents.size())
    throw GradError("vjp: " + std::to_string(outputs.size()) + " outputs but " +
                        std::to_string(cotangents.size()) + " cotangents",
                    call);
  ir::Graph& g = *outputs[0].graph;
  for (std::size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i].graph != &g || cotangents[i].graph != &g)
      throw GradError("vjp: outputs and cotangents must come from one graph", call);
    if (cotangents[i].type() != outputs[i].type())
      throw GradError("vjp: cotangent " + to_string(cotangents[i].type()) + " does not match output " +
                          describe(outputs[i]),
                      call);
    if (!is_float(outputs[i].dtype()))
      throw GradError("cannot differentiate " + describe(outputs[i]) + ": it is not a float value", call);
  }
  for (const Value& w : wrt) {
    if (w.graph != &g) throw GradError("grad: a wrt value comes from another graph", call);
    if (!is_float(w.dtype()))
      throw GradError("cannot differentiate with respect to " + describe(w) +
                          ": gradients exist only for f32/f64 values",
                      call);
  }

  const NodeId end = static_cast<NodeId>(g.size());
  // Nodes that depend on some wrt through float values (gradients stop at ints/bools).
  std::vector<bool> depends(end, false);
  for (const Value& w : wrt) depends[w.id] = true;
  for (NodeId id = 0; id < end; ++id) {
    const Node& n = g.node(id);
    if (depends[id] || !is_float(n.type.dtype)) continue;
    for (NodeId in : n.inputs) depends[id] = depends[id] || depends[in];
  }
  std::vector<NodeId> out_ids;
  for (const Value& o : outputs) out_ids.push_back(o.id);
  std::vector<bool> needed = g.reachable_from(out_ids);

  std::vector<Value> cot(end);
  ir::RoleScope role(g, backward_role(needed, g));
  // Ops that own regions (scan) differentiate their bodies with this same driver.
  const ir::RegionVjp region_vjp = [](std::span<const Value> o, std::span<const Value> c, std::span<const Value> w) {
    return vjp(o, c, w);
  };
  auto accumulate = [&](NodeId id, Value c) {
    if (!cot[id].valid()) {
      cot[id] = c;
    } else {
      LocScope at(g.node(id).loc, true);
      cot[id] = ir::add(cot[id], c);
    }
  };
  for (std::size_t i = 0; i < outputs.size(); ++i) accumulate(outputs[i].id, cotangents[i]);

  for (NodeId id = end; id-- > 0;) {
    if (!depends[id] || !needed[id] || !cot[id].valid()) continue;
    const Node& n = g.node(id);
    if (n.kind != ir::NodeKind::op) continue;
    bool any_input = false;
    for (NodeId in : n.inputs) any_input = any_input || depends[in];
    if (!any_input) continue;
    if (!n.op->vjp)
      throw GradError("cannot differentiate through op '" + n.op->name + "' (" +
                          (n.op->not_differentiable.empty() ? "no VJP rule" : n.op->not_differentiable) +
                          ") at " + describe(g.value(id)),
                      n.loc);
    std::vector<Value> ins;
    for (NodeId in : n.inputs) ins.push_back(g.value(in));
    std::vector<Value> gs;
    {
      LocScope at(n.loc, true);  // adjoint nodes carry the forward node's user line
      std::unique_ptr<bool[]> wants(new bool[n.inputs.size()]);
      for (std::size_t i = 0; i < n.inputs.size(); ++i) wants[i] = depends[n.inputs[i]];
      gs = n.op->vjp(ir::VjpArgs{n, g.value(id), ins, cot[id], &region_vjp, {wants.get(), n.inputs.size()}});
    }
    MG_ASSERT(gs.size() == n.inputs.size(), "VJP of '" + n.op->name + "' returned the wrong arity");
    for (std::size_t i = 0; i < gs.size(); ++i) {
      NodeId in = n.inputs[i];
      if (!depends[in] || !gs[i].valid()) continue;
      MG_ASSERT(gs[i].type() == g.node(in).type,
                "VJP of '" + n.op->name + "' gave " + to_string(gs[i].type()) + " for an input of type " +
                    to_string(g.node(in).type));
      accumulate(in, gs[i]);
    }
  }

  std::vector<Value> result;
  for (const Value& w : wrt) {
    if (cot[w.id].valid()) {
      result.push_back(cot[w.id]);
    } else {
      LocScope at(call, true);
      result.push_back(ir::zeros_like(w));
    }
  }
  return result;
}

std::vector<Value> grad(Value output, std::span<const Value> wrt) {
  if (!output.valid()) throw GradError("grad: empty output handle", ambient_loc());
  if (output.rank() != 0)
    throw GradError("grad needs a scalar output, got " + describe(output) +
                        "; reduce it (e.g. .sum()) or use vjp with a cotangent",
                    ambient_loc());
  // The seed belongs to the backward pass.
  ir::RoleScope role(*output.graph, backward_role(output.graph->reachable_from(std::span<const NodeId>(&output.id, 1)), *output.graph));
  Value one = ir::full_like(output, 1.0);
  return vjp(std::span<const Value>(&output, 1), std::span<const Value>(&one, 1), wrt);
}

}  // namespace mg::passes
