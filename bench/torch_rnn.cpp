// libtorch reference for bench/rnn_bench.cpp (see torch_rnn.hpp).
#include "bench/torch_rnn.hpp"

#include <torch/torch.h>

#include "bench/timing.hpp"

namespace mg::bench {

double torch_rnn_step_ms(int T, int B, int D, int H, int threads, int warmup, int iters) {
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  torch::Tensor W = (torch::randn({H, H}) * 0.1).requires_grad_();
  torch::Tensor U = (torch::randn({D, H}) * 0.1).requires_grad_();
  torch::Tensor b = torch::zeros({H}).requires_grad_();
  const torch::Tensor xs = torch::randn({T, B, D});
  const torch::Tensor h0 = torch::zeros({B, H});
  float sink = 0;
  const double ms = median_ms(
      [&] {
        for (torch::Tensor* p : {&W, &U, &b}) p->mutable_grad() = torch::Tensor();
        torch::Tensor h = h0;
        std::vector<torch::Tensor> hs;
        hs.reserve(static_cast<std::size_t>(T));
        for (int t = 0; t < T; ++t) {
          h = torch::tanh(h.mm(W) + xs[t].mm(U) + b);
          hs.push_back(h);
        }
        torch::Tensor loss = torch::stack(hs).pow(2).mean();
        loss.backward();
        {
          torch::NoGradGuard no_grad;
          for (torch::Tensor* p : {&W, &U, &b}) p->sub_(p->grad() * 0.01);
        }
        sink += loss.item<float>();
      },
      warmup, iters);
  TORCH_CHECK(std::isfinite(sink), "libtorch RNN benchmark diverged");
  return ms;
}

}  // namespace mg::bench
