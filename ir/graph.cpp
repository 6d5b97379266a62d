// Graph construction and the shared walk helpers.
#include "minigrad/ir/graph.hpp"

#include <algorithm>

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

namespace {
// Inputs looked up by scanning below this count: most graphs with inputs are region bodies
// (a fused node's has two or three), and a hash map made each of them allocate a bucket
// array and a node per input. The map is built when the count reaches it.
constexpr std::size_t kScanInputs = 8;
}  // namespace

Value Graph::add_input(std::string name, Type type, SourceLoc loc) {
  if (name.empty()) throw UserError("graph input needs a non-empty name", loc);
  if (input(name).valid())
    throw UserError("duplicate graph input name '" + name + "'", loc);
  try {
    check_type_sane(type);
  } catch (const ShapeError& e) {
    throw ShapeError("input '" + name + "': " + e.message(), loc);
  }
  Node n;
  n.kind = NodeKind::input;
  n.name = name;
  n.type = std::move(type);
  n.loc = loc;
  Value v = append(std::move(n));
  inputs_.push_back(v.id);
  if (inputs_.size() == kScanInputs) {
    for (NodeId in : inputs_) input_by_name_.emplace(nodes_[in].name, in);
  } else if (inputs_.size() > kScanInputs) {
    input_by_name_.emplace(std::move(name), v.id);
  }
  return v;
}

Value Graph::add_constant(Array value, SourceLoc loc) {
  Node n;
  n.kind = NodeKind::constant;
  n.type = value.type();
  n.literal = std::make_shared<const Array>(std::move(value));
  n.loc = loc;
  return append(std::move(n));
}

Value Graph::append(Node node, std::span<const NodeId> inputs) {
  NodeId* run = operands_.allocate(inputs.size());
  std::copy(inputs.begin(), inputs.end(), run);
  return push(std::move(node), run, inputs.size());
}

Value Graph::append(Node node, std::span<const Value> inputs) {
  NodeId* run = operands_.allocate(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    MG_ASSERT(inputs[k].graph == this, "graph: an operand is a value of another graph");
    run[k] = inputs[k].id;
  }
  return push(std::move(node), run, inputs.size());
}

Value Graph::push(Node&& node, NodeId* operands, std::size_t count) {
  const auto id = static_cast<NodeId>(nodes_.size());
  MG_ASSERT(id != kNoNode, "graph: too many nodes for a 32-bit node id");
  for (std::size_t k = 0; k < count; ++k) MG_ASSERT(operands[k] < id, "node input defined after use");
  node.id = id;
  node.role = current_role;
  node.inputs.data_ = operands;
  node.inputs.size_ = static_cast<std::uint32_t>(count);
  nodes_.push_back(std::move(node));
  return {this, id};
}

Value Graph::input(std::string_view name) {
  if (inputs_.size() < kScanInputs) {
    for (NodeId in : inputs_)
      if (nodes_[in].name == name) return {this, in};
    return {};
  }
  auto it = input_by_name_.find(std::string(name));
  return it == input_by_name_.end() ? Value{} : Value{this, it->second};
}

void Graph::retain_live() {
  const std::vector<bool> live = reachable_from(outputs);
  std::vector<NodeId> map(nodes_.size(), kNoNode);
  NodeId kept = 0;
  for (NodeId id = 0; id < nodes_.size(); ++id) {
    Node& n = nodes_[id];
    if (n.kind != NodeKind::input && !live[id]) continue;  // destroyed below or when overwritten
    // Operand runs are remapped in place; a dropped node's run stays unused in the pool.
    for (std::uint32_t k = 0; k < n.inputs.size_; ++k) n.inputs.data_[k] = map[n.inputs.data_[k]];
    n.id = map[id] = kept;
    if (kept != id) nodes_[kept] = std::move(n);
    ++kept;
  }
  nodes_.truncate(kept);
  for (NodeId& in : inputs_) in = map[in];
  for (auto& [name, id] : input_by_name_) id = map[id];
  for (NodeId& o : outputs) o = map[o];
}

std::vector<bool> Graph::reachable_from(std::span<const NodeId> roots) const {
  std::vector<bool> live(nodes_.size(), false);
  for (NodeId r : roots) live.at(r) = true;
  for (std::size_t i = nodes_.size(); i-- > 0;)
    if (live[i])
      for (NodeId in : nodes_[i].inputs) live[in] = true;
  return live;
}

}  // namespace mg::ir
