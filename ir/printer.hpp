// Text form of a graph, one op per line with its type, attributes and source location:
//   %3 = matmul(%x, %w) : f64[3,2]  loc("model.cpp":12)
// Values are named %<input-name> for graph inputs and %<id> otherwise; adjoint nodes are
// marked `grad`. (The full grammar and its parser come with the text-IR issue.)
#pragma once
#include <iosfwd>
#include <span>
#include <string>

#include "ir/graph.hpp"

namespace mg::ir {

struct PrintOptions {
  bool locations = true;
  bool only_live = true;  // print only nodes the outputs depend on (when outputs are given)
};

void print(std::ostream& os, const Graph& g, std::span<const NodeId> outputs = {},
           PrintOptions opts = {});
std::string to_text(const Graph& g, std::span<const NodeId> outputs = {}, PrintOptions opts = {});
std::string value_name(const Graph& g, NodeId id);

}  // namespace mg::ir
