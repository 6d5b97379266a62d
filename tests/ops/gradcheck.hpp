// Finite-difference gradient checking shared by the registry-driven op suite and the
// autodiff tests: first order (VJP vs central differences of <out, u>) and second order
// (Hessian-vector products: the gradient of <grad, v> vs central differences of it).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "minigrad/ir/array.hpp"
#include "minigrad/ir/graph.hpp"
#include "minigrad/ir/op_registry.hpp"

namespace mg::testing {

struct GradCheckResult {
  bool ok = true;
  double worst = 0;    // worst |analytic - numeric| / (1 + |numeric|)
  std::string report;  // what disagreed, where
};

// `inputs` are the graph's input nodes (in order) with values; `out` the value checked.
// Only float inputs are differentiated. order: 1 or 2.
GradCheckResult check_gradients(ir::Value out, const std::vector<ir::Value>& inputs,
                                const std::vector<Array>& values, int order, double tol,
                                std::uint64_t seed);

// Draws a float array for `domain` (deterministic from seed).
Array sample(const Type& type, ir::Domain domain, std::uint64_t seed);

}  // namespace mg::testing
