// `minigrad ops [NAME...]`: the op registry as a reference card, from each entry's data.
#include <iostream>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/printer.hpp"
#include "tools/cli.hpp"

namespace mg::tools {

namespace {

void print_op(std::ostream& os, const ir::OpDef& d) {
  os << d.name << "  arity " << (d.arity < 0 ? std::string("variadic") : std::to_string(d.arity));
  os << "  {";
  for (std::size_t i = 0; i < d.attrs.size(); ++i) {
    const AttrSpec& a = d.attrs[i];
    os << (i ? ", " : "") << a.name << ": " << name_of(a.kind);
    if (a.default_value) os << " = " << ir::format_attr(*a.default_value);
  }
  os << "}  vjp: " << (d.vjp ? "yes" : d.not_differentiable.empty() ? "no" : "no (" + d.not_differentiable + ")")
     << "\n    " << d.doc << "\n";
}

}  // namespace

int run_ops(const Command& self, Args args) {
  po::variables_map vm;
  if (!parse_command_line(self, args, options_section(), {"NAME..."}, 0, vm)) return kOk;
  const auto names = vm["NAME..."].as<std::vector<std::string>>();
  if (names.empty()) {
    for (const ir::OpDef* d : ir::all_ops()) print_op(std::cout, *d);
    return kOk;
  }
  for (const std::string& n : names) {
    const ir::OpDef* d = ir::find_op(n);
    if (d == nullptr) throw UserError("no op named '" + n + "' (minigrad ops lists them all)");
    print_op(std::cout, *d);
  }
  return kOk;
}

}  // namespace mg::tools
