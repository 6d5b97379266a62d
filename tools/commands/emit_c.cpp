// `minigrad emit-c FILE.mgir -o DIR [--name NAME] [--weights W.safetensors]`: the graph as
// a standalone C99 .c/.h pair (no malloc, one static arena, no BLAS); prints the arena and
// weight sizes the target needs.
#include <algorithm>
#include <filesystem>
#include <iostream>

#include "minigrad/ir/errors.hpp"
#include "minigrad/runtime/c99/export.hpp"
#include "tools/cli.hpp"

namespace mg::tools {

int run_emit_c(const Command& self, Args args) {
  po::options_description options = options_section();
  options.add_options()
      ("output,o", po::value<std::string>()->value_name("DIR"), "directory for NAME.c and NAME.h (created if missing)")
      ("name", po::value<std::string>()->value_name("NAME"), "C prefix and file stem (default: the file's stem)")
      ("weights", po::value<std::string>()->value_name("W.safetensors"),
       "embed these tensors as static const arrays (graph inputs of the same names)")
      ("max-memory", po::value<std::string>()->value_name("SIZE")->default_value("16G"),
       "refuse when arena + weights + constants exceed SIZE")
      ("target-bits", po::value<int>()->value_name("32|64")->default_value(64),
       "the target's pointer width: 32 also refuses more than 4 GiB of static memory");
  po::variables_map vm;
  if (!parse_command_line(self, args, options, {"FILE.mgir"}, 1, vm)) return kOk;
  if (!vm.count("output")) throw UsageError("missing -o DIR");
  const std::string file = vm["FILE.mgir"].as<std::string>();
  rt::c99::ExportOptions o;
  o.name = vm.count("name") ? vm["name"].as<std::string>() : rt::c99::c_identifier(std::filesystem::path(file).stem().string());
  if (vm.count("weights")) o.weights = vm["weights"].as<std::string>();
  const int bits = vm["target-bits"].as<int>();
  if (bits != 32 && bits != 64) throw UsageError("--target-bits expects 32 or 64, got " + std::to_string(bits));
  o.max_bytes = parse_size(vm["max-memory"].as<std::string>(), "--max-memory");
  if (bits == 32) o.max_bytes = std::min<std::uint64_t>(o.max_bytes, (1ull << 32) - 1);
  const auto g = load_graph(file);
  if (g->outputs.empty()) throw UserError(file + ": the graph has no outputs");
  const std::string dir = vm["output"].as<std::string>();
  const rt::c99::Module m = rt::c99::export_c(*g, dir, o);
  const std::filesystem::path d(dir);
  std::cout << "wrote " << (d / (m.name + ".c")).string() << " and " << (d / (m.name + ".h")).string() << "\n"
            << "entry: int " << m.name << "_run(...)  (" << m.args.size() << " pointer arguments, see the header)\n"
            << "arena: " << m.arena_bytes << " bytes (one static buffer; peak live " << m.peak_bytes << ")\n"
            << "weights: " << m.weight_bytes << " bytes embedded, constants: " << m.constant_bytes << " bytes\n"
            << "loops: " << m.num_kernels << " (" << m.num_inlined << " elementwise nodes inlined)\n";
  return kOk;
}

}  // namespace mg::tools
