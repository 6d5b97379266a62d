// The forward-mode driver; the derivative knowledge lives in the registry's JVP rules.
#include "minigrad/passes/jvp.hpp"

#include <algorithm>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/passes/inline_node.hpp"

namespace mg::passes {

using ir::Node;
using ir::NodeId;
using ir::Value;

namespace {

// One forward walk over `src`'s nodes [begin, end). `prim[id]` is node id's value in `dst`
// (for src == dst, the node itself); `tan[id]` its tangent (invalid: zero). inline_all
// copies every node of `src` into `dst` (a region body); otherwise nodes are reused.
struct Walk {
  const ir::Graph& src;
  ir::Graph& dst;
  std::vector<Value> prim, tan;
  bool inline_all;

  Walk(const ir::Graph& s, ir::Graph& d, bool inl) : src(s), dst(d), prim(s.size()), tan(s.size()), inline_all(inl) {}

  void node(NodeId id) {
    const Node& n = src.node(id);
    if (n.kind == ir::NodeKind::input) return;  // preset by the caller (or independent)
    std::vector<Value> ins, ts;
    bool any = false;
    for (NodeId in : n.inputs) {
      ins.push_back(prim[in]);
      ts.push_back(tan[in]);
      any = any || tan[in].valid();
    }
    if (inline_all) prim[id] = detail::inline_node(n, dst, ins);
    if (!any || n.kind != ir::NodeKind::op || !is_float(n.type.dtype)) return;
    if (!n.op->jvp)
      throw GradError("cannot differentiate (forward mode, jvp) through op '" + n.op->name + "' (" +
                          (!n.op->no_jvp_rule.empty()          ? "no JVP rule: " + n.op->no_jvp_rule
                           : !n.op->not_differentiable.empty() ? n.op->not_differentiable
                                                               : std::string("no JVP rule")) +
                          ") at " +
                          ir::describe_value(src, id),
                      n.loc);
    ir::JvpRegionFn region = [this](const ir::Graph& body, std::span<const Value> args, std::span<const Value> tangents,
                                    std::vector<Value>* primals) { return inline_region(body, args, tangents, primals); };
    const Node& here = prim[id].node();
    Value t;
    {
      LocScope at(n.loc, true);  // tangent nodes carry the forward node's user line
      t = n.op->jvp(ir::JvpArgs{here, prim[id], ins, ts, &region});
    }
    MG_ASSERT(!t.valid() || t.type() == n.type,
              "JVP of '" + n.op->name + "' gave " + to_string(t.type()) + " for a value of type " + to_string(n.type));
    tan[id] = t;
  }

  // Into the graph of `args`: the enclosing one (fused) or a loop body being built (scan).
  std::vector<Value> inline_region(const ir::Graph& body, std::span<const Value> args, std::span<const Value> tangents,
                                   std::vector<Value>* primals) {
    Walk w(body, args.empty() ? dst : *args[0].graph, true);
    MG_ASSERT(args.size() == body.inputs().size(), "jvp: region arity");
    for (std::size_t i = 0; i < args.size(); ++i) {
      w.prim[body.inputs()[i]] = args[i];
      w.tan[body.inputs()[i]] = tangents[i];
    }
    for (NodeId id = 0; id < body.size(); ++id) w.node(id);
    std::vector<Value> out;
    for (NodeId o : body.outputs) out.push_back(w.tan[o]);
    if (primals) {
      primals->clear();
      for (NodeId o : body.outputs) primals->push_back(w.prim[o]);
    }
    return out;
  }
};

}  // namespace

std::vector<Value> jvp(std::span<const Value> outputs, std::span<const Value> wrt, std::span<const Value> tangents) {
  SourceLoc call = ambient_loc();
  if (outputs.empty()) throw GradError("jvp: no outputs given", call);
  if (wrt.size() != tangents.size())
    throw GradError("jvp: " + std::to_string(wrt.size()) + " wrt values but " + std::to_string(tangents.size()) +
                        " tangents",
                    call);
  ir::Graph& g = *outputs[0].graph;
  for (const Value& o : outputs) {
    if (!o.valid() || o.graph != &g) throw GradError("jvp: outputs must be values of one graph", call);
    if (!is_float(o.dtype()))
      throw GradError("jvp: cannot differentiate " + ir::describe_value(g, o.id) + ": it is not a float value", call);
  }
  for (std::size_t k = 0; k < wrt.size(); ++k) {
    if (!wrt[k].valid() || wrt[k].graph != &g || !tangents[k].valid() || tangents[k].graph != &g)
      throw GradError("jvp: wrt values and tangents must come from the outputs' graph", call);
    if (!is_float(wrt[k].dtype()))
      throw GradError("jvp: cannot differentiate with respect to " + ir::describe_value(g, wrt[k].id) +
                          ": derivatives exist only for f32/f64 values",
                      call);
    if (tangents[k].type() != wrt[k].type())
      throw GradError("jvp: tangent " + std::to_string(k) + " is " + to_string(tangents[k].type()) + ", but wrt " +
                          ir::describe_value(g, wrt[k].id) + " needs one of its type",
                      call);
  }

  const NodeId end = static_cast<NodeId>(g.size());
  std::vector<NodeId> out_ids;
  for (const Value& o : outputs) out_ids.push_back(o.id);
  const std::vector<bool> needed = g.reachable_from(out_ids);
  Walk w(g, g, false);
  std::vector<bool> given(end, false);
  for (std::size_t k = 0; k < wrt.size(); ++k) {
    given[wrt[k].id] = true;
    Value& t = w.tan[wrt[k].id];  // a value listed twice: the tangents add
    t = t.valid() ? ir::add(t, tangents[k]) : tangents[k];
  }
  NodeId begin = end;
  for (const Value& v : wrt) begin = std::min(begin, v.id);
  for (NodeId id = 0; id < end; ++id) w.prim[id] = g.value(id);
  for (NodeId id = begin; id < end; ++id)
    if (needed[id] && !given[id]) w.node(id);

  std::vector<Value> result;
  for (const Value& o : outputs) {
    if (w.tan[o.id].valid()) {
      result.push_back(w.tan[o.id]);
    } else {
      LocScope at(call, true);
      result.push_back(ir::zeros_like(o));
    }
  }
  return result;
}

}  // namespace mg::passes
