// The libtorch side of bench/rnn_bench.cpp: a tanh RNN training step as a C++ loop over
// cells (libtorch records the T steps for autograd each step). Declared without torch
// headers so only torch_rnn.cpp pays their compile time.
#pragma once

namespace mg::bench {

// Median milliseconds per step: h_{t+1} = tanh(h_t W + x_t U + b) over T steps from h0 = 0,
// loss = mean(hs^2), backward, SGD update of W, U, b (f32, random xs [T, B, D]).
double torch_rnn_step_ms(int T, int B, int D, int H, int threads, int warmup, int iters);

}  // namespace mg::bench
