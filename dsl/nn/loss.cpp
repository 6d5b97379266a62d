// Losses; see loss.hpp. Written with the DSL, so each is a handful of IR nodes.
#include "minigrad/dsl/nn/loss.hpp"

#include <cmath>

#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/functions.hpp"
#include "minigrad/dsl/tensor_methods.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::nn {

namespace {

Tensor reduce(const Tensor& per_element, Reduction r, Loc loc) {
  switch (r) {
    case Reduction::mean: return per_element.mean({}, false, loc);
    case Reduction::sum: return per_element.sum({}, false, loc);
    case Reduction::none: return per_element;
  }
  return per_element;
}

void same_shape(const char* loss, const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype())
    throw ShapeError(std::string(loss) + ": input " + to_string(a.type()) + " and target " + to_string(b.type()) +
                         " must have the same type",
                     ambient_loc());
}

void check_classification(const char* loss, const Tensor& scores, const Tensor& target) {
  if (scores.rank() != 2 || !is_float(scores.dtype()))
    throw ShapeError(std::string(loss) + ": expects float scores [N, C], got " + to_string(scores.type()), ambient_loc());
  if (target.dtype() != i64 || target.shape() != Shape{scores.shape()[0]})
    throw ShapeError(std::string(loss) + ": expects i64 class targets [" + std::to_string(scores.shape()[0]) +
                         "], got " + to_string(target.type()),
                     ambient_loc());
}

// Per-sample -log_probs[i, target_i] and the keep mask (target != ignore_index), with
// ignored targets redirected to class 0 so the gather stays in range.
std::pair<Tensor, Tensor> picked_nll(const Tensor& log_probs, const Tensor& target, std::int64_t ignore_index, Loc loc) {
  Tensor keep = Tensor(target != ignore_index, loc);
  Tensor safe = Tensor(where(keep, target, 0), loc);
  Tensor picked = gather(log_probs, 1, safe.unsqueeze(1, loc), loc).squeeze(1, loc);
  Tensor mask = cast(keep, log_probs.dtype(), loc);
  return {Tensor(-picked * mask, loc), mask};
}

Tensor reduce_masked(const Tensor& per_sample, const Tensor& mask, Reduction r, Loc loc) {
  if (r != Reduction::mean) return reduce(per_sample, r, loc);
  return Tensor(per_sample.sum({}, false, loc) / mask.sum({}, false, loc), loc);
}

}  // namespace

Tensor nll_loss(const Tensor& log_probs, const Tensor& target, Reduction reduction, std::int64_t ignore_index, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check_classification("nll_loss", log_probs, target);
  auto [nll, mask] = picked_nll(log_probs, target, ignore_index, loc);
  return reduce_masked(nll, mask, reduction, loc);
}

Tensor cross_entropy(const Tensor& logits, const Tensor& target, CrossEntropyOptions o, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  check_classification("cross_entropy", logits, target);
  if (o.label_smoothing < 0 || o.label_smoothing > 1)
    throw UserError("cross_entropy: label_smoothing must be in [0, 1]", ambient_loc());
  Tensor logp = log_softmax(logits, 1, loc);
  auto [nll, mask] = picked_nll(logp, target, o.ignore_index, loc);
  Tensor per = nll;
  if (o.label_smoothing > 0) {
    // PyTorch: (1 - e) * nll + e * mean_c(-log p_c), both masked.
    const double e = o.label_smoothing;
    Tensor smooth = Tensor(-logp.mean(1, false, loc) * mask, loc);
    per = Tensor(nll * (1.0 - e) + smooth * e, loc);
  }
  return reduce_masked(per, mask, o.reduction, loc);
}

Tensor binary_cross_entropy(const Tensor& p, const Tensor& y, Reduction r, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  same_shape("binary_cross_entropy", p, y);
  Tensor logp = Tensor(maximum(log(p), -100.0), loc);
  Tensor log1mp = Tensor(maximum(log(1.0 - p), -100.0), loc);
  return reduce(Tensor(-(y * logp + (1.0 - y) * log1mp), loc), r, loc);
}

Tensor binary_cross_entropy_with_logits(const Tensor& x, const Tensor& y, Reduction r, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  same_shape("binary_cross_entropy_with_logits", x, y);
  return reduce(Tensor(relu(x) - x * y + log1p(exp(-abs(x))), loc), r, loc);
}

Tensor mse_loss(const Tensor& a, const Tensor& b, Reduction r, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  same_shape("mse_loss", a, b);
  return reduce(Tensor(square(a - b), loc), r, loc);
}

Tensor l1_loss(const Tensor& a, const Tensor& b, Reduction r, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  same_shape("l1_loss", a, b);
  return reduce(Tensor(abs(a - b), loc), r, loc);
}

Tensor huber_loss(const Tensor& a, const Tensor& b, double delta, Reduction r, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  same_shape("huber_loss", a, b);
  Tensor d = Tensor(abs(a - b), loc);
  return reduce(Tensor(where(d <= delta, square(d) * 0.5, (d - 0.5 * delta) * delta), loc), r, loc);
}

Tensor smooth_l1_loss(const Tensor& a, const Tensor& b, double beta, Reduction r, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  same_shape("smooth_l1_loss", a, b);
  Tensor d = Tensor(abs(a - b), loc);
  if (beta == 0) return reduce(d, r, loc);
  return reduce(Tensor(where(d < beta, square(d) * (0.5 / beta), d - 0.5 * beta), loc), r, loc);
}

Tensor gaussian_nll_loss(const Tensor& input, const Tensor& target, const Tensor& var, bool full, double eps,
                         Reduction r, Loc loc) {
  LocScope at(SourceLoc::from(loc));
  same_shape("gaussian_nll_loss", input, target);
  // PyTorch's shapes for var: input's, input's without the last dim (one variance per
  // row, unsqueezed), or input's with the last dim 1; it then broadcasts.
  Tensor var_in = var;
  if (var.shape() != input.shape()) {
    const Shape& s = input.shape();
    const Shape lead = s.empty() ? Shape{} : Shape(s.begin(), s.end() - 1);
    const bool rowwise = !s.empty() && var.shape() == lead;
    const bool last_one = !s.empty() && var.rank() == input.rank() && var.shape().back() == 1 &&
                          Shape(var.shape().begin(), var.shape().end() - 1) == lead;
    if (!rowwise && !last_one)
      throw ShapeError("gaussian_nll_loss: expects var of input's shape " + to_string(input.type()) +
                           ", of that shape without its last dim, or with last dim 1 (as torch), got " +
                           to_string(var.type()),
                       ambient_loc());
    if (rowwise) var_in = var.unsqueeze(-1, loc);
  }
  // PyTorch clamps a copy of var under no_grad (`var.clamp_(min=eps)`): the forward reads
  // max(var, eps), and the gradient reaches var below eps too (as if unclamped, evaluated at
  // eps). eps + (var - detach(var)) is eps bit for bit, with var's gradient.
  Tensor v = Tensor(where(var_in < eps, eps + (var_in - var_in.detach(loc)), var_in), loc);
  Tensor per = Tensor((log(v) + square(input - target) / v) * 0.5, loc);
  if (full) per = Tensor(per + 0.5 * std::log(2 * M_PI), loc);
  return reduce(per, r, loc);
}

}  // namespace mg::nn
