// Which view nodes consumers read in place; see view_plan.hpp.
#include "minigrad/runtime/view_plan.hpp"

#include <utility>

#include "minigrad/ir/op_registry.hpp"

namespace mg::rt {

namespace {

// The view reads its operand's elements in the node's row-major order.
bool row_major(const ir::CView& v, const Shape& shape) {
  if (v.contiguous()) return true;
  if (v.offset != 0) return false;
  std::int64_t stride = 1;
  for (std::size_t k = shape.size(); k-- > 0;) {
    if (shape[k] != 1 && v.strides[k] != stride) return false;
    stride *= shape[k];
  }
  return true;
}

}  // namespace

std::vector<ir::NodeId> plan_aliases(const ir::Graph& g, const std::vector<ir::NodeId>& roots,
                                     const std::vector<bool>& excluded) {
  const std::size_t n = g.size();
  std::vector<ir::NodeId> alias(n, ir::kNoNode);
  const std::vector<bool> live = g.reachable_from(roots);
  std::vector<bool> root(n, false);
  for (ir::NodeId r : roots) root[r] = true;
  for (ir::NodeId id = 0; id < n; ++id) {
    const ir::Node& nd = g.node(id);
    if (!live[id] || root[id] || (!excluded.empty() && excluded[id]) || nd.kind != ir::NodeKind::op ||
        nd.inputs.size() != 1 || !nd.regions.empty())
      continue;
    const ir::Node& src = g.node(nd.inputs[0]);
    if (src.type.dtype != nd.type.dtype || src.type.numel() != nd.type.numel()) continue;
    bool same = nd.op->traits.reinterprets;
    if (!same && nd.op->emit_c.view) {
      const std::vector<Type> in{src.type};
      const auto v = nd.op->emit_c.view(nd, in);
      same = v && row_major(*v, nd.type.shape);
    }
    if (same) alias[id] = alias[src.id] != ir::kNoNode ? alias[src.id] : src.id;
  }
  return alias;
}

ViewPlan plan_views(const ir::Graph& g, const std::vector<ir::NodeId>& roots, const std::vector<ir::NodeId>& aliases) {
  const std::size_t n = g.size();
  ViewPlan p{std::vector<bool>(n, false), std::vector<std::vector<ir::CView>>(n)};
  const std::vector<bool> live = g.reachable_from(roots);
  std::vector<bool> root(n, false);
  for (ir::NodeId r : roots) root[r] = true;
  std::vector<std::vector<std::pair<ir::NodeId, std::size_t>>> readers(n);  // (consumer, operand)
  for (ir::NodeId id = 0; id < n; ++id)
    if (live[id] && g.node(id).kind == ir::NodeKind::op)
      for (std::size_t k = 0; k < g.node(id).inputs.size(); ++k) readers[g.node(id).inputs[k]].emplace_back(id, k);

  const auto input_types = [&](const ir::Node& nd) {
    std::vector<Type> t;
    for (ir::NodeId in : nd.inputs) t.push_back(g.node(in).type);
    return t;
  };
  for (ir::NodeId id = 0; id < n; ++id) {
    const ir::Node& nd = g.node(id);
    if (!live[id] || root[id] || readers[id].empty() || nd.kind != ir::NodeKind::op || !nd.op->emit_c.view ||
        nd.inputs.size() != 1 || !nd.regions.empty() || p.viewed[nd.inputs[0]] ||
        (!aliases.empty() && aliases[id] != ir::kNoNode))
      continue;
    const auto view = nd.op->emit_c.view(nd, input_types(nd));
    if (!view || view->contiguous()) continue;
    bool all_read_it = true;
    for (auto [c, k] : readers[id]) {
      const ir::Node& consumer = g.node(c);
      all_read_it = all_read_it && consumer.op->kernel_reads_view &&
                    consumer.op->kernel_reads_view(consumer, k, *view, input_types(consumer));
    }
    if (!all_read_it) continue;
    p.viewed[id] = true;
    for (auto [c, k] : readers[id]) {
      p.in_views[c].resize(g.node(c).inputs.size());
      p.in_views[c][k] = *view;
    }
  }
  return p;
}

}  // namespace mg::rt
