// `minigrad view FILE.mgir [--grad] [--expand] [--max-lines N] [--no-locations]`: the graph
// in the terminal, top-down and grouped by role (runtime/glassbox/ascii_view.hpp).
#include <iostream>

#include "minigrad/runtime/glassbox/ascii_view.hpp"
#include "tools/cli.hpp"

namespace mg::tools {

int run_view(const Command& self, Args args) {
  po::options_description options = options_section();
  options.add_options()
      ("grad", "add the gradients of the (one scalar float) output: the backward block")
      ("expand", "print each fused node's region under it (default: the list of its ops)")
      ("max-lines", po::value<std::size_t>()->value_name("N"), "show at most N values, eliding the middle (default 60; 0: all)")
      ("no-locations", "leave out each value's source file:line");
  po::variables_map vm;
  if (!parse_command_line(self, args, options, {"FILE.mgir"}, 1, vm)) return kOk;
  const std::string file = vm["FILE.mgir"].as<std::string>();
  const auto g = load_graph(file);
  if (vm.count("grad")) append_input_gradients(*g, nullptr, file);
  rt::glassbox::AsciiViewOptions opts;
  opts.expand_fused = vm.count("expand") > 0;
  if (vm.count("max-lines")) opts.max_lines = vm["max-lines"].as<std::size_t>();
  opts.locations = !vm.count("no-locations");
  std::cout << rt::glassbox::ascii_view(*g, {}, opts);
  return kOk;
}

}  // namespace mg::tools
