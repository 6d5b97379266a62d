// Family defaults for the registry's forward-mode (jvp) and batching (batch) columns, shared
// by the ir/ops/*_transforms.cpp files. Every rule is written with the IR builder, so what
// it builds is ordinary IR: it differentiates again and batches again (vmap of vmap).
// Light: no xtensor. Passes never include this; they call the columns.
#pragma once
#include <string>
#include <vector>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"

namespace mg::ir::xf {

// ---- forward mode ----------------------------------------------------------------------

// a + b where an invalid Value is a zero tangent.
Value add_tangents(Value a, Value b);
// The tangent or, when invalid, zeros shaped like `like`.
Value tangent_or_zeros(Value t, Value like);

// Elementwise ops: the Jacobian w.r.t. each operand is diagonal, so J_k v = J_k^T v; the
// op's own VJP with the tangent as cotangent gives it (operand k's entry of the VJP).
// Requires operand types equal to the output type (not cast, not a bool `where` condition:
// those get no tangent anyway).
JvpFn jvp_diagonal();
// Ops linear in their float operands jointly (reshape, slice, reduce_sum, gather, ...): the
// op applied to the tangents (zeros for operands without one; integer operands as they are).
JvpFn jvp_linear();
// Ops linear in each float operand separately (matmul, conv2d and its adjoints): the sum
// over operands k of the op with operand k replaced by its tangent.
JvpFn jvp_multilinear();
// Reductions whose outputs read disjoint input slices (max, min, prod, var, logsumexp):
// J^T 1 holds every partial derivative, so J v = reduce_sum(v * J^T 1) over `axes`. Ties
// and zeros are handled exactly as the op's VJP handles them, so <u, Jv> = <J^T u, v>.
JvpFn jvp_reduction();

// ---- batching --------------------------------------------------------------------------

// The batch axis of `v` moved to the front (no node when it is there already).
Value move_to_front(Value v, int axis);
// Operand k of a batched node with its batch axis in front; an unbatched operand is
// broadcast along a new front axis of the batch size.
Value to_front(const BatchArgs& a, std::size_t k);
// Every operand to_front.
std::vector<Value> all_to_front(const BatchArgs& a);
// The node's op applied to `in` with `attrs`, batched along axis 0.
Batched rebuild(const BatchArgs& a, std::vector<Value> in, Attrs attrs);
// `axes` + 1, for attributes naming axes of the per-example value.
I64List shifted(const I64List& axes);
Attrs with(Attrs attrs, const std::string& name, AttrValue v);

// Elementwise ops (and one_hot): every operand in front, the op unchanged.
BatchFn batch_elementwise();
// Ops with an `axes` list (reductions, flip, squeeze, unsqueeze): operand in front, axes + 1.
BatchFn batch_axes();
// Ops with one `axis` whose operands all share the batch (softmax, argmax, cumsum, gather,
// scatter_add, concat): every operand in front, axis + 1.
BatchFn batch_axis();
// N-first image ops (pooling): [B, N, ...] -> [B*N, ...], the op, and back.
BatchFn batch_merge_n();

// Fills the jvp and batch columns of every registered op (ir/ops/*_transforms.cpp).
void register_elementwise_transforms();
void register_reduce_transforms();
void register_shape_transforms();
void register_index_transforms();
void register_linalg_nn_transforms();
void register_creation_transforms();
void register_loop_transforms();

}  // namespace mg::ir::xf
