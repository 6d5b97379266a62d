// The pass table and the pipeline driver; see pass_manager.hpp.
#include "minigrad/passes/pass_manager.hpp"

#include <chrono>
#include <ctime>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "minigrad/ir/dot.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/ir/verifier.hpp"
#include "minigrad/passes/cse.hpp"
#include "minigrad/passes/dce.hpp"
#include "minigrad/passes/fold.hpp"
#include "minigrad/passes/fuse.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/passes/hoist.hpp"
#include "minigrad/passes/rewrite.hpp"
#include "minigrad/passes/rewriter.hpp"

namespace mg::passes {

namespace {

const PassEntry kPasses[] = {
    {"grad", "append d(output)/d(input) for every float input (one scalar float output)", differentiate_inputs},
    {"rewrite", "apply the proven rewrite rules (strict: exact ones only) to a fixed point",
     [](const ir::Graph& g) { return rewrite(g).graph; }},
    {"rewrite-fast", "the same with `real` rules too (fast-math: equal over the reals, not bit for bit)",
     [](const ir::Graph& g) { return rewrite(g, {}, {.mode = RewriteMode::fast_math}).graph; }},
    {"fold", "evaluate constant subgraphs with the registry kernels", [](const ir::Graph& g) { return fold_constants(g); }},
    {"cse", "merge identical nodes (hash-consing)", eliminate_common_subexpressions},
    {"fuse", "fuse elementwise chains (+ broadcasts, matmul prologues) into single-loop nodes", fuse_elementwise},
    {"dce", "drop nodes the outputs do not need", eliminate_dead_code},
    {"hoist", "move loop-invariant nodes out of loop bodies (scan, while_loop)", hoist_loop_invariants},
};

double thread_cpu_ms() {
  std::timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return 1e3 * static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_nsec);
}

std::size_t count_ops(const ir::Graph& g) {
  std::size_t n = 0;
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& node = g.node(id);
    if (node.kind == ir::NodeKind::op) ++n;
    for (const auto& r : node.regions) n += count_ops(*r);
  }
  return n;
}

}  // namespace

std::span<const PassEntry> registered_passes() { return kPasses; }

std::unique_ptr<ir::Graph> differentiate_inputs(const ir::Graph& g) {
  if (g.outputs.size() != 1)
    throw UserError("grad pass: the graph must have exactly one output, it has " + std::to_string(g.outputs.size()));
  auto out = clone_graph(g);
  ir::Value y = out->value(out->outputs[0]);
  if (y.rank() != 0 || !is_float(y.dtype()))
    throw UserError("grad pass: the output must be a float scalar, it is " + to_string(y.type()));
  std::vector<ir::Value> wrt;
  for (ir::NodeId id : out->inputs())
    if (is_float(out->node(id).type.dtype)) wrt.push_back(out->value(id));
  if (wrt.empty()) return out;
  if (out->output_names.empty()) out->output_names.push_back("");
  std::vector<ir::Value> grads = grad(y, wrt);
  for (std::size_t i = 0; i < wrt.size(); ++i) {
    out->outputs.push_back(grads[i].id);
    out->output_names.push_back("grad_" + wrt[i].node().name);
  }
  return out;
}

PipelineResult run_pipeline(const ir::Graph& g, std::string_view spec, const PipelineOptions& options) {
  std::vector<std::string> names = parse_pipeline(spec);
  if (!options.dump_after.empty()) parse_pipeline(options.dump_after);  // an unknown name is an error
  PipelineResult result;
  std::size_t ops = 0;  // count_ops(*current), carried from one pass to the next (a walk of every node)
  bool ops_known = false;
  const ir::Graph* current = &g;  // the input until the first pass has run (no up-front copy)
  for (const std::string& name : names) {
    const PassEntry* entry = nullptr;
    for (const PassEntry& e : kPasses)
      if (e.name == name) entry = &e;
    if (!entry->fn) throw UserError("pass '" + name + "' is not available yet (not linked into the pass manager)");
    PassStats st;
    st.name = name;
    st.nodes_before = current->size();
    st.ops_before = ops_known ? ops : count_ops(*current);
    const auto t0 = std::chrono::steady_clock::now();
    const double c0 = thread_cpu_ms();
    std::unique_ptr<ir::Graph> next;
    try {
      next = entry->fn(*current);
    } catch (const UserError& e) {
      throw UserError("pass '" + name + "': " + e.message(), e.where());
    }
    st.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    st.cpu_ms = thread_cpu_ms() - c0;
    st.nodes_after = next->size();
    st.ops_after = ops = count_ops(*next);
    ops_known = true;
    if (options.verify) {
      try {
        ir::verify(*next);
      } catch (const VerifyError& e) {
        throw VerifyError("after pass '" + name + "': " + e.message(), e.where());
      }
    }
    if (options.dump_after == name) {
      std::ostream& os = options.dump ? *options.dump : std::cerr;
      if (options.dump_dot) {
        ir::DotOptions dot;
        dot.title = "after " + name;
        os << ir::to_dot(*next, {}, dot);
      } else {
        os << "// after " << name << "\n" << ir::to_text(*next);
      }
    }
    result.graph = std::move(next);
    current = result.graph.get();
    result.stats.push_back(std::move(st));
  }
  if (!result.graph) result.graph = clone_graph(g);
  return result;
}

std::string format_stats(std::span<const PassStats> stats) {
  std::ostringstream os;
  char line[160];
  std::snprintf(line, sizeof line, "%-10s %21s %21s %10s\n", "pass", "nodes", "op nodes (+regions)", "ms");
  os << line;
  double total = 0;
  for (const PassStats& s : stats) {
    std::snprintf(line, sizeof line, "%-10s %9zu -> %9zu %9zu -> %9zu %10.3f\n", s.name.c_str(), s.nodes_before,
                  s.nodes_after, s.ops_before, s.ops_after, s.ms);
    os << line;
    total += s.ms;
  }
  std::snprintf(line, sizeof line, "%-10s %21s %21s %10.3f\n", "total", "", "", total);
  os << line;
  return os.str();
}

}  // namespace mg::passes
