// The libtorch side of bench/transformer_bench.cpp: attention forward+backward, the PINN
// training step (double backward with create_graph=True) and the miniGPT training step,
// the same workloads as our side. Declared without torch headers so only
// torch_transformer.cpp pays their compile time. Each returns median milliseconds.
#pragma once

namespace mg::bench {

// nn::MultiheadAttention(64, 4), self-attention on [batch 8, seq 256, 64]: forward, sum,
// backward (input and parameter gradients).
double torch_attention_ms(int threads, int warmup, int iters);
// 1-32-32-1 tanh MLP u(t); u', u'' by autograd.grad(create_graph=True) at 256 points;
// loss = mean ODE residual^2 + initial conditions; backward; Adam step. f32.
double torch_pinn_step_ms(int threads, int warmup, int iters);
// examples/minigpt.hpp's model (ctx 64, 4 layers, 4 heads, d 128, vocab 96), batch 16:
// forward, cross-entropy, backward, clip_grad_norm_(1.0), AdamW step.
double torch_minigpt_step_ms(int threads, int warmup, int iters);

}  // namespace mg::bench
