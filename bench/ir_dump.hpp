// MG_BENCH_IR_DIR=dir: the IR a benchmark's --profile times refer to. `<name>.ir` is the
// text IR, which numbers values afresh; the telemetry names nodes by id, so `<name>.nodes`
// lists one line per node under that name, with its operands, type and a fused node's
// body ops.
#pragma once
#include <cstdlib>
#include <fstream>
#include <string>

#include <minigrad/ir/printer.hpp>
#include <minigrad/minigrad.hpp>

namespace mg::bench {

inline void dump_ir_for_profile(const std::string& name, const rt::Executable& exe) {
  const char* dir = std::getenv("MG_BENCH_IR_DIR");
  if (!dir) return;
  const ir::Graph& g = exe.graph();
  std::ofstream(std::string(dir) + "/" + name + ".ir") << ir::to_text(g);
  std::ofstream f(std::string(dir) + "/" + name + ".nodes");
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& n = g.node(id);
    f << ir::value_name(g, id) << " = " << n.op_name() << "(";
    for (std::size_t k = 0; k < n.inputs.size(); ++k) f << (k ? ", " : "") << ir::value_name(g, n.inputs[k]);
    f << ") : " << to_string(n.type);
    for (const auto& body : n.regions) {
      f << " {";
      for (ir::NodeId b = 0; b < body->size(); ++b) f << " " << body->node(b).op_name();
      f << " }";
    }
    f << "\n";
  }
}

}  // namespace mg::bench
