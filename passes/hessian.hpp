// hessian(y, x): the full Hessian of a scalar y with respect to x, shaped x.shape ++
// x.shape, built by differentiating each component of grad(y, x) again (grad of grad).
// The graph grows by one backward pass per element of x: meant for small x (PINNs,
// tests, curvature probes), not for parameter vectors of real models.
#pragma once
#include "minigrad/ir/graph.hpp"

namespace mg::passes {

ir::Value hessian(ir::Value y, ir::Value x);

}  // namespace mg::passes
