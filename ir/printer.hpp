// Text form of a graph, one op per line with its type, attributes and source location;
// ir/parser.hpp reads it back (grammar and a full example in ir/README.md):
//   graph(%x: f64[2,3], %w: f64[3,2]) {
//     %2 = matmul(%x, %w) : f64[2,2]  loc("model.cpp":12:7)
//     %3 = reduce_sum(%2) {axes = [1], keepdim = false} : f64[2] grad
//     return loss = %3
//   }
// Invariant: lossless and canonical — print(parse(print(g))) == print(g). Numbers are
// spelled exactly (shortest round-trip form), every attribute is printed (defaults too),
// non-input values are numbered from the input count up in print order (so for a graph
// whose inputs come first the numbers are the node ids), and every top-level result gets
// a unique name.
#pragma once
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

#include "minigrad/ir/graph.hpp"

namespace mg::ir {

struct PrintOptions {
  bool locations = true;
  bool only_live = true;  // print only nodes the outputs depend on (when outputs are given)
};

// `outputs` empty: print g.outputs (with g.output_names) and every node.
void print(std::ostream& os, const Graph& g, std::span<const NodeId> outputs = {},
           PrintOptions opts = {});
std::string to_text(const Graph& g, std::span<const NodeId> outputs = {}, PrintOptions opts = {});
// "%<input-name>" for graph inputs, "%<id>" otherwise; for diagnostics about a node.
std::string value_name(const Graph& g, NodeId id);
// "input 'x' (f32[2,3])" or "value %7 = tanh (f32[2,3])": a node as errors name it.
std::string describe_value(const Graph& g, NodeId id);

// Spelling helpers shared with the parser.
bool is_bare_name(std::string_view s);              // [A-Za-z_][A-Za-z0-9_.]*
std::string quote(std::string_view s);              // "..." with \" \\ \n \t \r \xHH escapes
std::string name_token(std::string_view s);         // bare if possible, else quoted
std::string format_f64(double v);                   // shortest exact: 0.1, 1.0, 1e+300, -inf, nan
std::string format_f32(float v);
std::string format_attr(const AttrValue& v);        // i64, f64, true/false, "str", [1,2], f32

}  // namespace mg::ir
