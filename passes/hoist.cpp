// Loop-invariant code motion; see hoist.hpp.
#include "minigrad/passes/hoist.hpp"

#include <algorithm>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/region.hpp"
#include "minigrad/passes/rewriter.hpp"

namespace mg::passes {

using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::Value;

namespace {

// Per region: which nodes are invariant, and the ones to move (read by a variant node or
// returned).
struct Invariants {
  std::vector<bool> invariant;
  std::vector<NodeId> moved;  // ascending
};

Invariants find(const Graph& body, const std::vector<bool>& inv_operand) {
  Invariants r;
  r.invariant.assign(body.size(), false);
  const auto& params = body.inputs();
  for (std::size_t i = 0; i < params.size(); ++i) r.invariant[params[i]] = i < inv_operand.size() && inv_operand[i];
  std::vector<bool> is_op(body.size(), false);
  for (NodeId id = 0; id < body.size(); ++id) {
    const Node& n = body.node(id);
    if (n.kind == ir::NodeKind::constant) r.invariant[id] = true;
    if (n.kind != ir::NodeKind::op || n.op->traits.random || !n.regions.empty()) continue;
    bool all = true, any_param = false;
    for (NodeId in : n.inputs) {
      all = all && r.invariant[in];
      any_param = any_param || body.node(in).kind != ir::NodeKind::constant;
    }
    // Ops of constants alone are fold's business (and zero-input ops: cheap to keep).
    r.invariant[id] = is_op[id] = all && any_param;
  }
  std::vector<bool> moved(body.size(), false);
  for (NodeId id = 0; id < body.size(); ++id) {
    const Node& n = body.node(id);
    if (r.invariant[id]) continue;
    for (NodeId in : n.inputs) moved[in] = moved[in] || is_op[in];
  }
  for (NodeId o : body.outputs) moved[o] = moved[o] || is_op[o];
  for (NodeId id = 0; id < body.size(); ++id)
    if (moved[id]) r.moved.push_back(id);
  return r;
}

// Copies the invariant cone of `id` into `dst` (parameters -> the node's operands).
Value outside(const Graph& body, NodeId id, Graph& dst, std::span<const Value> operands, std::vector<Value>& memo) {
  if (memo[id].valid()) return memo[id];
  const Node& n = body.node(id);
  if (n.kind == ir::NodeKind::input) {
    const auto& params = body.inputs();
    return memo[id] = operands[static_cast<std::size_t>(std::find(params.begin(), params.end(), id) - params.begin())];
  }
  std::vector<Value> ins;
  for (NodeId in : n.inputs) ins.push_back(outside(body, in, dst, operands, memo));
  return memo[id] = copy_node(dst, n, ins);
}

// The body with `extra` new parameters at `at`, and each moved node read from one.
std::unique_ptr<Graph> rebuilt(const Graph& body, std::size_t at, const std::vector<Type>& extra,
                               const std::vector<NodeId>& moved, std::size_t first_extra) {
  auto out = std::make_unique<Graph>();
  std::vector<NodeId> map(body.size(), ir::kNoNode);
  const auto& params = body.inputs();
  std::vector<Value> fresh;
  for (std::size_t i = 0; i <= params.size(); ++i) {
    if (i == at)
      for (std::size_t e = 0; e < extra.size(); ++e) fresh.push_back(out->add_input("hoisted" + std::to_string(e), extra[e]));
    if (i < params.size()) {
      const Node& p = body.node(params[i]);
      map[params[i]] = out->add_input(p.name.rfind("hoisted", 0) == 0 ? p.name + "_" : p.name, p.type, p.loc).id;
    }
  }
  for (std::size_t m = 0; m < moved.size(); ++m) map[moved[m]] = fresh[first_extra + m].id;
  const std::vector<bool> live = [&] {
    std::vector<NodeId> roots;
    for (NodeId o : body.outputs) roots.push_back(o);
    std::vector<bool> l(body.size(), false);
    for (NodeId r : roots) l[r] = true;
    for (std::size_t i = body.size(); i-- > 0;)
      if (l[i] && map[i] == ir::kNoNode)
        for (NodeId in : body.node(static_cast<NodeId>(i)).inputs) l[in] = true;
    return l;
  }();
  std::vector<Value> ins;
  for (NodeId id = 0; id < body.size(); ++id) {
    const Node& n = body.node(id);
    if (n.kind == ir::NodeKind::input || map[id] != ir::kNoNode || !live[id]) continue;
    ins.clear();
    for (NodeId in : n.inputs) ins.push_back({out.get(), map[in]});
    map[id] = copy_node(*out, n, ins).id;
  }
  for (NodeId o : body.outputs) out->outputs.push_back(map[o]);
  out->output_names = body.output_names;
  return out;
}

Value hoist_node(Graph& dst, const Node& n, std::span<const Value> ins) {
  std::vector<std::unique_ptr<Graph>> bodies;  // nested loops first
  for (const auto& r : n.regions) bodies.push_back(hoist_loop_invariants(*r));
  const std::vector<bool> inv = n.op->invariant_operands(n);
  std::vector<Value> extra;  // new operands, all regions' in order
  std::vector<std::size_t> first(bodies.size());
  std::vector<Invariants> found;
  for (std::size_t r = 0; r < bodies.size(); ++r) {
    found.push_back(find(*bodies[r], inv));
    first[r] = extra.size();
    std::vector<Value> memo(bodies[r]->size());
    for (NodeId m : found[r].moved) extra.push_back(outside(*bodies[r], m, dst, ins, memo));
  }
  Node copy;
  copy.attrs = n.attrs;
  std::vector<Value> operands(ins.begin(), ins.end());
  std::size_t at = operands.size();
  if (!extra.empty()) {
    auto [pos, attrs] = n.op->add_invariants(n, extra.size());
    at = pos;
    copy.attrs = std::move(attrs);
    operands.insert(operands.begin() + static_cast<std::ptrdiff_t>(at), extra.begin(), extra.end());
    std::vector<Type> types;
    for (const Value& v : extra) types.push_back(v.type());
    for (std::size_t r = 0; r < bodies.size(); ++r) bodies[r] = rebuilt(*bodies[r], at, types, found[r].moved, first[r]);
  }
  Node node;
  node.kind = ir::NodeKind::op;
  node.op = n.op;
  std::vector<NodeId> ids;
  for (const Value& v : operands) ids.push_back(v.id);
  node.attrs = std::move(copy.attrs);
  node.type = n.type;
  node.loc = n.loc;
  node.regions = std::move(bodies);
  Value v = dst.append(std::move(node), ids);
  dst.mutable_node(v.id).role = n.role;
  return v;
}

}  // namespace

std::unique_ptr<Graph> hoist_loop_invariants(const Graph& g) {
  GraphRewriter rw([](GraphRewriter& r, const Node& n, std::span<const Value> ins) -> Value {
    if (!r.at_top() || n.kind != ir::NodeKind::op || !n.op->invariant_operands || n.regions.empty()) return {};
    return hoist_node(r.dst(), n, ins);
  });
  return rw.run(g);
}

}  // namespace mg::passes
