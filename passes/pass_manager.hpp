// The pass manager: runs a pipeline of named passes over a graph — the table of contents
// of the optimizer. A pipeline is a spec string, `grad,rewrite,fold,cse,fuse,dce`
// (parsed with Boost.Spirit X3 in pipeline_parser.cpp); each name is looked up in one
// table (pass name -> function). Between passes it verifies the graph (always in debug
// builds, on request otherwise), records statistics (nodes before/after, time) and can
// dump the graph after a named pass as text IR or DOT.
// Pre: a verified graph whose `outputs` are everything the caller needs (e.g. a training
// step's loss and persistent-state updates). Post: a new graph with the same inputs and
// outputs one to one (`grad` appends outputs); the input graph is not modified.
#pragma once
#include <functional>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minigrad/ir/graph.hpp"

namespace mg::passes {

// What a training step runs by default (nn::TrainOptions::passes).
inline constexpr std::string_view kDefaultPipeline = "fold,cse,fuse,dce";

using PassFn = std::function<std::unique_ptr<ir::Graph>(const ir::Graph&)>;
struct PassEntry {
  std::string_view name;
  std::string_view summary;
  PassFn fn;  // empty: named but not available (an error when a pipeline names it)
};
// The pass table, in the order `minigrad opt --help` lists it.
std::span<const PassEntry> registered_passes();

struct PassStats {
  std::string name;
  std::size_t nodes_before = 0, nodes_after = 0;  // top-level nodes
  std::size_t ops_before = 0, ops_after = 0;      // op nodes, region bodies included
  double ms = 0;      // wall clock
  double cpu_ms = 0;  // the calling thread's CPU time: wall less the waits for a core on a busy machine
};

struct PipelineOptions {
#ifdef NDEBUG
  bool verify = false;  // run ir::verify after every pass
#else
  bool verify = true;
#endif
  std::string dump_after{};        // a pass name: dump the graph after it (every occurrence)
  bool dump_dot = false;           // as DOT instead of text IR
  std::ostream* dump = nullptr;    // where to dump (nullptr: std::cerr)
};

struct PipelineResult {
  std::unique_ptr<ir::Graph> graph;
  std::vector<PassStats> stats;
};

// Pass names of a spec: name { "," name }, blanks allowed; UserError naming the column
// for a syntax error or an unknown pass. The empty spec is the empty pipeline.
std::vector<std::string> parse_pipeline(std::string_view spec);

// Runs `spec` on `g`; errors of a pass (or of the verifier after it) name the pass.
PipelineResult run_pipeline(const ir::Graph& g, std::string_view spec, const PipelineOptions& options = {});

// A table of the statistics: pass, nodes before -> after, op nodes, milliseconds.
std::string format_stats(std::span<const PassStats> stats);

// `grad` in a pipeline: for a graph with one scalar float output, appends d(output)/d(x)
// for every float input x as outputs named grad_<x> (as `minigrad grad`).
std::unique_ptr<ir::Graph> differentiate_inputs(const ir::Graph& g);

}  // namespace mg::passes
