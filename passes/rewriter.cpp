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
  // Regions recurse into run(): keep the enclosing walk's graphs; its frame stays below.
  const Graph* saved_src = src_;
  Graph* saved_dst = dst_;
  src_ = &g;
  dst_ = out.get();
  if (frames_.size() == static_cast<std::size_t>(depth_)) frames_.push_back(std::make_unique<Frame>());
  ++depth_;
  Frame& f = frame();
  f.memo.assign(g.size(), ir::kNoNode);
  std::vector<bool>& live = f.live;
  live.clear();
  if (depth_ == 1 && !keep_.empty()) {
    live = keep_;
  } else if (only_live_) {
    // g.reachable_from(g.outputs), into the reused bits.
    live.assign(g.size(), false);
    for (NodeId r : g.outputs) live.at(r) = true;
    for (std::size_t i = g.size(); i-- > 0;)
      if (live[i])
        for (NodeId in : g.node(static_cast<NodeId>(i)).inputs) live[in] = true;
  }
  // Inputs are always kept; marking them here lets the walk skip a dead node by its bit
  // alone, without reading the node (most of a big graph can be dead: memory traffic).
  if (!live.empty())
    for (NodeId in : g.inputs()) live[in] = true;
  for (NodeId id = 0; id < g.size(); ++id) {
    if (!live.empty() && !live[id]) continue;
    const Node& n = g.node(id);
    if (n.kind == ir::NodeKind::input) {
      f.memo[id] = out->add_input(n.name, n.type, n.loc).id;
      out->mutable_node(f.memo[id]).role = n.role;
      continue;
    }
    std::vector<Value>& ins = f.ins;
    ins.clear();
    for (NodeId in : n.inputs) ins.push_back(f.memo[in] == ir::kNoNode ? Value{} : Value{out.get(), f.memo[in]});
    Value r;
    if (fn_) r = fn_(*this, n, ins);
    if (!r.valid()) {
      r = copy(n, f.ins);  // (f.ins, not a copy: copy() recurses into deeper frames only)
    } else {
      MG_ASSERT(r.graph == out.get() && r.type() == n.type,
                "rewriter: replacement of " + n.op_name() + " has another graph or type");
    }
    f.memo[id] = r.id;
  }
  out->outputs.reserve(g.outputs.size());
  for (NodeId o : g.outputs) out->outputs.push_back(f.memo.at(o));
  out->output_names = g.output_names;
  --depth_;
  src_ = saved_src;
  dst_ = saved_dst;
  return out;
}

}  // namespace mg::passes
