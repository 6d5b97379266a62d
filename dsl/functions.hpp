// The non-elementwise DSL: reductions, softmax, matmul, shape manipulation, indexing
// and casts. Each function takes Tensors (an expression converts implicitly, lowering at
// the caller's line), normalises negative axes, checks what the IR op would reject with
// a message in the user's terms, and appends the IR node(s) stamped with the caller's line.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "minigrad/dsl/tensor.hpp"

namespace mg {

// ---- reductions (axes: one, several or all; negative axes count from the end) ----
Tensor sum(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor mean(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor max(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor min(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor prod(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
// Variance with `correction` subtracted from the count (1: unbiased, as torch.var).
Tensor var(const Tensor& x, Axes axes = {}, std::int64_t correction = 1, bool keepdim = false,
           Loc loc = Loc::current());
Tensor logsumexp(const Tensor& x, Axes axes = {}, bool keepdim = false, Loc loc = Loc::current());
Tensor argmax(const Tensor& x, std::int64_t axis, bool keepdim = false, Loc loc = Loc::current());
Tensor argmin(const Tensor& x, std::int64_t axis, bool keepdim = false, Loc loc = Loc::current());
Tensor softmax(const Tensor& x, std::int64_t axis = -1, Loc loc = Loc::current());
Tensor log_softmax(const Tensor& x, std::int64_t axis = -1, Loc loc = Loc::current());

// ---- linear algebra ----
// torch.matmul semantics: 1-D operands are promoted (and the added axis removed), batch
// dimensions broadcast.
Tensor matmul(const Tensor& a, const Tensor& b, Loc loc = Loc::current());

// ---- shape ----
Tensor reshape(const Tensor& x, Shape shape, Loc loc = Loc::current());  // one -1 allowed
Tensor permute(const Tensor& x, std::vector<std::int64_t> perm, Loc loc = Loc::current());
Tensor transpose(const Tensor& x, std::int64_t d0, std::int64_t d1, Loc loc = Loc::current());
Tensor broadcast_to(const Tensor& x, Shape shape, Loc loc = Loc::current());
Tensor squeeze(const Tensor& x, Axes axes = {}, Loc loc = Loc::current());  // all: every size-1 axis
Tensor unsqueeze(const Tensor& x, std::int64_t axis, Loc loc = Loc::current());
Tensor flatten(const Tensor& x, std::int64_t start = 0, std::int64_t end = -1, Loc loc = Loc::current());

// One axis of a slice, with Python semantics: missing bounds mean the whole extent,
// negative bounds count from the end, out-of-range bounds clamp, step may be negative.
struct Slice {
  std::optional<std::int64_t> start, stop;
  std::int64_t step = 1;
};
Tensor slice(const Tensor& x, std::vector<Slice> per_axis, Loc loc = Loc::current());
Tensor slice(const Tensor& x, std::int64_t axis, std::optional<std::int64_t> start,
             std::optional<std::int64_t> stop, std::int64_t step = 1, Loc loc = Loc::current());
Tensor concat(const std::vector<Tensor>& xs, std::int64_t axis = 0, Loc loc = Loc::current());
Tensor stack(const std::vector<Tensor>& xs, std::int64_t axis = 0, Loc loc = Loc::current());
// Constant padding: (before, after) per leading axis, as numpy.pad's pad_width.
Tensor pad(const Tensor& x, std::vector<std::pair<std::int64_t, std::int64_t>> widths, double value = 0,
           Loc loc = Loc::current());
Tensor flip(const Tensor& x, Axes axes, Loc loc = Loc::current());

// ---- indexing ----
Tensor gather(const Tensor& x, std::int64_t axis, const Tensor& index, Loc loc = Loc::current());
Tensor index_select(const Tensor& x, std::int64_t axis, const Tensor& index, Loc loc = Loc::current());
Tensor one_hot(const Tensor& index, std::int64_t num_classes, DType dtype = default_float, Loc loc = Loc::current());
Tensor cumsum(const Tensor& x, std::int64_t axis, Loc loc = Loc::current());

Tensor cast(const Tensor& x, DType to, Loc loc = Loc::current());

// x unchanged, but no gradient flows back through it (jax.lax.stop_gradient, torch's
// detach; also x.detach()): d/dx of x * stop_gradient(x) is stop_gradient(x), not 2x.
// Use it for targets (a frozen network's output, a baseline) that must not be trained.
Tensor stop_gradient(const Tensor& x, Loc loc = Loc::current());

// ---- constants and masks from a tensor (dsl/masking.cpp) ----
// Built in x's graph, so a module's operator()(const Tensor&) needs no Graph& (see also
// graph_of in dsl/graph.hpp). The *_like functions take x's shape and, unless given one,
// its dtype (as torch.full_like); value must be representable (integral for i64, 0 or 1
// for bool).
Tensor full_like(const Tensor& x, double value, std::optional<DType> dtype = std::nullopt,
                 Loc loc = Loc::current());
Tensor zeros_like(const Tensor& x, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
Tensor ones_like(const Tensor& x, std::optional<DType> dtype = std::nullopt, Loc loc = Loc::current());
// torch.tril / torch.triu over the last two axes (rank >= 2, any dtype): tril keeps
// x[..., i, j] where j - i <= k and zeroes the rest; triu keeps j - i >= k. k = 0 is the
// main diagonal, k > 0 above it, k < 0 below. Built from arange, a comparison and where,
// so the gradient passes through the kept entries and is zero elsewhere.
Tensor tril(const Tensor& x, std::int64_t k = 0, Loc loc = Loc::current());
Tensor triu(const Tensor& x, std::int64_t k = 0, Loc loc = Loc::current());
// torch.masked_fill: `value` where the bool `mask` is true, x elsewhere; mask and x
// broadcast (NumPy rules) and the result has x's dtype. The gradient to x is zero where
// the mask is true; a tensor `value` (0-d, x's dtype) gets the sum over the filled entries.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value, Loc loc = Loc::current());
Tensor masked_fill(const Tensor& x, const Tensor& mask, const Tensor& value, Loc loc = Loc::current());

}  // namespace mg
