// The libtorch side of bench/per_sample_bench.cpp: per-sample gradients as a loop of
// single-example backward passes (what one writes without vmap), declared without torch
// headers so only torch_per_sample.cpp pays their compile time.
#pragma once

namespace mg::bench {

// Median milliseconds for all per-sample gradients of a batch of `batch` examples (each
// copied out of the parameters' .grad), with `threads` intra-op threads.
double torch_mlp_per_sample_loop_ms(int batch, int threads, int warmup, int iters);
double torch_cnn_per_sample_loop_ms(int batch, int threads, int warmup, int iters);

}  // namespace mg::bench
