// Region copies and captures; see region.hpp.
#include "minigrad/ir/region.hpp"

#include <algorithm>

#include "minigrad/ir/errors.hpp"

namespace mg::ir {

namespace {

// Appends a copy of `old` (an op or constant) to `dst` with `inputs` as operands.
Value copy_into(Graph& dst, const Node& old, std::span<const NodeId> inputs, bool keep_role) {
  Node n = copy_node_header(old);
  for (const auto& r : old.regions) n.regions.push_back(clone_region(*r));
  Value v = dst.append(std::move(n), inputs);
  if (keep_role) dst.mutable_node(v.id).role = old.role;
  return v;
}

thread_local CaptureScope* g_scope = nullptr;

}  // namespace

Node copy_node_header(const Node& old) {
  Node n;
  n.kind = old.kind;
  n.op = old.op;
  n.attrs = old.attrs;
  n.type = old.type;
  n.loc = old.loc;
  n.name = old.name;
  n.literal = old.literal;  // shared, immutable
  return n;
}

std::unique_ptr<Graph> clone_region(const Graph& g, std::span<const NodeId> order, std::vector<NodeId>* map_out) {
  MG_ASSERT(order.size() == g.inputs().size(), "clone_region: the order must name every input once");
  auto out = std::make_unique<Graph>();
  std::vector<NodeId> map(g.size(), kNoNode);
  for (NodeId in : order) {
    const Node& n = g.node(in);
    MG_ASSERT(n.kind == NodeKind::input && map[in] == kNoNode, "clone_region: the order must name every input once");
    map[in] = out->add_input(n.name, n.type, n.loc).id;
    out->mutable_node(map[in]).role = n.role;
  }
  std::vector<NodeId> ins;
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node& n = g.node(id);
    if (n.kind == NodeKind::input) continue;
    ins.clear();
    for (NodeId x : n.inputs) ins.push_back(map[x]);
    map[id] = copy_into(*out, n, ins, true).id;
  }
  for (NodeId o : g.outputs) out->outputs.push_back(map[o]);
  out->output_names = g.output_names;
  if (map_out) *map_out = std::move(map);
  return out;
}

std::vector<Value> inline_region(const Graph& body, Graph& into, std::span<const Value> args,
                                 std::vector<NodeId>* map_out) {
  MG_ASSERT(args.size() == body.inputs().size(), "inline_region: one argument per body input");
  std::vector<NodeId> map(body.size(), kNoNode);
  for (std::size_t i = 0; i < args.size(); ++i) {
    MG_ASSERT(args[i].graph == &into && args[i].type() == body.node(body.inputs()[i]).type,
              "inline_region: argument of another graph or type");
    map[body.inputs()[i]] = args[i].id;
  }
  std::vector<NodeId> ins;
  for (NodeId id = 0; id < body.size(); ++id) {
    const Node& n = body.node(id);
    if (n.kind == NodeKind::input) continue;
    ins.clear();
    for (NodeId x : n.inputs) ins.push_back(map[x]);
    map[id] = copy_into(into, n, ins, false).id;
  }
  std::vector<Value> out;
  for (NodeId o : body.outputs) out.push_back({&into, map[o]});
  if (map_out) *map_out = std::move(map);
  return out;
}

std::unique_ptr<Graph> with_params(const Graph& g, std::span<const NodeId> replaced, const std::string& prefix) {
  auto out = std::make_unique<Graph>();
  std::vector<NodeId> map(g.size(), kNoNode);
  for (NodeId in : g.inputs()) {
    const Node& n = g.node(in);
    map[in] = out->add_input(n.name, n.type, n.loc).id;
    out->mutable_node(map[in]).role = n.role;
  }
  for (std::size_t k = 0; k < replaced.size(); ++k)
    map[replaced[k]] = out->add_input(prefix + std::to_string(k), g.node(replaced[k]).type, g.node(replaced[k]).loc).id;
  std::vector<bool> live(g.size(), false);
  for (NodeId o : g.outputs) live[o] = true;
  for (std::size_t i = g.size(); i-- > 0;)
    if (live[i] && map[i] == kNoNode)
      for (NodeId in : g.node(static_cast<NodeId>(i)).inputs) live[in] = true;
  std::vector<NodeId> ins;
  for (NodeId id = 0; id < g.size(); ++id) {
    if (!live[id] || map[id] != kNoNode) continue;
    const Node& n = g.node(id);
    ins.clear();
    for (NodeId x : n.inputs) ins.push_back(map[x]);
    map[id] = copy_into(*out, n, ins, true).id;
  }
  for (NodeId o : g.outputs) out->outputs.push_back(map[o]);
  out->output_names = g.output_names;
  return out;
}

CaptureScope::CaptureScope(Graph& body, Graph& parent) : body_(body), parent_(parent), saved_(g_scope) {
  g_scope = this;
}
CaptureScope::~CaptureScope() { g_scope = saved_; }

bool is_tracing(const Graph& g) {
  for (CaptureScope* s = g_scope; s; s = s->saved_)
    if (&s->body_ == &g) return true;
  return false;
}

Value capture(Value v, Graph& into) {
  if (!v.valid() || v.graph == &into) return v;
  CaptureScope* s = g_scope;
  while (s && &s->body_ != &into) s = s->saved_;
  if (!s) return v;
  const Value outer = capture(v, s->parent_);  // through the scopes between
  if (outer.graph != &s->parent_) return v;    // not from around this body
  for (std::size_t i = 0; i < s->outer_.size(); ++i)
    if (s->outer_[i] == outer) return {&into, s->inner_[i]};
  const Value in = into.add_input("captured" + std::to_string(s->outer_.size()), outer.type(), outer.node().loc);
  s->outer_.push_back(outer);
  s->inner_.push_back(in.id);
  return in;
}

Graph* capture_target(std::span<const Value> operands) {
  Graph* first = nullptr;
  int best = -1;
  Graph* target = nullptr;
  for (const Value& v : operands) {
    if (!v.valid()) continue;
    if (!first) first = v.graph;
    int depth = 0;  // scopes from the innermost: a deeper body has a smaller distance
    int found = -1;
    for (CaptureScope* s = g_scope; s; s = s->saved_, ++depth)
      if (&s->body_ == v.graph) {
        found = depth;
        break;
      }
    if (found >= 0 && (best < 0 || found < best)) {
      best = found;
      target = v.graph;
    }
  }
  return target ? target : first;
}

}  // namespace mg::ir
