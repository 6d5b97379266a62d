// The graph in a terminal: a top-down, column-aligned ASCII rendering of what a graph
// computes: one line per value (name, op and operands, type, the user's line), grouped
// into blocks by role (forward, backward, second-order backward, optimizer update), the
// outputs marked, fused regions collapsed to the list of their ops or expanded under
// their node, and long graphs elided in the middle with a count of what was left out.
// Plain ASCII (no box-drawing characters), so it survives any terminal and log file.
// Depends only on ir/; `minigrad view` and mg::visualize print it.
#pragma once
#include <cstddef>
#include <span>
#include <string>

#include "minigrad/ir/graph.hpp"

namespace mg::rt::glassbox {

struct AsciiViewOptions {
  bool expand_fused = false;   // print each fused node's region under it
  std::size_t max_lines = 60;  // value lines shown; past it the middle is elided (0: all)
  bool locations = true;       // the user's file:line per value
};

// `outputs` empty: g.outputs. Only the values the outputs need are shown; names are the
// text IR's (printer.hpp), so a line here finds its line in the text IR.
std::string ascii_view(const ir::Graph& g, std::span<const ir::NodeId> outputs = {}, const AsciiViewOptions& opts = {});

}  // namespace mg::rt::glassbox
