// Graphviz DOT text for a graph, for people to look at (rendering to SVG/PNG lives in
// tools/render.hpp, so the IR needs no library). One DOT node per IR node: op name, short
// attributes and type; operands as edges (labelled by position for non-commutative ops).
// Graph inputs are blue ellipses, constants grey notes, outputs double-bordered green;
// adjoint (backward) nodes sit in `cluster_backward`, orange; regions are nested clusters.
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
};

// `outputs` defaults to g.outputs (named by g.output_names where given).
std::string to_dot(const Graph& g, std::span<const NodeId> outputs = {}, DotOptions opts = {});

// `s` as a DOT double-quoted string, quotes included: `"` and `\` escaped, newlines as
// DOT's centred line break `\n`, other control bytes dropped.
std::string dot_quote(std::string_view s);

}  // namespace mg::ir
