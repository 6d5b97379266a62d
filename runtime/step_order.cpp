// Update nodes run as soon as their gradient exists; see step_order.hpp.
#include "minigrad/runtime/step_order.hpp"

namespace mg::rt {

std::vector<ir::NodeId> step_order(const ir::Graph& g, const std::vector<bool>& live) {
  const std::size_t n = g.size();
  const auto is_op = [&](ir::NodeId id) { return live[id] && g.node(id).kind == ir::NodeKind::op; };
  const auto is_update = [&](ir::NodeId id) { return g.node(id).role == ir::Role::update; };
  std::vector<ir::NodeId> order;
  bool any_update = false;
  for (ir::NodeId id = 0; id < n; ++id) any_update = any_update || (is_op(id) && is_update(id));
  if (!any_update) {
    for (ir::NodeId id = 0; id < n; ++id)
      if (is_op(id)) order.push_back(id);
    return order;
  }

  // Per update node, its anchor: the last (highest id) non-update op node it depends on,
  // through other update nodes; kNoNode when it reads only inputs, constants and such
  // unanchored updates. after[a]: the update nodes anchored at a, in id order.
  std::vector<ir::NodeId> anchor(n, ir::kNoNode);
  std::vector<std::vector<ir::NodeId>> after(n);
  for (ir::NodeId id = 0; id < n; ++id) {
    if (!is_op(id) || !is_update(id)) continue;
    ir::NodeId a = ir::kNoNode;
    for (ir::NodeId in : g.node(id).inputs) {
      if (g.node(in).kind != ir::NodeKind::op) continue;
      const ir::NodeId c = is_update(in) ? anchor[in] : in;
      if (c != ir::kNoNode && (a == ir::kNoNode || c > a)) a = c;
    }
    anchor[id] = a;
    if (a != ir::kNoNode) after[a].push_back(id);
  }

  // Emits id after the unanchored update nodes it reads (a short chain over inputs only).
  std::vector<bool> done(n, false);
  std::vector<std::pair<ir::NodeId, std::size_t>> stack;
  const auto emit = [&](ir::NodeId root) {
    stack.assign(1, {root, 0});
    while (!stack.empty()) {
      auto& [id, k] = stack.back();
      const ir::Node& nd = g.node(id);
      if (k < nd.inputs.size()) {
        const ir::NodeId in = nd.inputs[k++];
        if (is_op(in) && is_update(in) && anchor[in] == ir::kNoNode && !done[in]) stack.push_back({in, 0});
        continue;
      }
      if (!done[id]) {
        done[id] = true;
        order.push_back(id);
      }
      stack.pop_back();
    }
  };
  // A node's operands precede it: a non-update operand has a smaller id; an anchored
  // update operand was emitted after its anchor, which precedes (or is) ours.
  for (ir::NodeId id = 0; id < n; ++id) {
    if (!is_op(id) || is_update(id)) continue;
    emit(id);
    for (ir::NodeId u : after[id]) emit(u);
  }
  for (ir::NodeId id = 0; id < n; ++id)  // unanchored updates nothing reads (step + 1, say)
    if (is_op(id) && !done[id]) emit(id);
  return order;
}

}  // namespace mg::rt
