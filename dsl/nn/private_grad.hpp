// The DP-SGD gradient (Abadi et al. 2016; as Opacus) as IR, for compile_train's private
// step: per-example gradients by vmap(grad), each clipped to L2 norm `max_grad_norm` over
// all parameters together, summed, plus Gaussian noise of std noise_multiplier *
// max_grad_norm from the seeded counter-based generator (random_normal_step keyed by the
// seed, the parameter's name and the step counter: fresh every step, the same for the same
// seed on every run and backend), divided by the batch size. Still one graph.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "minigrad/dsl/tensor.hpp"

namespace mg::nn {

struct Privacy {
  double noise_multiplier = 1.0;  // sigma: noise std in units of max_grad_norm
  double max_grad_norm = 1.0;     // C: per-example L2 bound over all parameters
  std::uint64_t seed = 0;         // the noise stream (with the step counter)
  // Poisson-sampled batches padded to a static capacity (io::PoissonBatchLoader): a [B]
  // input of per-example weights (1 sampled, 0 padding) multiplying each clipped gradient
  // (and loss), and the divisor of the noisy sum, the EXPECTED batch size q n (dividing by
  // the sampled count would leak it). Empty / 0: every row counts, divide by B.
  Tensor weights = {};
  double expected_batch_size = 0;
};

// The loss of ONE example: `example` holds the batch inputs without their leading axis.
using ExampleLoss = std::function<Tensor(const std::vector<Tensor>& example)>;

struct PrivateGradients {
  Tensor loss;                 // the mean of the per-example losses (weighted: sum(w l) / divisor)
  std::vector<Tensor> grads;   // one per parameter: (sum of clipped + noise) / batch size
};

// `batch`: inputs whose axis 0 runs over the examples (one size); `params` the trainable
// parameters' tensors and `names` their names (each keys its own noise stream); `step` an
// i64[] counter that changes every step.
PrivateGradients private_gradients(const ExampleLoss& loss, const std::vector<Tensor>& batch,
                                   const std::vector<Tensor>& params, const std::vector<std::string>& names,
                                   const Tensor& step, const Privacy& privacy);

}  // namespace mg::nn
