// Jacobians built from the transformations, not from loops over elements:
//   jacrev(y, x)  = vmap over the rows of the identity of the VJP      (one backward pass, batched)
//   jacfwd(y, x)  = vmap over the columns of the identity of the JVP   (one forward pass, batched)
//   hessian(y, x) = jacfwd(grad(y, x), x)                              (forward over reverse)
// Each result is shaped y.shape ++ x.shape and is ordinary IR (it differentiates and batches
// again). The graph grows by one transformed copy of the path from x to y, whatever the
// size of x (the batch of cotangents/tangents runs as one batched computation).
// Pre: x, y float values of one graph; hessian needs a scalar y.
#pragma once
#include "minigrad/ir/graph.hpp"

namespace mg::passes {

ir::Value jacrev(ir::Value y, ir::Value x);
ir::Value jacfwd(ir::Value y, ir::Value x);
ir::Value hessian(ir::Value y, ir::Value x);

}  // namespace mg::passes
