// The libtorch side of bench/spanda_bench.cpp: example 16's spiking network training step
// with snnTorch's Leaky (reset by subtraction, detached) and atan surrogate written as a
// torch::autograd::Function, a C++ loop over the T steps. Declared without torch headers
// so only torch_spanda.cpp pays their compile time.
#pragma once

namespace mg::bench {

// Median ms per step: 784 -> H -> 10 LIF (beta 0.9, threshold 1) over T steps of fixed
// Bernoulli(0.3) input spikes [T, B, 784], ce_rate_loss, backward, Adam (lr 2e-3), f32.
double torch_snn_step_ms(int T, int B, int H, int threads, int warmup, int iters);

}  // namespace mg::bench
