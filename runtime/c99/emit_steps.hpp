// The loops of the entry function, one per scheduled step (see emit_steps.cpp).
#pragma once
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "minigrad/ir/emit_c.hpp"
#include "minigrad/runtime/c99/module.hpp"
#include "minigrad/runtime/c99/schedule.hpp"

namespace mg::rt::c99 {

// How a step function gets value k's pointer: a buffer in the arena it derives from
// `arena` itself (so GCC sees, as in one function, that buffers at distinct offsets do not
// overlap); any other (inputs, outputs, states, constants) it takes as a parameter.
struct StepPointer {
  std::string type;                   // "const float*", "float*"; empty: no pointer declared
  std::optional<std::size_t> arena_offset;  // the buffer's byte offset in the arena
};

struct StepOptions {
  bool host_kernels = false;  // CLoopArgs::host_kernels
  std::function<void(const std::string& name, const std::string& code)> support;
  std::string prefix = "v";  // value k is the pointer <prefix><k>
  std::string fail;          // a run-time error's statement; empty: `return k + 1;` for node k
  bool check_numerics = false;  // Options::check_numerics
  // Checks inside regions: the region path of the graph being written (empty: the top
  // level), where its check sites go, and the top-level graph's size (codes beyond it).
  std::vector<std::pair<ir::NodeId, std::size_t>> path;
  std::vector<NumericsSite>* sites = nullptr;
  std::size_t site_base = 0;
  // The entry function's steps as functions of their own (see emit_steps.cpp): how each
  // gets value k's pointer, and where their definitions go. Null: the steps are written
  // inline (inside regions).
  const std::vector<StepPointer>* pointers = nullptr;
  std::string* functions = nullptr;
};

// The value pointers (`<prefix><k>`, not `mg_r0_<prefix><k>`) that C text names, of the
// values with a declared pointer, in increasing order.
std::vector<ir::NodeId> pointers_named(const std::string& text, const std::string& prefix,
                                       const std::vector<StepPointer>& declared);

// Writes every step of `s`; value k is reachable as the pointer `<prefix><k>` (declared
// by the caller for every value a step reads or writes). Steps whose op owns regions get
// a region writer (emit_region) placing each body's arena in the step's scratch, after
// the op's own scratch bytes.
void emit_steps(const ir::Graph& g, const Schedule& s, const StepOptions& o, ir::CWriter& w);

// Writes region `body` inline as one C block: its parameters read from `args`, its
// results stored to `results` (C pointer expressions), its buffers at `base` (an
// `unsigned char*` expression) as its own schedule plans them. Errors in the body report
// `o.fail`.
void emit_region(const ir::Graph& body, const std::string& base, std::span<const std::string> args,
                 std::span<const std::string> results, const StepOptions& o, ir::CWriter& w);

}  // namespace mg::rt::c99
