// What subcommands share; see cli.hpp.
#include "tools/cli.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/parser.hpp"
#include "minigrad/ir/verifier.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/runtime/io/atomic_file.hpp"
#include "minigrad/runtime/io/npy.hpp"

namespace mg::tools {

bool parse_command_line(const Command& cmd, Args args, po::options_description options,
                        const std::vector<std::string>& positional, std::size_t optional_from,
                        po::variables_map& vm) {
  options.add_options()("help,h", "show this help and exit");
  po::options_description all;
  all.add(options);
  all.add_options()("operands", po::value<std::vector<std::string>>());
  po::positional_options_description operands;
  operands.add("operands", -1);
  try {
    // No abbreviated long options: `--co` must not silently mean --cotangent.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(std::vector<std::string>(args.begin(), args.end()))
                  .options(all)
                  .positional(operands)
                  .style(style)
                  .run(),
              vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  if (vm.count("help")) {
    print_command_help(std::cout, cmd, &options);
    return false;
  }
  std::vector<std::string> given;
  if (vm.count("operands")) given = vm["operands"].as<std::vector<std::string>>();
  const bool variadic = !positional.empty() && positional.back().ends_with("...");
  if (given.size() < optional_from) throw UsageError("missing operand " + positional[given.size()]);
  if (!variadic && given.size() > positional.size())
    throw UsageError("unexpected operand '" + given[positional.size()] + "'");
  for (std::size_t i = 0; i < positional.size(); ++i) {
    if (variadic && i + 1 == positional.size()) {
      std::vector<std::string> rest(given.begin() + static_cast<std::ptrdiff_t>(std::min(i, given.size())),
                                    given.end());
      vm.insert({positional[i], po::variable_value(boost::any(rest), false)});
    } else if (i < given.size()) {
      vm.insert({positional[i], po::variable_value(boost::any(given[i]), false)});
    }
  }
  return true;
}

std::unique_ptr<ir::Graph> load_graph(const std::string& path) {
  std::unique_ptr<ir::Graph> g = ir::parse_file(path);
  ir::verify(*g);
  return g;
}

std::string output_name(const ir::Graph& g, std::size_t i) {
  if (i < g.output_names.size() && !g.output_names[i].empty()) return g.output_names[i];
  return "out" + std::to_string(i);
}

void check_file_name(const std::string& name, const std::string& what) {
  bool ok = !name.empty() && name != "." && name != ".." && name.size() <= 200;
  for (char c : name)
    ok = ok && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                c == '.' || c == '-');
  if (!ok)
    throw UserError(what + " '" + name +
                    "' cannot be used as a file name (allowed: letters, digits, '_', '.', '-')");
}

std::size_t append_input_gradients(ir::Graph& g, const Array* cotangent, const std::string& source) {
  if (g.outputs.size() != 1)
    throw UserError(source + ": gradients need a graph with exactly one output; it has " +
                    std::to_string(g.outputs.size()));
  const ir::Value out = g.value(g.outputs[0]);
  const std::string out_name = output_name(g, 0);
  if (!is_float(out.dtype()))
    throw UserError(source + ": output '" + out_name + "' is " + to_string(out.type()) +
                    ": only float outputs have gradients");
  std::vector<ir::Value> wrt;
  for (ir::NodeId id : g.inputs())
    if (is_float(g.node(id).type.dtype)) wrt.push_back(g.value(id));

  std::vector<ir::Value> grads;
  if (cotangent != nullptr) {
    if (cotangent->type() != out.type())
      throw UserError("cotangent " + io::describe_npy(*cotangent) + " does not match output '" + out_name +
                      "' of type " + to_string(out.type()));
    ir::Value seed;
    {
      ir::RoleScope backward(g, ir::Role::adjoint);
      seed = g.add_constant(*cotangent);
    }
    const std::vector<ir::Value> outs{out}, seeds{seed};
    grads = passes::vjp(outs, seeds, wrt);
  } else {
    if (out.rank() != 0)
      throw UserError(source + ": output '" + out_name + "' is " + to_string(out.type()) +
                      ", not a scalar: give a cotangent of that type (--cotangent PATH.npy)");
    grads = passes::grad(out, wrt);
  }
  g.output_names.resize(g.outputs.size());
  for (std::size_t i = 0; i < grads.size(); ++i) {
    g.outputs.push_back(grads[i].id);
    g.output_names.push_back("grad_" + wrt[i].node().name);
  }
  return grads.size();
}

void write_text(const std::string& path, const std::string& text) {
  if (path.empty() || path == "-") {
    std::cout << text << std::flush;
    return;
  }
  io::write_file_atomically(path, text, path);  // never half a file over the user's old one
}

std::uint64_t parse_size(const std::string& text, const std::string& option) {
  std::size_t used = 0;
  unsigned long long n = 0;
  try {
    if (text.empty() || text[0] == '-') throw std::invalid_argument("sign");
    n = std::stoull(text, &used);
  } catch (const std::exception&) {
    throw UsageError(option + " expects a byte count such as 512M or 4G, got '" + text + "'");
  }
  const std::string suffix = text.substr(used);
  int shift = 0;
  if (suffix == "K" || suffix == "KiB") shift = 10;
  else if (suffix == "M" || suffix == "MiB") shift = 20;
  else if (suffix == "G" || suffix == "GiB") shift = 30;
  else if (suffix == "T" || suffix == "TiB") shift = 40;
  else if (!suffix.empty()) throw UsageError(option + ": unknown size suffix '" + suffix + "' (use K, M, G or T)");
  if (shift && n > (~0ull >> shift)) throw UsageError(option + ": '" + text + "' is too large");
  return static_cast<std::uint64_t>(n) << shift;
}

std::uint64_t available_memory() {
  std::ifstream f("/proc/meminfo");
  std::string key, unit;
  std::uint64_t kib = 0;
  while (f >> key >> kib) {
    std::getline(f, unit);
    if (key == "MemAvailable:") return kib * 1024;
  }
  return 0;
}

std::string format_bytes(std::uint64_t n) {
  static const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  char buf[64];
  if (u == 0) std::snprintf(buf, sizeof buf, "%llu bytes", static_cast<unsigned long long>(n));
  else std::snprintf(buf, sizeof buf, "%.1f %s (%llu bytes)", v, units[u], static_cast<unsigned long long>(n));
  return buf;
}

}  // namespace mg::tools
