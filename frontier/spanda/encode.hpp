// Spike encoders and the rate decoder. The encoders run on host arrays before the graph,
// as snnTorch's spikegen does on the data: a fresh draw per batch without any random state
// in the training step. The decoder is graph code.
#pragma once
#include <cstdint>

#include "minigrad/dsl/tensor.hpp"
#include "minigrad/ir/array.hpp"

namespace mg::frontier::spanda {

// snntorch.spikegen.rate: [B, ...] intensities -> [T, B, ...] spikes, each element an
// independent Bernoulli(clamp(x, 0, 1)) draw at each step; f32 (or f64 if x is f64).
// Deterministic in `seed`.
Array rate_encode(const Array& x, std::int64_t steps, std::uint64_t seed);

// snntorch.spikegen.latency: one spike per element, brighter inputs earlier. The firing
// time of an RC circuit charged by x: t = tau ln(x / (x - threshold)) for x > threshold,
// else never within the window (snnTorch's clip=True); linear=true: t = tau (1 - x)
// instead. normalize=true (linear only) stretches times so x = 0 fires at T - 1.
// Times are rounded to the nearest step and capped at T - 1.
struct LatencyOptions {
  double tau = 1.0;
  double threshold = 0.01;
  bool linear = false;
  bool normalize = false;
};
Array latency_encode(const Array& x, std::int64_t steps, LatencyOptions options = {});

// Rate decoding: the firing rate per neuron over time, spikes [T, ...] -> [...] (mean over
// axis 0); argmax over the classes of it is the prediction.
Tensor rate_decode(const Tensor& spikes, Loc loc = Loc::current());

}  // namespace mg::frontier::spanda
