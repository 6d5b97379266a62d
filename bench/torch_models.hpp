// The libtorch side of the training-step benchmark: the same two models, recipes and
// batch sizes as examples 04 and 05, one Adam step per call. Declared without torch
// headers so only torch_models.cpp pays their compile time.
#pragma once

namespace mg::bench {

// Median milliseconds per training step (zero_grad, forward, cross-entropy, backward,
// Adam step, loss read back) on random inputs, with `threads` intra-op threads.
double torch_mlp_step_ms(int threads, int warmup, int iters);  // 784-128-10, batch 128
double torch_cnn_step_ms(int threads, int warmup, int iters);  // example 05's CNN, batch 64
// Median milliseconds per forward call of the 784-128-10 MLP at batch 1 under
// torch::InferenceMode (no autograd recording at all, cheaper than NoGradGuard).
double torch_mlp_forward_ms(int threads, int warmup, int iters);

}  // namespace mg::bench
