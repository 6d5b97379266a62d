// Graphviz DOT text for a graph, for people to look at (rendering to SVG/PNG lives in
// tools/render.hpp, so the IR needs no library). One DOT node per IR node: op name, short
// attributes and type; operands as edges (labelled by position for non-commutative ops).
// Graph inputs are blue ellipses, constants grey notes, outputs double-bordered green;
// regions are nested clusters. Nodes are clustered by role (ir::Role: `cluster_forward`,
// `cluster_backward` orange, `cluster_second_order` red, `cluster_update` teal; a graph
// with only forward nodes has no role cluster) and, inside each role, by module
// (`cluster_backward_fc1`): the parameter-name prefix of what they read (see
// node_modules). A collapsed view draws one box per role/module cluster with its node
// count, and the edges between clusters, for graphs too large to draw node by node.
// Invariant: the output is deterministic (node ids only) and every label is escaped.
#pragma once
#include <span>
#include <string>
#include <string_view>

#include "minigrad/ir/graph.hpp"

namespace mg::ir {

struct DotOptions {
  bool only_live = true;        // draw only what the outputs depend on (when there are outputs)
  bool locations = false;       // add the user's file:line to each label
  std::size_t attr_chars = 32;  // longer attribute values and constants are cut with "..."
  std::string title;            // graph label, none when empty
  bool modules = true;          // cluster each role's nodes by module (node_modules)
  bool collapse = false;        // one box per role/module cluster and the edges between them
};

// `outputs` defaults to g.outputs (named by g.output_names where given).
std::string to_dot(const Graph& g, std::span<const NodeId> outputs = {}, DotOptions opts = {});

// The module each node of `g` belongs to ("" for none), by parameter-name prefix: an input
// named "fc1.weight" (or "features.0.weight", or optimizer state "optim.fc1.weight.m")
// belongs to "fc1" ("features.0"); inputs without a dot (data, "optim.lr") to none. An op
// belongs to the module whose parameters it reads directly; else a forward or update op
// to the latest module (in input order) among its operands'; a backward op to the latest
// module among the nodes that read it (the gradients it feeds), else among its operands'.
// Only nodes in `live` (empty: all) are looked at.
std::vector<std::string> node_modules(const Graph& g, const std::vector<bool>& live = {});

// `s` as a DOT double-quoted string, quotes included: `"` and `\` escaped, newlines as
// DOT's centred line break `\n`, other control bytes dropped.
std::string dot_quote(std::string_view s);

}  // namespace mg::ir
