// Node: one SSA value of a Graph. One generic record for every op (no class per op);
// what an op means lives in its OpDef in the registry. Nodes are immutable once
// appended. A node may own subgraphs (regions), e.g. the body of a `scan` loop, so no
// pass or executor may assume a flat graph.
#pragma once
#include <cstdint>
#include <memory>
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

struct Node {
  NodeId id = kNoNode;
  NodeKind kind = NodeKind::op;
  const OpDef* op = nullptr;  // null for input and constant
  std::vector<NodeId> inputs;
  Attrs attrs;
  Type type;
  SourceLoc loc;
  Role role = Role::forward;
  std::string name;                             // inputs: the graph input's name
  std::shared_ptr<const Array> literal;         // constants: the value
  std::vector<std::unique_ptr<Graph>> regions;  // subgraphs owned by this op

  const std::string& op_name() const;  // "input"/"constant" for structural kinds
};

}  // namespace mg::ir
