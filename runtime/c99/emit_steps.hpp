// The loops of the entry function, one per scheduled step (see emit_steps.cpp).
#pragma once
#include <functional>
#include <span>
#include <string>

#include "minigrad/ir/emit_c.hpp"
#include "minigrad/runtime/c99/module.hpp"
#include "minigrad/runtime/c99/schedule.hpp"

namespace mg::rt::c99 {

struct StepOptions {
  bool blas = false;
  std::function<void(const std::string& name, const std::string& code)> support;
  std::string prefix = "v";  // value k is the pointer <prefix><k>
  std::string fail;          // a run-time error's statement; empty: `return k + 1;` for node k
  bool check_numerics = false;  // Options::check_numerics
  // Checks inside regions: the region path of the graph being written (empty: the top
  // level), where its check sites go, and the top-level graph's size (codes beyond it).
  std::vector<std::pair<ir::NodeId, std::size_t>> path;
  std::vector<NumericsSite>* sites = nullptr;
  std::size_t site_base = 0;
};

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
