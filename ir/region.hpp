// Regions as values of the IR layer: copying a body into a graph (VJP rules of loop ops
// inline their body), deep copies with a chosen parameter order, and captures. A capture
// is how a C++ lambda traced into a region (the DSL's scan body) may use values of the
// graphs around it: while a CaptureScope is active, the builder turns an enclosing graph's
// value used by a body op into a new body parameter (once per value), like JAX closures.
// Depends on ir/graph.hpp only; no pass and no executor.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "minigrad/ir/graph.hpp"

namespace mg::ir {

// A deep copy of `g` (regions too) whose parameters are g's inputs in `order` (a
// permutation of g.inputs()); outputs and names kept.
// `map` (optional): receives, per node of g, its id in the copy.
std::unique_ptr<Graph> clone_region(const Graph& g, std::span<const NodeId> order, std::vector<NodeId>* map = nullptr);
inline std::unique_ptr<Graph> clone_region(const Graph& g) { return clone_region(g, g.inputs()); }

// Appends a copy of `body`'s nodes to `into` with `args` (values of `into`, one per body
// input, same types) as its parameters; returns the values of body.outputs. Nodes keep
// their type, attrs, source line and regions (deep-copied); the role is into's current one.
// `map` (optional): receives, per body node, its copy's id in `into`.
std::vector<Value> inline_region(const Graph& body, Graph& into, std::span<const Value> args,
                                 std::vector<NodeId>* map = nullptr);

// A copy of `g` in which the nodes `replaced` become new parameters, appended after g's own
// (named `prefix`<k>, typed like them), and what only they needed is dropped.
std::unique_ptr<Graph> with_params(const Graph& g, std::span<const NodeId> replaced, const std::string& prefix);

// While alive, `body` is being traced inside `parent`: make_op captures values of parent
// (and, through enclosing scopes, of graphs around it) used by body ops. Scopes nest (a
// scan traced inside a scan body); they are per thread.
class CaptureScope {
 public:
  CaptureScope(Graph& body, Graph& parent);
  ~CaptureScope();
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;
  // The enclosing graph's values captured so far, in the order their body inputs were made.
  const std::vector<Value>& captured() const { return outer_; }
  const std::vector<NodeId>& captured_inputs() const { return inner_; }

 private:
  friend Value capture(Value v, Graph& into);
  friend Graph* capture_target(std::span<const Value> operands);
  friend bool is_tracing(const Graph& g);
  Graph& body_;
  Graph& parent_;
  std::vector<Value> outer_;     // values of parent_
  std::vector<NodeId> inner_;    // their body inputs
  CaptureScope* saved_;
};

// A node like `old` (kind, op, attrs, type, line, name, literal) without operands,
// regions, role or id: what copying a node into another graph starts from.
Node copy_node_header(const Node& old);

// `v` as a value of `into`: v itself when it is one, a body input when `into` is a body
// being traced and v belongs to a graph around it; otherwise v (the caller reports it).
Value capture(Value v, Graph& into);
// The graph a new node with these operands belongs in: the innermost body being traced
// among the operands' graphs, else the first operand's graph (null when none is valid).
Graph* capture_target(std::span<const Value> operands);
// Whether `g` is a body being traced (values of enclosing graphs may be used in it).
bool is_tracing(const Graph& g);

}  // namespace mg::ir
