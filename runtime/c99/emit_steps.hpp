// The loops of the entry function, one per scheduled step (see emit_steps.cpp).
#pragma once
#include <functional>
#include <string>

#include "minigrad/ir/emit_c.hpp"
#include "minigrad/runtime/c99/schedule.hpp"

namespace mg::rt::c99 {

struct StepOptions {
  bool blas = false;
  std::function<void(const std::string& name, const std::string& code)> support;
  bool check_numerics = false;  // Options::check_numerics
};

// Writes every step of `s`; value k is reachable as the pointer `v<k>` (declared by the
// caller for every value a step reads or writes).
void emit_steps(const ir::Graph& g, const Schedule& s, const StepOptions& o, ir::CWriter& w);

}  // namespace mg::rt::c99
