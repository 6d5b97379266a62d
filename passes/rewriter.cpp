// The shared old -> new graph walk; see rewriter.hpp.
#include "minigrad/passes/rewriter.hpp"

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/region.hpp"

namespace mg::passes {

using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::Value;

namespace {

Value append_copy(Graph& dst, const Node& old, std::span<const Value> inputs,
                  std::vector<std::unique_ptr<Graph>> regions) {
  Node n = ir::copy_node_header(old);
  n.regions = std::move(regions);
  Value v = dst.append(std::move(n), inputs);
  dst.mutable_node(v.id).role = old.role;
  return v;
}

}  // namespace

Value copy_node(Graph& dst, const Node& old, std::span<const Value> inputs) {
  std::vector<std::unique_ptr<Graph>> regions;
  for (const auto& r : old.regions) regions.push_back(clone_graph(*r));
  return append_copy(dst, old, inputs, std::move(regions));
}

std::unique_ptr<Graph> clone_graph(const Graph& g) { return GraphRewriter(nullptr).run(g); }

Value GraphRewriter::copy(const Node& old, std::span<const Value> inputs) {
  std::vector<std::unique_ptr<Graph>> regions;
  for (const auto& r : old.regions) regions.push_back(run(*r));
  return append_copy(*dst_, old, inputs, std::move(regions));
}

std::unique_ptr<Graph> GraphRewriter::run(const Graph& g) {
  auto out = std::make_unique<Graph>();
  // Regions recurse into run(): keep the enclosing walk's state.
  const Graph* saved_src = src_;
  Graph* saved_dst = dst_;
  std::vector<NodeId> saved_memo = std::move(memo_);
  src_ = &g;
  dst_ = out.get();
  memo_.assign(g.size(), ir::kNoNode);
  std::vector<bool> live;
  if (depth_ == 0 && !keep_.empty()) live = keep_;
  else if (only_live_) live = g.reachable_from(g.outputs);
  // Inputs are always kept; marking them here lets the walk skip a dead node by its bit
  // alone, without reading the node (most of a big graph can be dead: memory traffic).
  if (!live.empty())
    for (NodeId in : g.inputs()) live[in] = true;
  ++depth_;
  std::vector<Value> ins;
  for (NodeId id = 0; id < g.size(); ++id) {
    if (!live.empty() && !live[id]) continue;
    const Node& n = g.node(id);
    if (n.kind == ir::NodeKind::input) {
      memo_[id] = out->add_input(n.name, n.type, n.loc).id;
      out->mutable_node(memo_[id]).role = n.role;
      continue;
    }
    ins.clear();
    for (NodeId in : n.inputs) ins.push_back(memo_[in] == ir::kNoNode ? Value{} : Value{out.get(), memo_[in]});
    Value r;
    if (fn_) r = fn_(*this, n, ins);
    if (!r.valid()) {
      r = copy(n, ins);
    } else {
      MG_ASSERT(r.graph == out.get() && r.type() == n.type,
                "rewriter: replacement of " + n.op_name() + " has another graph or type");
    }
    memo_[id] = r.id;
  }
  for (NodeId o : g.outputs) out->outputs.push_back(memo_.at(o));
  out->output_names = g.output_names;
  --depth_;
  src_ = saved_src;
  dst_ = saved_dst;
  memo_ = std::move(saved_memo);
  return out;
}

}  // namespace mg::passes
