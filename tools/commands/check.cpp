// `minigrad check FILE.mgir`: parse, verify, and list each value with its type.
#include <iomanip>
#include <iostream>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/printer.hpp"
#include "tools/cli.hpp"

namespace mg::tools {

namespace {

std::string display_name(const ir::Graph& g, ir::NodeId id) {
  const ir::Node& n = g.node(id);
  if (n.kind != ir::NodeKind::input) return ir::value_name(g, id);
  std::string s = "%";  // built with += : GCC 12 mis-warns (-Wrestrict) on "%" + string
  s += ir::name_token(n.name);
  return s;
}

// One line per node: name, type, what defines it; regions indented below their op.
void list_values(std::ostream& os, const ir::Graph& g, const std::string& indent, std::size_t& count) {
  std::size_t width = 0, type_width = 0;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    width = std::max(width, display_name(g, id).size());
    type_width = std::max(type_width, to_string(g.node(id).type).size());
  }
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& n = g.node(id);
    ++count;
    os << indent << std::left << std::setw(static_cast<int>(width)) << display_name(g, id) << "  "
       << std::setw(static_cast<int>(type_width)) << to_string(n.type) << "  " << n.op_name()
       << (n.role == ir::Role::adjoint        ? " (grad)"
           : n.role == ir::Role::second_order ? " (grad2)"
           : n.role == ir::Role::update       ? " (update)"
                                              : "")
       << "\n";
    for (std::size_t r = 0; r < n.regions.size(); ++r) {
      os << indent << "  region " << r << ":\n";
      list_values(os, *n.regions[r], indent + "    ", count);
    }
  }
}

}  // namespace

int run_check(const Command& self, Args args) {
  po::variables_map vm;
  if (!parse_command_line(self, args, options_section(), {"FILE.mgir"}, 1, vm)) return kOk;
  const std::string path = vm["FILE.mgir"].as<std::string>();
  const auto g = load_graph(path);
  std::size_t count = 0;
  list_values(std::cout, *g, "", count);
  std::cout << "outputs:\n";
  for (std::size_t i = 0; i < g->outputs.size(); ++i)
    std::cout << "  " << output_name(*g, i) << " = " << display_name(*g, g->outputs[i]) << " : "
              << to_string(g->node(g->outputs[i]).type) << "\n";
  const std::size_t outs = g->outputs.size();
  std::cout << path << ": ok (" << count << " values, " << outs << (outs == 1 ? " output)\n" : " outputs)\n");
  return kOk;
}

}  // namespace mg::tools
