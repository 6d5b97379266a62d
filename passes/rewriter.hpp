// GraphRewriter: the one walk every pass is built on (STYLE "Passes"). It copies a graph
// old -> new in topological (id) order with an old->new memo, asking a callback for each
// op or constant node whether to replace it; "unchanged" (an invalid Value) copies the
// node with its operands remapped. Region bodies are rewritten by the same callback.
// Invariants: graph inputs are always kept, in order, with their names and types (they
// are the graph's interface: bindings and persistent state find them by name); outputs
// and output names map one to one. Depends on ir/ only.
#pragma once
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "minigrad/ir/graph.hpp"

namespace mg::passes {

class GraphRewriter;

// Called for every op and constant node the walk copies, with the node's operands
// already rewritten into `dst`. Return the replacement (a value of `dst`, same type) or
// an invalid Value to copy the node unchanged.
using RewriteFn =
    std::function<ir::Value(GraphRewriter& rw, const ir::Node& old, std::span<const ir::Value> inputs)>;

class GraphRewriter {
 public:
  // only_live: copy only the nodes the outputs need (and every input): dead-code removal.
  explicit GraphRewriter(RewriteFn fn, bool only_live = false) : fn_(std::move(fn)), only_live_(only_live) {}

  // The rewritten copy of `g` (g.outputs are the roots).
  std::unique_ptr<ir::Graph> run(const ir::Graph& g);
  // Copy only the top-level nodes marked here (and every input); for passes that know
  // liveness better than the outputs' cone (fusion). Region bodies are not affected.
  void set_keep(std::vector<bool> keep) { keep_ = std::move(keep); }

  ir::Graph& dst() { return *dst_; }    // the graph being built
  const ir::Graph& src() { return *src_; }  // the graph being read
  // Copies `old` into dst() with `inputs` as operands (attrs, type, loc, role, regions
  // rewritten). For callbacks that want the default and then something more.
  ir::Value copy(const ir::Node& old, std::span<const ir::Value> inputs);
  // Whether the walk is at the top-level graph (not inside a region body).
  bool at_top() const { return depth_ == 1; }
  // The new value of an old node already visited.
  ir::Value mapped(ir::NodeId old) const { return {dst_, memo_.at(old)}; }

 private:
  RewriteFn fn_;
  bool only_live_;
  const ir::Graph* src_ = nullptr;
  ir::Graph* dst_ = nullptr;
  std::vector<ir::NodeId> memo_;  // old id -> id in dst_ (kNoNode: not copied); 4 bytes a node
  std::vector<bool> keep_;
  int depth_ = 0;
};

// Copies one node of some graph into `dst` with `inputs` as operands (attrs, type, loc,
// role; regions deep-copied). The shared primitive of the rewriter and the fusion pass.
ir::Value copy_node(ir::Graph& dst, const ir::Node& old, std::span<const ir::Value> inputs);
// A deep copy of a whole graph (inputs, nodes, outputs, names, regions).
std::unique_ptr<ir::Graph> clone_graph(const ir::Graph& g);

}  // namespace mg::passes
