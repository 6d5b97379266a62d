// Node: one SSA value of a Graph. One generic record for every op (no class per op);
// what an op means lives in its OpDef in the registry. Nodes are immutable once
// appended. A node may own subgraphs (regions), e.g. the body of a `scan` loop, so no
// pass or executor may assume a flat graph.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "minigrad/ir/array.hpp"
#include "minigrad/ir/attrs.hpp"
#include "minigrad/ir/source_loc.hpp"
#include "minigrad/ir/type.hpp"

namespace mg::ir {

struct OpDef;
class Graph;

using NodeId = std::uint32_t;
inline constexpr NodeId kNoNode = ~NodeId{0};

// The only switch a walker needs: structural kinds, not ops.
enum class NodeKind : std::uint8_t {
  input,     // a named graph input (parameter, data, or a region's argument)
  constant,  // a literal Array
  op,        // an application of a registered op (may own regions)
};

// Which part of the program made a node; DOT output clusters and colours by it, the text
// IR prints it (`grad`, `grad2`, `update`).
//   forward       the model as the user wrote it
//   adjoint       a backward pass (grad, vjp) over forward nodes
//   second_order  a backward pass that differentiates adjoint nodes (grad of grad)
//   update        a training step's optimizer update (gradient clipping, state, new values)
enum class Role : std::uint8_t { forward, adjoint, second_order, update };

// A node's operands: a view of one run of ids in its graph's operand pool (see Graph), so
// an operand list costs no allocation of its own. Read like a const vector; only the
// graph that owns the node sets or remaps it (Graph::append, Graph::retain_live).
class Operands {
 public:
  using value_type = NodeId;
  using const_iterator = const NodeId*;
  using iterator = const NodeId*;

  const NodeId* begin() const { return data_; }
  const NodeId* end() const { return data_ + size_; }
  const NodeId* data() const { return data_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  NodeId operator[](std::size_t k) const { return data_[k]; }
  NodeId front() const { return data_[0]; }
  NodeId back() const { return data_[size_ - 1]; }
  operator std::span<const NodeId>() const { return {data_, size_}; }

 private:
  friend class Graph;
  NodeId* data_ = nullptr;
  std::uint32_t size_ = 0;
};

struct Node {
  NodeId id = kNoNode;
  NodeKind kind = NodeKind::op;
  Role role = Role::forward;  // (next to kind: no padding hole)
  const OpDef* op = nullptr;  // null for input and constant
  Operands inputs;            // set by Graph::append
  Attrs attrs;
  Type type;
  SourceLoc loc;
  std::string name;                             // inputs: the graph input's name
  std::shared_ptr<const Array> literal;         // constants: the value
  std::vector<std::unique_ptr<Graph>> regions;  // subgraphs owned by this op

  const std::string& op_name() const;  // "input"/"constant" for structural kinds
};

}  // namespace mg::ir
