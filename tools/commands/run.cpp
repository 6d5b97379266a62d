// `minigrad run FILE.mgir --input NAME=PATH.npy ... --out DIR [--grad] [--cotangent PATH] [--check-numerics]`:
// the interpreter on .npy files. Every input is checked against the graph (dtype, then
// shape) before anything runs, so a mismatch names the file, what it holds and what the
// graph expects.
#include <filesystem>
#include <iostream>
#include <set>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "minigrad/runtime/io/npy.hpp"
#include "tools/cli.hpp"

namespace mg::tools {

namespace {

// NAME=PATH.npy pairs, loaded and checked against the graph's inputs.
rt::Bindings load_inputs(ir::Graph& g, const std::vector<std::string>& specs) {
  rt::Bindings bound;
  for (const std::string& spec : specs) {
    const std::size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      throw UsageError("--input expects NAME=PATH.npy, got '" + spec + "'");
    const std::string name = spec.substr(0, eq), path = spec.substr(eq + 1);
    const ir::Value in = g.input(name);
    if (!in.valid()) {
      std::string known;
      for (ir::NodeId id : g.inputs()) known += (known.empty() ? "" : ", ") + g.node(id).name;
      throw UserError("the graph has no input '" + name + "' (its inputs: " + (known.empty() ? "none" : known) + ")");
    }
    if (bound.count(name)) throw UsageError("input '" + name + "' is given twice");
    Array a = io::load_npy(path);
    const Type& want = in.type();
    if (a.dtype() != want.dtype)
      throw UserError("input '" + name + "': dtype mismatch: " + path + " holds " + io::describe_npy(a) +
                      " but the graph expects " + to_string(want));
    if (a.shape() != want.shape)
      throw UserError("input '" + name + "': shape mismatch: " + path + " holds " + io::describe_npy(a) +
                      " but the graph expects " + to_string(want));
    bound.emplace(name, std::move(a));
  }
  for (ir::NodeId id : g.inputs()) {
    const ir::Node& n = g.node(id);
    if (!bound.count(n.name))
      throw UserError("graph input '" + n.name + "' (" + to_string(n.type) + ") is not bound: give --input " +
                      n.name + "=PATH.npy");
  }
  return bound;
}

}  // namespace

int run_run(const Command& self, Args args) {
  po::options_description options = options_section();
  options.add_options()
      ("input,i", po::value<std::vector<std::string>>()->composing()->value_name("NAME=PATH"),
       "bind graph input NAME to the .npy file PATH (once per input)")
      ("out,o", po::value<std::string>()->value_name("DIR"), "directory for the outputs (created if missing)")
      ("grad", "also write grad_<input>.npy for every float input (one scalar float output)")
      ("cotangent", po::value<std::string>()->value_name("PATH"),
       "cotangent .npy for a non-scalar output (implies --grad)")
      ("max-memory", po::value<std::string>()->value_name("SIZE"),
       "refuse to run when the memory plan needs more (e.g. 2G; default: the memory available now)")
      ("check-numerics", "stop at the first NaN/Inf and report its root cause: the node, op, text-IR line, "
       "source line and operand statistics (also MG_CHECK_NUMERICS=1)");
  po::variables_map vm;
  if (!parse_command_line(self, args, options, {"FILE.mgir"}, 1, vm)) return kOk;
  if (!vm.count("out")) throw UsageError("missing --out DIR");
  const std::string file = vm["FILE.mgir"].as<std::string>();
  const std::filesystem::path dir = vm["out"].as<std::string>();
  const std::vector<std::string> specs =
      vm.count("input") ? vm["input"].as<std::vector<std::string>>() : std::vector<std::string>{};

  const std::uint64_t limit = vm.count("max-memory") ? parse_size(vm["max-memory"].as<std::string>(), "--max-memory")
                                                     : available_memory();
  const auto g = load_graph(file);
  if (g->outputs.empty()) throw UserError(file + ": the graph has no outputs");
  // The output directory first: a run must not compute for minutes and then fail to save.
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw UserError(dir.string() + ": cannot create the output directory" + (ec ? " (" + ec.message() + ")" : ""));
  const rt::Bindings inputs = load_inputs(*g, specs);
  if (vm.count("grad") || vm.count("cotangent")) {
    Array cotangent;
    if (vm.count("cotangent")) cotangent = io::load_npy(vm["cotangent"].as<std::string>());
    append_input_gradients(*g, vm.count("cotangent") ? &cotangent : nullptr, file);
  }

  std::set<std::string> names;
  for (std::size_t i = 0; i < g->outputs.size(); ++i) {
    const std::string name = output_name(*g, i);
    check_file_name(name, "output name");
    if (!names.insert(name).second) throw UserError(file + ": two outputs are named '" + name + "'");
  }
  const rt::Executable exe =
      rt::compile(*g, g->outputs, {}, rt::Backend::interpreter, rt::Checks{.numerics = vm.count("check-numerics") > 0});
  // The plan knows the peak of intermediate buffers exactly; outputs come on top.
  std::uint64_t need = exe.peak_bytes();
  for (ir::NodeId id : g->outputs) need += g->node(id).type.nbytes();
  if (limit != 0 && need > limit)
    throw UserError(file + ": running it needs " + format_bytes(need) + " (intermediates at their peak plus outputs), over the limit of " +
                    format_bytes(limit) + (vm.count("max-memory") ? "" : ", the memory available now") +
                    "; raise it with --max-memory if you are sure");
  const std::vector<Array> results = exe.run(inputs);

  for (std::size_t i = 0; i < results.size(); ++i) {
    const std::string path = (dir / (output_name(*g, i) + ".npy")).string();
    io::save_npy(path, results[i]);
    std::cout << "wrote " << path << "  " << to_string(results[i].type()) << "\n";
  }
  return kOk;
}

}  // namespace mg::tools
