// transpose_products: a transposed product becomes the product of the transposes,
// permute(matmul(a, b), [1, 0]) -> matmul(bᵀ, aᵀ) (rank 2, the matmul read by nothing
// else), where a transposed transpose is its source. The backward pass of a Linear layer
// computes its weight's gradient as (xᵀ g)ᵀ; after this the GEMM writes gᵀ x in the
// weight's layout and no [in, out] matrix is computed and then copied transposed (both
// executors read the remaining transposes in place: runtime/view_plan.hpp, EmitC::view).
// Pre: a verified graph with outputs. Post: same inputs and outputs; each element is the
// same sum of the same products (our GEMM sums over k in the same order whichever operand
// is which; a BLAS fallback may round differently, as it may for any matmul).
// Run by fuse_elementwise before it groups, so the new matmul can take an epilogue.
#pragma once
#include <memory>

#include "minigrad/ir/graph.hpp"

namespace mg::passes {

// nullptr when the graph has no transposed product (nothing copied).
std::unique_ptr<ir::Graph> transpose_products(const ir::Graph& g);

}  // namespace mg::passes
