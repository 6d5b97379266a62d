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
Tensor one_hot(const Tensor& index, std::int64_t num_classes, DType dtype = f32, Loc loc = Loc::current());
Tensor cumsum(const Tensor& x, std::int64_t axis, Loc loc = Loc::current());

Tensor cast(const Tensor& x, DType to, Loc loc = Loc::current());

// x unchanged, but no gradient flows back through it (jax.lax.stop_gradient, torch's
// detach; also x.detach()): d/dx of x * stop_gradient(x) is stop_gradient(x), not 2x.
// Use it for targets (a frozen network's output, a baseline) that must not be trained.
Tensor stop_gradient(const Tensor& x, Loc loc = Loc::current());

}  // namespace mg
