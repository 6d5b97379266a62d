// The DP-SGD gradient; see private_grad.hpp.
#include "minigrad/dsl/nn/private_grad.hpp"

#include "minigrad/dsl/autodiff.hpp"
#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/functions.hpp"
#include "minigrad/dsl/nn/parameter.hpp"
#include "minigrad/dsl/tensor_methods.hpp"
#include "minigrad/dsl/transforms.hpp"
#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::nn {

PrivateGradients private_gradients(const ExampleLoss& loss, const std::vector<Tensor>& batch,
                                   const std::vector<Tensor>& params, const std::vector<std::string>& names,
                                   const Tensor& step, const Privacy& privacy) {
  if (batch.empty()) throw UserError("private training: no batch inputs given (their axis 0 runs over examples)");
  if (!(privacy.max_grad_norm > 0) || !(privacy.noise_multiplier >= 0))
    throw UserError("private training: needs max_grad_norm > 0 and noise_multiplier >= 0, got " +
                        std::to_string(privacy.max_grad_norm) + " and " + std::to_string(privacy.noise_multiplier),
                    ambient_loc());
  auto per_example = vmap([&](const std::vector<Tensor>& example) {
    Tensor l = loss(example);
    if (!l.valid() || l.rank() != 0 || !is_float(l.dtype()))
      throw UserError("private training: the per-example loss must be a float scalar", ambient_loc());
    std::vector<Tensor> out{l};
    for (Tensor& g : grad(l, params)) out.push_back(g);
    return out;
  });
  std::vector<Tensor> r = per_example(batch);
  const std::int64_t n = r[0].shape()[0];

  // Per-example L2 norms over all parameters (in f64, as clip_grad_norm), then Opacus's
  // factor min(1, C / (norm + 1e-6)).
  Tensor sq;
  for (std::size_t k = 0; k < params.size(); ++k) {
    std::vector<std::int64_t> axes;
    for (int d = 1; d < r[k + 1].rank(); ++d) axes.push_back(d);
    Tensor s = axes.empty() ? Tensor(cast(square(r[k + 1]), f64)) : cast(square(r[k + 1]).sum(axes), f64);
    sq = sq.valid() ? Tensor(sq + s) : s;
  }
  Tensor factor = minimum(privacy.max_grad_norm / (sqrt(sq) + 1e-6), 1.0);  // [n]
  Tensor losses = r[0];
  if (privacy.weights.valid()) {
    if (privacy.weights.shape() != Shape{n} || !is_float(privacy.weights.dtype()))
      throw UserError("private training: weights must be a float [" + std::to_string(n) + "] input (one per example), got " +
                          to_string(privacy.weights.type()),
                      ambient_loc());
    factor = factor * cast(privacy.weights, f64);
    losses = losses * cast(privacy.weights, losses.dtype());
  }
  const double divisor = privacy.expected_batch_size > 0 ? privacy.expected_batch_size : static_cast<double>(n);

  PrivateGradients out{losses.sum() * (1.0 / divisor), {}};
  const double std = privacy.noise_multiplier * privacy.max_grad_norm;
  for (std::size_t k = 0; k < params.size(); ++k) {
    const Tensor& g = r[k + 1];
    std::vector<std::int64_t> shape{n};
    shape.resize(static_cast<std::size_t>(g.rank()), 1);
    Tensor clipped_sum = (g * cast(factor, g.dtype()).reshape(shape)).sum(0);
    Tensor noise(ir::make_op(ir::op("random_normal_step"), {step.value()},
                             {{"shape", params[k].shape()},
                              {"dtype", params[k].dtype()},
                              {"seed", static_cast<std::int64_t>(hash_name(privacy.seed, names[k]))},
                              {"std", std}}));
    out.grads.push_back((clipped_sum + noise) * (1.0 / divisor));
  }
  return out;
}

}  // namespace mg::nn
