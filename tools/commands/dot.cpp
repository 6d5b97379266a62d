// `minigrad dot FILE.mgir [-o OUT.dot|.svg|.png] [--grad] [--collapse]`: the graph as a
// picture, clustered by role and module; --collapse draws one box per cluster.
#include <filesystem>

#include "minigrad/ir/dot.hpp"
#include "tools/cli.hpp"
#include "minigrad/runtime/io/render.hpp"

namespace mg::tools {

int run_dot(const Command& self, Args args) {
  po::options_description options = options_section();
  options.add_options()
      ("output,o", po::value<std::string>()->value_name("OUT"),
       "write to OUT (.dot, .gv, .svg or .png) instead of DOT on stdout")
      ("grad", "add the gradients of the (one scalar float) output and draw the backward cluster")
      ("all", "also draw nodes the outputs do not depend on")
      ("locations", "add each node's source file:line to its label")
      ("collapse", "one box per role/module cluster (node counts) and the edges between them: for large graphs")
      ("no-modules", "do not cluster nodes by module (parameter-name prefix)");
  po::variables_map vm;
  if (!parse_command_line(self, args, options, {"FILE.mgir"}, 1, vm)) return kOk;
  std::string out = vm.count("output") ? vm["output"].as<std::string>() : "";
  if (!out.empty() && out != "-") {
    const std::string ext = std::filesystem::path(out).extension().string();
    if (ext != ".dot" && ext != ".gv" && ext != ".svg" && ext != ".png")
      throw UsageError("-o " + out + ": unknown extension '" + ext + "' (use .dot, .svg or .png)");
  }
  const std::string file = vm["FILE.mgir"].as<std::string>();
  const auto g = load_graph(file);
  if (vm.count("grad")) append_input_gradients(*g, nullptr, file);
  ir::DotOptions opts;
  opts.only_live = !vm.count("all");
  opts.locations = vm.count("locations") > 0;
  opts.collapse = vm.count("collapse") > 0;
  opts.modules = !vm.count("no-modules");
  opts.title = std::filesystem::path(file).filename().string();
  const std::string dot = ir::to_dot(*g, {}, opts);
  if (out.empty() || out == "-")
    write_text("", dot);
  else
    io::render(dot, out);
  return kOk;
}

}  // namespace mg::tools
