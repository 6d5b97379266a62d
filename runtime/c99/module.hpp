// The C99 emitter (DESIGN invariant 6: the second executor): one graph -> one C99
// translation unit and its header, with one entry function taking typed pointers for
// the inputs, outputs and persistent state. Every op's C comes from its registry entry
// (OpDef::emit_c); this module only schedules: which elementwise nodes are inlined into
// their consumer's loop, where each buffer lives in the one arena, and the entry's
// signature. Split by concern: schedule.cpp (inlining + arena plan), emit_steps.cpp (the
// loops), module.cpp (file layout), jit.cpp (cc + dlopen), export.cpp (standalone files).
#pragma once
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "minigrad/ir/array.hpp"
#include "minigrad/ir/graph.hpp"
#include "minigrad/runtime/c99/schedule.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg::rt::c99 {

struct Options {
  std::string name = "model";  // the C prefix: <name>_run, <name>.h
  // Standalone: no BLAS (our own GEMM, ir/ops/gemm_c99.cpp), one static arena inside the
  // file, no dependency beyond <math.h> and <stdint.h> (and, on x86 with AVX2/AVX-512, the
  // compiler's <immintrin.h>). Otherwise (the JIT): the same GEMM, and the caller passes the
  // arena.
  bool standalone = true;
  // Not standalone: the GEMM and conv kernels are pointers to the library's compiled copies
  // (ir/ops/c_kernels.hpp), set through <name>_bind when the module is loaded
  // (Module::bound_kernels); cc then compiles no kernel text. Needs native::kernels().
  bool host_kernels = false;
  // Graph inputs embedded as `static const` arrays (trained weights): by input name.
  std::map<std::string, Array, std::less<>> weights;
  // Compute what depends only on embedded weights and constants at export time (by the
  // interpreter) and embed the results instead (e.g. a weight's transpose).
  bool fold_constants = true;
  // After every loop over floats, check its value for NaN/Inf: the entry then returns
  // -(k + 1) for the first node %k whose value is not finite (the glass box, runtime/
  // glassbox/numerics.hpp, reads the buffers, still intact, to name the root cause). A
  // node inside a loop body is checked too: k = (graph size) + s for Module::numerics_sites[s].
  bool check_numerics = false;
};

// constant (the JIT only): a large graph constant the caller passes by pointer (its
// literal), so the source, and the compiled module's cache key, do not depend on the
// values (a frozen model's weights: recompiling after retraining hits the cache).
enum class ArgKind { input, output, state_in, state_out, constant };

// One parameter of the entry function, in order.
struct Arg {
  ArgKind kind;
  std::string name;    // graph input / output / state name
  std::string c_name;  // the C parameter
  Type type;
  ir::NodeId node;     // the input node, the output node, the state's update node, or the constant
  // The entry only reads it (a `const T*` parameter).
  bool read_only() const { return kind == ArgKind::input || kind == ArgKind::state_in || kind == ArgKind::constant; }
};

// A numerics check compiled into a region (a loop body): node `node` of the region reached
// through `path` (node, region index) from the top-level graph, so a report names that
// node, its lines and the loop, as the interpreter does.
struct NumericsSite {
  std::vector<std::pair<ir::NodeId, std::size_t>> path;
  ir::NodeId node;
};

struct Module {
  std::string name;
  std::string header, source;
  std::vector<Arg> args;
  std::size_t arena_bytes = 0;     // the one arena: every planned buffer at its offset
  std::size_t peak_bytes = 0;      // bytes of planned buffers alive at the worst point
  std::size_t weight_bytes = 0;    // embedded weights (and values precomputed from them)
  std::size_t constant_bytes = 0;  // graph constants
  std::size_t num_kernels = 0;     // loops (materialised nodes) per run
  std::size_t num_inlined = 0;     // elementwise nodes folded into a consumer's loop
  Schedule schedule;               // where every value lives (the glass box reads it)
  std::vector<NumericsSite> numerics_sites;  // Options::check_numerics: checks in regions
  // Options::host_kernels: the kernel pointers that `int <name>_bind(mg_kernel_fn
  // (*kernel)(const char*))` sets, each kernel(c_name) cast to its type; 0: all were found.
  std::vector<std::string> bound_kernels;
};

// Emits `outputs` and the state updates of `g`. The entry function returns 0, or k + 1
// when node k failed at run time (an index out of range), or -(k + 1) when node k made
// a non-finite value (Options::check_numerics; k >= g.size(): the body node of
// numerics_sites[k - g.size()]). Throws UserError naming the op
// when some node's op has no C emission.
Module emit_module(const ir::Graph& g, const std::vector<ir::NodeId>& outputs,
                   const std::vector<StateUpdate>& state, const Options& options);

// A C identifier from a name ("fc1.weight" -> "fc1_weight").
std::string c_identifier(const std::string& name);
// A name made safe to show inside a C comment ("a*/b" -> "a%2A%2Fb"): IR names are user
// input and must never end a comment in generated code.
std::string c_comment_text(const std::string& text);

}  // namespace mg::rt::c99
