// Moment propagation in the DSL: the mean and variance of outputs when some inputs are
// random (independent elements with given means and variances), in one pass over the
// graph (passes/moments.hpp; the per-op rules are the registry's `moments` column).
//
//   Graph g; auto x = g.input("x", {n, 4}, f64);
//   Tensor y = model(x);
//   auto mx = g.input("mx", {n, 4}, f64), vx = g.input("vx", {n, 4}, f64);
//   MomentsOf m = propagate_moments({y}, {x}, {mx}, {vx});   // m.mean[0], m.var[0]
#pragma once
#include <string>
#include <vector>

#include "minigrad/dsl/tensor.hpp"
#include "minigrad/passes/moments.hpp"

namespace mg {

struct MomentsOf {
  std::vector<Tensor> mean, var;               // one per output
  std::vector<passes::MomentStep> report;      // per propagated node: op, kind, your line
  // One line per propagated node ("relu  exact  model.cpp:12"), and a count per kind.
  std::string report_text() const;
};

MomentsOf propagate_moments(const std::vector<Tensor>& outputs, const std::vector<Tensor>& random,
                            const std::vector<Tensor>& means, const std::vector<Tensor>& vars,
                            Loc loc = Loc::current());

}  // namespace mg
