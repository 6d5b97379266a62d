// Graph construction and the shared walk helpers.
#include "minigrad/ir/graph.hpp"

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"

namespace mg::ir {

const Node& Value::node() const { return graph->node(id); }
const Type& Value::type() const { return graph->node(id).type; }

const std::string& Node::op_name() const {
  static const std::string input_name = "input", constant_name = "constant";
  switch (kind) {
    case NodeKind::input: return input_name;
    case NodeKind::constant: return constant_name;
    case NodeKind::op: return op->name;
  }
  return constant_name;
}

void Graph::set_owner(const std::shared_ptr<Graph>& self) {
  MG_ASSERT(self.get() == this, "Graph::set_owner: the pointer does not own this graph");
  owner_ = self;
}

Value Graph::add_input(std::string name, Type type, SourceLoc loc) {
  if (name.empty()) throw UserError("graph input needs a non-empty name", loc);
  if (input_by_name_.count(name))
    throw UserError("duplicate graph input name '" + name + "'", loc);
  try {
    check_type_sane(type);
  } catch (const ShapeError& e) {
    throw ShapeError("input '" + name + "': " + e.message(), loc);
  }
  auto n = std::make_unique<Node>();
  n->kind = NodeKind::input;
  n->name = name;
  n->type = std::move(type);
  n->loc = loc;
  Value v = append(std::move(n));
  inputs_.push_back(v.id);
  input_by_name_[name] = v.id;
  return v;
}

Value Graph::add_constant(Array value, SourceLoc loc) {
  auto n = std::make_unique<Node>();
  n->kind = NodeKind::constant;
  n->type = value.type();
  n->literal = std::make_shared<const Array>(std::move(value));
  n->loc = loc;
  return append(std::move(n));
}

Value Graph::append(std::unique_ptr<Node> node) {
  node->id = static_cast<NodeId>(nodes_.size());
  node->role = current_role;
  for (NodeId in : node->inputs)
    MG_ASSERT(in < node->id, "node input defined after use");
  nodes_.push_back(std::move(node));
  return {this, nodes_.back()->id};
}

Value Graph::input(std::string_view name) {
  auto it = input_by_name_.find(std::string(name));
  return it == input_by_name_.end() ? Value{} : Value{this, it->second};
}

void Graph::retain_live() {
  const std::vector<bool> live = reachable_from(outputs);
  std::vector<NodeId> map(nodes_.size(), kNoNode);
  NodeId kept = 0;
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    Node& n = *nodes_[id];
    if (n.kind != NodeKind::input && !live[id]) continue;  // freed below or when overwritten
    for (NodeId& in : n.inputs) in = map[in];
    n.id = map[id] = kept;
    if (kept != id) nodes_[kept] = std::move(nodes_[id]);
    ++kept;
  }
  nodes_.resize(kept);
  for (NodeId& in : inputs_) in = map[in];
  for (auto& [name, id] : input_by_name_) id = map[id];
  for (NodeId& o : outputs) o = map[o];
}

std::vector<bool> Graph::reachable_from(std::span<const NodeId> roots) const {
  std::vector<bool> live(nodes_.size(), false);
  for (NodeId r : roots) live.at(r) = true;
  for (std::size_t i = nodes_.size(); i-- > 0;)
    if (live[i])
      for (NodeId in : nodes_[i]->inputs) live[in] = true;
  return live;
}

}  // namespace mg::ir
