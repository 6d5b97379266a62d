// The rewrite pass: applies the rule table (passes/rules/table.cpp) to a fixed point.
//
// What: returns a new graph computing the same outputs, every node in normal form with
// respect to the enabled rules. Strict mode applies `exact` and `structural` rules only
// (results bit-identical); fast_math also applies `real` ones (equal over the reals).
// How: one topological walk over the nodes the roots need; each node is rebuilt on its
// already-normal inputs, then the rules indexed by its op are tried in priority order
// (commutative ops match either operand order); a replacement's new nodes are normalised
// the same way, depth-bounded (loop detection), so the walk is close to linear.
// Pre: a verified graph. Post: a verified graph of only live nodes, all inputs kept in
// order (names, roles, locations), replacement nodes stamped with the matched node's
// location and role; `map` takes old node ids to new ones. Types never change: a
// replacement whose type differs from the matched node's is not applied.
#pragma once
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "minigrad/ir/graph.hpp"

namespace mg::passes {

namespace rules {
class RuleSet;
}

enum class RewriteMode : std::uint8_t { strict, fast_math };

struct RewriteOptions {
  RewriteMode mode = RewriteMode::strict;
  const rules::RuleSet* rules = nullptr;  // null: the shipped table
  int max_depth = 64;                     // nested rewrites below one node before giving up
};

struct RewriteEvent {
  std::string rule;
  ir::NodeId node;  // the matched node (an id of the result graph under construction)
  std::string op;   // its op
  SourceLoc loc;    // the user's line it came from
};

struct RewriteStats {
  std::size_t nodes_before = 0;  // live nodes of the input
  std::size_t nodes_after = 0;
  std::size_t rewrites = 0;
  std::size_t loops_cut = 0;  // times max_depth stopped a chain of rewrites
  std::map<std::string, std::size_t> by_rule;
  double seconds = 0;
};

struct RewriteResult {
  std::unique_ptr<ir::Graph> graph;
  std::vector<ir::NodeId> map;  // old id -> new id, kNoNode where the node is gone
  RewriteStats stats;
  std::vector<RewriteEvent> log;
};

// Rewrites the cone of `roots` (empty: g.outputs, whose names are kept). The result's
// `outputs` are the rewritten roots.
RewriteResult rewrite(const ir::Graph& g, std::span<const ir::NodeId> roots = {},
                      const RewriteOptions& options = {});

}  // namespace mg::passes
