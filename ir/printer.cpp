// The text printer; see printer.hpp.
#include "ir/printer.hpp"

#include <sstream>

#include "ir/op_registry.hpp"

namespace mg::ir {

std::string value_name(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  std::string s = "%";  // built with += : GCC 12 mis-warns (-Wrestrict) on "%" + string
  s += n.kind == NodeKind::input ? n.name : std::to_string(id);
  return s;
}

namespace {

void print_graph(std::ostream& os, const Graph& g, std::span<const NodeId> outputs,
                 const PrintOptions& opts, const std::string& indent, const std::string& title) {
  os << indent << title << "(";
  for (std::size_t i = 0; i < g.inputs().size(); ++i) {
    const Node& n = g.node(g.inputs()[i]);
    os << (i ? ", " : "") << value_name(g, n.id) << ": " << to_string(n.type);
  }
  os << ") {\n";
  std::vector<bool> live;
  if (opts.only_live && !outputs.empty()) live = g.reachable_from(outputs);
  for (NodeId id = 0; id < g.size(); ++id) {
    const Node& n = g.node(id);
    if (n.kind == NodeKind::input) continue;
    if (!live.empty() && !live[id]) continue;
    os << indent << "  " << value_name(g, id) << " = " << n.op_name();
    if (n.kind == NodeKind::constant) {
      os << " " << to_string(*n.literal, 16);
    } else {
      os << "(";
      for (std::size_t i = 0; i < n.inputs.size(); ++i) os << (i ? ", " : "") << value_name(g, n.inputs[i]);
      os << ")";
      if (!n.attrs.items().empty()) {
        os << " {";
        bool first = true;
        for (auto& [k, v] : n.attrs.items()) {
          os << (first ? "" : ", ") << k << " = " << to_string(v);
          first = false;
        }
        os << "}";
      }
    }
    os << " : " << to_string(n.type);
    if (n.role == Role::adjoint) os << " grad";
    if (opts.locations && n.loc.known()) os << "  loc(\"" << n.loc.file << "\":" << n.loc.line << ")";
    os << "\n";
    for (std::size_t r = 0; r < n.regions.size(); ++r)
      print_graph(os, *n.regions[r], n.regions[r]->outputs, opts, indent + "    ",
                  "region " + std::to_string(r));
  }
  std::span<const NodeId> results = outputs.empty() ? std::span<const NodeId>(g.outputs) : outputs;
  os << indent << "  return";
  for (std::size_t i = 0; i < results.size(); ++i) os << (i ? ", " : " ") << value_name(g, results[i]);
  os << "\n" << indent << "}\n";
}

}  // namespace

void print(std::ostream& os, const Graph& g, std::span<const NodeId> outputs, PrintOptions opts) {
  print_graph(os, g, outputs, opts, "", "graph");
}

std::string to_text(const Graph& g, std::span<const NodeId> outputs, PrintOptions opts) {
  std::ostringstream os;
  print(os, g, outputs, opts);
  return os.str();
}

}  // namespace mg::ir
