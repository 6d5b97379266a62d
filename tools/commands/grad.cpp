// `minigrad grad FILE.mgir [-o OUT.mgir]`: the graph after the grad pass, as text IR, with
// d(output)/d(input) for every float input as extra outputs named grad_<input>.
#include "minigrad/ir/printer.hpp"
#include "tools/cli.hpp"

namespace mg::tools {

int run_grad(const Command& self, Args args) {
  po::options_description options = options_section();
  options.add_options()("output,o", po::value<std::string>()->value_name("OUT.mgir"),
                        "write the text IR here instead of to stdout");
  po::variables_map vm;
  if (!parse_command_line(self, args, options, {"FILE.mgir"}, 1, vm)) return kOk;
  const std::string file = vm["FILE.mgir"].as<std::string>();
  const auto g = load_graph(file);
  append_input_gradients(*g, nullptr, file);
  write_text(vm.count("output") ? vm["output"].as<std::string>() : "", ir::to_text(*g));
  return kOk;
}

}  // namespace mg::tools
