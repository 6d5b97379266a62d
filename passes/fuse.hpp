// fuse_elementwise: chains of elementwise ops (and reductions of them) become one `fused`
// node (ir/ops/fused.cpp, fused_reduce.cpp; the IR contract is ir/README.md, "Fused nodes").
//
// What: walking from the outputs back, each elementwise op roots a group and absorbs the
// elementwise ops feeding it whose only consumer is in the group (so no value leaves the
// group but the root's), plus — copied into the group even when shared — the
// `broadcast_to`s and `full`s of the loop shape that feed it (a `full` becomes a 0-d
// constant broadcast in the body). A matmul feeding the group, of the root's type and used
// only there, becomes the group's GEMM prologue (matmul + bias + activation is one node).
// A plain-fold reduction (registry `fold`: sum, mean, max, min, prod) roots a group too —
// kind "reduce", the loop over its operand — where that pays: its operand is an
// elementwise op read by nothing else (or a broadcast), so the reduced value is folded as
// it is computed and never stored; a producer with other readers is stored anyway.
// Groups of two or more nodes become `fused` nodes; their outside operands are the fused
// node's inputs, constants are copied into the body (sharing storage). The bodies of
// loops (nodes owning regions, other than fused ones) are fused the same way, each alone.
// First, transposed products become products of transposes (transpose_product.hpp).
// Pre: a verified graph with outputs; run after grad (fused nodes are not differentiable).
// Post: same inputs and outputs, bit-identical results (each body op runs its own
// registry kernel; a transposed product sums the same products in the same order in our
// GEMM, and may round differently only where a matmul falls back to BLAS), fewer nodes and no full-size buffers for values inside groups;
// idempotent (fused nodes are neither elementwise nor reductions, so nothing fuses twice).
#pragma once
#include <memory>

#include "minigrad/ir/graph.hpp"

namespace mg::passes {

std::unique_ptr<ir::Graph> fuse_elementwise(const ir::Graph& g);

}  // namespace mg::passes
