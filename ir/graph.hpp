// Graph: an append-only list of Nodes in SSA form. Appending keeps topological order
// (a node's inputs always have smaller ids), so a forward walk is a loop over ids and no
// traversal needs recursion. A Graph can be the body of a region: then its inputs are
// the region's arguments and `outputs` its results.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "minigrad/ir/arena.hpp"
#include "minigrad/ir/node.hpp"

namespace mg::ir {

class Graph;

// A cheap handle to one value: (graph, id). Copyable, comparable, never dangling while
// the graph lives (nodes are never removed).
struct Value {
  Graph* graph = nullptr;
  NodeId id = kNoNode;

  bool valid() const { return graph != nullptr && id != kNoNode; }
  const Node& node() const;
  const Type& type() const;
  DType dtype() const { return type().dtype; }
  const Shape& shape() const { return type().shape; }
  int rank() const { return type().rank(); }
  bool operator==(const Value&) const = default;
};

class Graph {
 public:
  Graph() = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Adds a named input. Names are unique within a graph.
  Value add_input(std::string name, Type type, SourceLoc loc = ambient_loc());
  Value add_constant(Array value, SourceLoc loc = ambient_loc());
  // Appends an op node with `inputs` as its operands (node.inputs is ignored: the graph
  // stores operand lists itself); the caller (the builder) has validated attrs and
  // inferred type. The node is moved into the graph's storage: no allocation per node.
  Value append(Node node, std::span<const NodeId> inputs = {});
  // The same with operands given as values, which must be values of this graph.
  Value append(Node node, std::span<const Value> inputs);

  // References stay valid while the graph grows (the storage never moves a node).
  const Node& node(NodeId id) const { return nodes_.at(id); }
  Node& mutable_node(NodeId id) { return nodes_.at(id); }
  std::size_t size() const { return nodes_.size(); }
  Value value(NodeId id) { return {this, id}; }

  const std::vector<NodeId>& inputs() const { return inputs_; }
  Value input(std::string_view name);  // invalid Value if absent
  std::vector<NodeId> outputs;          // results, for region bodies and parsed graphs
  // Names of `outputs`, parallel to it; an entry may be empty or missing (unnamed). The
  // printer prints a unique name for each top-level result; tools name output files by it.
  std::vector<std::string> output_names;

  // The shared_ptr owning this graph, when its owner registered itself (mg::Graph does), so
  // a Tensor's graph can be shared again (mg::graph_of); empty for a graph owned otherwise.
  // A member rather than std::enable_shared_from_this, whose base class would make
  // unqualified calls on a Graph find std:: functions by ADL (`bind(g, ...)` is std::bind).
  std::shared_ptr<Graph> owner() const { return owner_.lock(); }
  void set_owner(const std::shared_ptr<Graph>& self);  // self.get() == this

  // Nodes created while a RoleScope is active get that role (the grad pass uses it).
  Role current_role = Role::forward;

  // Walk helpers used by passes: a forward walk is `for (id = 0; id < size(); ++id)`.
  std::vector<bool> reachable_from(std::span<const NodeId> roots) const;  // backward cone
  // Dead-code removal in place: keeps every input and the nodes `outputs` need, in order,
  // renumbered (operands, inputs and outputs remapped); nodes move, none is copied. For a
  // pass that owns the graph it built (a copy would allocate every node again).
  void retain_live();

 private:
  Value push(Node&& node, NodeId* operands, std::size_t count);

  StableVector<Node> nodes_;  // in id order, in blocks: see ir/arena.hpp
  RunPool<NodeId> operands_;  // every node's operand list
  std::vector<NodeId> inputs_;
  std::unordered_map<std::string, NodeId> input_by_name_;
  std::weak_ptr<Graph> owner_;
};

class RoleScope {
 public:
  RoleScope(Graph& g, Role r) : g_(g), saved_(g.current_role) { g.current_role = r; }
  ~RoleScope() { g_.current_role = saved_; }
  RoleScope(const RoleScope&) = delete;
  RoleScope& operator=(const RoleScope&) = delete;

 private:
  Graph& g_;
  Role saved_;
};

}  // namespace mg::ir
