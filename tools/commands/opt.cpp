// `minigrad opt FILE.mgir --passes=SPEC [--stats] [--dump-after=NAME] [--verify] [-o OUT]`:
// the graph after a pass pipeline (passes/pass_manager.hpp), as text IR.
#include <iostream>

#include "minigrad/ir/printer.hpp"
#include "minigrad/passes/pass_manager.hpp"
#include "tools/cli.hpp"

namespace mg::tools {

int run_opt(const Command& self, Args args) {
  po::options_description options = options_section();
  options.add_options()
      ("passes", po::value<std::string>()->value_name("SPEC")->default_value(std::string(passes::kDefaultPipeline)),
       "comma-separated pass names: grad, rewrite, fold, cse, fuse, dce")
      ("stats", "print per-pass statistics (nodes before/after, ms) to stderr")
      ("dump-after", po::value<std::string>()->value_name("NAME"), "print the graph after pass NAME to stderr")
      ("dump-dot", "with --dump-after: as Graphviz DOT instead of text IR")
      ("verify", "run the IR verifier after every pass (always on in debug builds)")
      ("output,o", po::value<std::string>()->value_name("OUT.mgir"), "write the text IR here instead of to stdout");
  po::variables_map vm;
  if (!parse_command_line(self, args, options, {"FILE.mgir"}, 1, vm)) return kOk;
  const auto g = load_graph(vm["FILE.mgir"].as<std::string>());
  passes::PipelineOptions opts;
  if (vm.count("verify")) opts.verify = true;
  if (vm.count("dump-after")) opts.dump_after = vm["dump-after"].as<std::string>();
  opts.dump_dot = vm.count("dump-dot") > 0;
  passes::PipelineResult r = passes::run_pipeline(*g, vm["passes"].as<std::string>(), opts);
  if (vm.count("stats")) std::cerr << passes::format_stats(r.stats);
  write_text(vm.count("output") ? vm["output"].as<std::string>() : "", ir::to_text(*r.graph));
  return kOk;
}

}  // namespace mg::tools
