// Optimizer update rules; see optim.hpp. Each mirrors torch.optim's single-tensor path.
#include "minigrad/dsl/nn/optim.hpp"

#include <algorithm>
#include <cmath>

#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/functions.hpp"
#include "minigrad/dsl/tensor_methods.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::nn {

Tensor OptimContext::lr(DType dtype) const { return cast(lr_, dtype); }
Tensor OptimContext::step(DType dtype) const { return cast(step_, dtype); }

Tensor OptimContext::state(const Parameter& p, const std::string& slot, double init) {
  std::string name = "optim." + p.name() + "." + slot;
  Tensor t = g_.input(name, p.dtype, p.shape);
  slots_.push_back({name, t, Tensor(), Array::full(Type{p.dtype, p.shape}, init)});
  return t;
}

void OptimContext::set_next(const Tensor& state, const Tensor& next) {
  for (auto& s : slots_)
    if (s.input.value() == state.value()) {
      s.next = next;
      return;
    }
  throw UserError("optimizer: set_next on a tensor that is not optimizer state");
}

Tensor SGD::update(OptimContext& ctx, const Parameter& p, Tensor g) const {
  Tensor w = p.tensor;
  if (weight_decay != 0) g = g + w * weight_decay;
  if (momentum != 0) {
    Tensor buf = ctx.state(p, "momentum_buffer");
    // torch: the buffer starts as a copy of the first gradient, then m*buf + (1-d)*g.
    Tensor first = ctx.step(p.dtype) == 1.0;
    Tensor next = where(first, g, buf * momentum + g * (1.0 - dampening));
    ctx.set_next(buf, next);
    g = nesterov ? Tensor(g + next * momentum) : next;
  }
  return w - ctx.lr(p.dtype) * g;
}

Tensor Adam::update(OptimContext& ctx, const Parameter& p, Tensor g) const {
  Tensor w = p.tensor;
  if (weight_decay != 0) g = g + w * weight_decay;
  Tensor m = ctx.state(p, "exp_avg"), v = ctx.state(p, "exp_avg_sq");
  Tensor m_next = m + (g - m) * (1.0 - beta1);  // torch: exp_avg.lerp_(grad, 1 - beta1)
  Tensor v_next = v * beta2 + g * g * (1.0 - beta2);
  ctx.set_next(m, m_next);
  ctx.set_next(v, v_next);
  Tensor t = ctx.step(p.dtype);
  Tensor bc1 = 1.0 - pow(beta1, t);
  Tensor bc2 = 1.0 - pow(beta2, t);
  Tensor step_size = ctx.lr(p.dtype) / bc1;
  // torch divides every element by sqrt(bc2); a scalar reciprocal, computed once a step,
  // leaves one division and one square root per element (the update's cost) and moves
  // the result by about an ulp (the f64 tests against torch.optim hold to 1e-12).
  Tensor inv_sqrt_bc2 = 1.0 / sqrt(bc2);
  Tensor denom = sqrt(v_next) * inv_sqrt_bc2 + eps;
  return w - step_size * (m_next / denom);
}

Tensor AdamW::update(OptimContext& ctx, const Parameter& p, Tensor g) const {
  Tensor decayed = p.tensor * (1.0 - ctx.lr(p.dtype) * weight_decay);
  Parameter shadow = p;  // Adam's rule applied to the decayed weights, as torch.optim.AdamW
  shadow.tensor = decayed;
  return Adam{lr, beta1, beta2, eps, 0.0}.update(ctx, shadow, g);
}

Tensor RMSprop::update(OptimContext& ctx, const Parameter& p, Tensor g) const {
  Tensor w = p.tensor;
  if (weight_decay != 0) g = g + w * weight_decay;
  Tensor sq = ctx.state(p, "square_avg");
  Tensor sq_next = sq * alpha + g * g * (1.0 - alpha);
  ctx.set_next(sq, sq_next);
  Tensor avg;
  if (centered) {
    Tensor ga = ctx.state(p, "grad_avg");
    Tensor ga_next = ga * alpha + g * (1.0 - alpha);
    ctx.set_next(ga, ga_next);
    avg = sqrt(sq_next - ga_next * ga_next) + eps;
  } else {
    avg = sqrt(sq_next) + eps;
  }
  if (momentum > 0) {
    Tensor buf = ctx.state(p, "momentum_buffer");
    Tensor buf_next = buf * momentum + g / avg;
    ctx.set_next(buf, buf_next);
    return w - ctx.lr(p.dtype) * buf_next;
  }
  return w - ctx.lr(p.dtype) * (g / avg);
}

Schedule constant_lr() {
  return [](double lr, std::int64_t) { return lr; };
}

Schedule step_lr(std::int64_t step_size, double gamma) {
  return [=](double lr, std::int64_t step) { return lr * std::pow(gamma, static_cast<double>(step / step_size)); };
}

Schedule cosine_lr(std::int64_t t_max, double eta_min) {
  return [=](double lr, std::int64_t step) {
    return eta_min + (lr - eta_min) * (1 + std::cos(M_PI * static_cast<double>(step) / static_cast<double>(t_max))) / 2;
  };
}

Schedule warmup_cosine_lr(std::int64_t warmup, std::int64_t total, double min_lr) {
  return [=](double lr, std::int64_t step) {
    if (step < warmup) return lr * static_cast<double>(step + 1) / static_cast<double>(warmup);
    if (step >= total) return min_lr;
    double progress = static_cast<double>(step - warmup) / static_cast<double>(std::max<std::int64_t>(1, total - warmup));
    return min_lr + 0.5 * (1.0 + std::cos(M_PI * progress)) * (lr - min_lr);
  };
}

}  // namespace mg::nn
