// libtorch reference for bench/spanda_bench.cpp (see torch_spanda.hpp).
#include "bench/torch_spanda.hpp"

#include <cmath>
#include <numbers>

#include <torch/torch.h>

#include "bench/timing.hpp"

namespace mg::bench {
namespace {

// snntorch.surrogate.ATan, alpha 2.
struct ATan : torch::autograd::Function<ATan> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor x) {
    ctx->save_for_backward({x});
    return (x > 0).to(x.scalar_type());
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list dy) {
    torch::Tensor x = ctx->get_saved_variables()[0];
    const double alpha = 2.0;
    return {alpha / 2 / (1 + (std::numbers::pi / 2 * alpha * x).pow(2)) * dy[0]};
  }
};

std::pair<torch::Tensor, torch::Tensor> leaky(const torch::Tensor& in, const torch::Tensor& mem) {
  torch::Tensor reset = (mem - 1.0 > 0).to(mem.scalar_type()).detach();
  torch::Tensor next = mem * 0.9 + in - reset;
  return {ATan::apply(next - 1.0), next};
}

}  // namespace

double torch_snn_step_ms(int T, int B, int H, int threads, int warmup, int iters) {
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  torch::nn::Linear fc1(784, H), fc2(H, 10);
  std::vector<torch::Tensor> params = fc1->parameters();
  for (auto& p : fc2->parameters()) params.push_back(p);
  torch::optim::Adam opt(params, torch::optim::AdamOptions(2e-3));
  const torch::Tensor xs = (torch::rand({T, B, 784}) < 0.3).to(torch::kFloat);
  const torch::Tensor y = torch::randint(0, 10, {B}, torch::kLong);
  float sink = 0;
  const double ms = median_ms(
      [&] {
        opt.zero_grad();
        torch::Tensor m1 = torch::zeros({B, H}), m2 = torch::zeros({B, 10});
        std::vector<torch::Tensor> out;
        for (int t = 0; t < T; ++t) {
          auto [s1, u1] = leaky(fc1->forward(xs[t]), m1);
          auto [s2, u2] = leaky(fc2->forward(s1), m2);
          m1 = u1;
          m2 = u2;
          out.push_back(s2);
        }
        torch::Tensor spk = torch::stack(out);  // ce_rate_loss: CE of every step, mean
        torch::Tensor loss = torch::nn::functional::cross_entropy(spk.reshape({T * B, 10}), y.repeat({T}));
        loss.backward();
        opt.step();
        sink += loss.item<float>();
      },
      warmup, iters);
  TORCH_CHECK(std::isfinite(sink), "libtorch SNN benchmark diverged");
  return ms;
}

}  // namespace mg::bench
