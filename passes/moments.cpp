// The moment-propagation driver; what each op does to a mean and a variance lives in the
// registry's `moments` rules.
#include "minigrad/passes/moments.hpp"

#include <algorithm>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/printer.hpp"

namespace mg::passes {

using ir::Node;
using ir::NodeId;
using ir::Value;

namespace {
std::string describe(const ir::Graph& g, NodeId id) {
  const Node& n = g.node(id);
  if (n.kind == ir::NodeKind::input) return "input '" + n.name + "' (" + to_string(n.type) + ")";
  return "value " + ir::value_name(g, id) + " = " + n.op_name() + " (" + to_string(n.type) + ")";
}
}  // namespace

MomentResult propagate_moments(std::span<const Value> outputs, std::span<const Value> wrt,
                               std::span<const Value> means, std::span<const Value> vars) {
  const SourceLoc call = ambient_loc();
  if (outputs.empty()) throw UserError("propagate_moments: no outputs given", call);
  if (wrt.size() != means.size() || wrt.size() != vars.size())
    throw UserError("propagate_moments: " + std::to_string(wrt.size()) + " random values but " +
                        std::to_string(means.size()) + " means and " + std::to_string(vars.size()) + " variances",
                    call);
  ir::Graph& g = *outputs[0].graph;
  for (const Value& o : outputs)
    if (!o.valid() || o.graph != &g) throw UserError("propagate_moments: outputs must be values of one graph", call);
  for (std::size_t k = 0; k < wrt.size(); ++k) {
    for (const Value* v : {&wrt[k], &means[k], &vars[k]})
      if (!v->valid() || v->graph != &g)
        throw UserError("propagate_moments: random values, means and variances must come from the outputs' graph",
                        call);
    if (!is_float(wrt[k].dtype()))
      throw UserError("propagate_moments: " + describe(g, wrt[k].id) + " is not a float value", call);
    if (means[k].type() != wrt[k].type() || vars[k].type() != wrt[k].type())
      throw UserError("propagate_moments: the mean and variance of " + describe(g, wrt[k].id) + " must be " +
                          to_string(wrt[k].type()) + ", got " + to_string(means[k].type()) + " and " +
                          to_string(vars[k].type()),
                      call);
  }

  const NodeId end = static_cast<NodeId>(g.size());
  std::vector<NodeId> out_ids;
  for (const Value& o : outputs) out_ids.push_back(o.id);
  const std::vector<bool> needed = g.reachable_from(out_ids);
  // mean[id]: the node's mean (a deterministic node: itself); var[id]: invalid when
  // deterministic. Only nodes that read a random value (or are noise sources) get rules.
  std::vector<Value> mean(end), var(end);
  for (NodeId id = 0; id < end; ++id) mean[id] = g.value(id);
  std::vector<bool> given(end, false);
  for (std::size_t k = 0; k < wrt.size(); ++k) {
    if (given[wrt[k].id])
      throw UserError("propagate_moments: " + describe(g, wrt[k].id) + " is listed twice", call);
    given[wrt[k].id] = true;
    mean[wrt[k].id] = means[k];
    var[wrt[k].id] = vars[k];
  }
  MomentResult result;
  for (NodeId id = 0; id < end; ++id) {
    if (!needed[id] || given[id]) continue;
    const Node& n = g.node(id);
    if (n.kind != ir::NodeKind::op) continue;
    bool random = n.op->traits.random;
    for (NodeId in : n.inputs) random = random || var[in].valid();
    if (!random) continue;
    if (!is_float(n.type.dtype))
      throw UserError("propagate_moments: " + describe(g, id) +
                          " is not a float value but depends on a random one (a comparison, argmax or cast of a "
                          "random value has no mean and variance of its type)",
                      n.loc);
    if (!n.op->moments)
      throw UserError("propagate_moments: op '" + n.op->name + "' has no moment rule (" + describe(g, id) +
                          "); it lies on a path from a random value to an output",
                      n.loc);
    std::vector<Value> ms, vs;
    for (NodeId in : n.inputs) {
      ms.push_back(mean[in]);
      vs.push_back(var[in]);
    }
    ir::Moments m;
    {
      LocScope at(n.loc, true);  // moment nodes carry the forward node's user line
      m = n.op->moments(ir::MomentArgs{g, n, ms, vs});
    }
    MG_ASSERT(m.mean.valid() && m.mean.type() == n.type && (!m.var.valid() || m.var.type() == n.type),
              "moment rule of '" + n.op->name + "' gave a mean or variance of the wrong type");
    mean[id] = m.mean;
    var[id] = m.var.valid() ? m.var : ir::zeros_like(m.mean);
    result.report.push_back({id, n.op->name, m.kind, n.loc});
  }
  for (const Value& o : outputs) {
    result.mean.push_back(mean[o.id]);
    if (var[o.id].valid()) {
      result.var.push_back(var[o.id]);
    } else {
      LocScope at(call, true);
      result.var.push_back(ir::zeros_like(o));
    }
  }
  return result;
}

}  // namespace mg::passes
