// libtorch reference workloads for bench/transformer_bench.cpp (see torch_transformer.hpp).
#include "bench/torch_transformer.hpp"

#include <torch/torch.h>

#include <cmath>

#include "bench/timing.hpp"

namespace mg::bench {

namespace {

constexpr int64_t kV = 96, kT = 64, kL = 4, kH = 4, kD = 128, kB = 16;

struct BlockImpl : torch::nn::Module {
  torch::nn::LayerNorm ln_1{torch::nn::LayerNormOptions({kD})}, ln_2{torch::nn::LayerNormOptions({kD})};
  torch::nn::MultiheadAttention attn{torch::nn::MultiheadAttentionOptions(kD, kH)};
  torch::nn::Linear c_fc{kD, 4 * kD}, c_proj{4 * kD, kD};
  // Additive (-inf above the diagonal): libtorch 1.13's C++ MultiheadAttention adds
  // attn_mask to the scores as it is, so a bool mask added 0/1 and attended everywhere.
  torch::Tensor mask = torch::zeros({kT, kT}).masked_fill(torch::ones({kT, kT}, torch::kBool).triu(1), -INFINITY);
  BlockImpl() {
    register_module("ln_1", ln_1);
    register_module("ln_2", ln_2);
    register_module("attn", attn);
    register_module("c_fc", c_fc);
    register_module("c_proj", c_proj);
  }
  torch::Tensor forward(const torch::Tensor& x) {  // x [T, B, D]: libtorch's MHA has no batch_first
    torch::Tensor h = ln_1(x);
    torch::Tensor y = x + std::get<0>(attn->forward(h, h, h, {}, /*need_weights=*/false, mask));
    return y + c_proj(torch::gelu(c_fc(ln_2(y)), "tanh"));
  }
};
TORCH_MODULE(Block);

struct GptImpl : torch::nn::Module {
  torch::nn::Embedding wte{kV, kD}, wpe{kT, kD};
  torch::nn::ModuleList h;
  torch::nn::LayerNorm ln_f{torch::nn::LayerNormOptions({kD})};
  torch::nn::Linear lm_head{kD, kV};
  GptImpl() {
    register_module("wte", wte);
    register_module("wpe", wpe);
    for (int i = 0; i < kL; ++i) h->push_back(Block());
    register_module("h", h);
    register_module("ln_f", ln_f);
    register_module("lm_head", lm_head);
  }
  torch::Tensor loss(const torch::Tensor& idx, const torch::Tensor& y) {
    torch::Tensor x = (wte(idx) + wpe(torch::arange(kT))).transpose(0, 1);
    for (auto& m : *h) x = m->as<BlockImpl>()->forward(x);
    torch::Tensor logits = lm_head(ln_f(x.transpose(0, 1)));
    return torch::nn::functional::cross_entropy(logits.reshape({-1, kV}), y.reshape({-1}));
  }
};

struct PinnImpl : torch::nn::Module {
  torch::nn::Linear fc1{1, 32}, fc2{32, 32}, fc3{32, 1};
  PinnImpl() {
    register_module("fc1", fc1);
    register_module("fc2", fc2);
    register_module("fc3", fc3);
  }
  torch::Tensor forward(const torch::Tensor& t) { return fc3(torch::tanh(fc2(torch::tanh(fc1(t))))); }
};

}  // namespace

double torch_attention_ms(int threads, int warmup, int iters) {
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  torch::nn::MultiheadAttention mha(torch::nn::MultiheadAttentionOptions(64, 4));
  torch::Tensor x = torch::randn({256, 8, 64}, torch::requires_grad());
  float sink = 0;
  const double ms = median_ms(
      [&] {
        mha->zero_grad();
        x.mutable_grad() = torch::Tensor();
        torch::Tensor out = std::get<0>(mha->forward(x, x, x, {}, /*need_weights=*/false));
        torch::Tensor loss = out.sum();
        loss.backward();
        sink += x.grad().data_ptr<float>()[0];
      },
      warmup, iters);
  TORCH_CHECK(std::isfinite(sink), "libtorch attention benchmark produced a non-finite value");
  return ms;
}

double torch_pinn_step_ms(int threads, int warmup, int iters) {
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  PinnImpl net;
  torch::optim::Adam opt(net.parameters(), torch::optim::AdamOptions(1e-3));
  const double omega = 2.0, zeta = 0.15;
  torch::Tensor t = (torch::rand({256, 1}) * 4.0).requires_grad_(true);
  torch::Tensor t0 = torch::zeros({1, 1}, torch::requires_grad());
  float sink = 0;
  const double ms = median_ms(
      [&] {
        opt.zero_grad();
        torch::Tensor u = net.forward(t);
        torch::Tensor du = torch::autograd::grad({u.sum()}, {t}, {}, true, true)[0];
        torch::Tensor ddu = torch::autograd::grad({du.sum()}, {t}, {}, true, true)[0];
        torch::Tensor u0 = net.forward(t0);
        torch::Tensor du0 = torch::autograd::grad({u0.sum()}, {t0}, {}, true, true)[0];
        torch::Tensor r = (ddu + 2 * zeta * omega * du + omega * omega * u) / (omega * omega);
        torch::Tensor loss = r.square().mean() + (u0 - 1.0).square().sum() + du0.square().sum();
        loss.backward();
        opt.step();
        sink += loss.item<float>();
      },
      warmup, iters);
  TORCH_CHECK(std::isfinite(sink), "libtorch PINN benchmark diverged");
  return ms;
}

double torch_minigpt_step_ms(int threads, int warmup, int iters) {
  torch::set_num_threads(threads);
  torch::manual_seed(0);
  GptImpl model;
  torch::optim::AdamW opt(model.parameters(), torch::optim::AdamWOptions(1e-3).betas({0.9, 0.99}).weight_decay(0.1));
  torch::Tensor x = torch::randint(0, kV, {kB, kT}, torch::kLong), y = torch::randint(0, kV, {kB, kT}, torch::kLong);
  float sink = 0;
  const double ms = median_ms(
      [&] {
        opt.zero_grad();
        torch::Tensor loss = model.loss(x, y);
        loss.backward();
        torch::nn::utils::clip_grad_norm_(model.parameters(), 1.0);
        opt.step();
        sink += loss.item<float>();
      },
      warmup, iters);
  TORCH_CHECK(std::isfinite(sink), "libtorch miniGPT benchmark diverged");
  return ms;
}

}  // namespace mg::bench
