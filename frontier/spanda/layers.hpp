// Spiking layers: a synapse (nn::Linear or nn::Conv2D, PyTorch layouts and init) feeding a
// Leaky neuron. Each exposes what the time loop (network.hpp) and the counters need: the
// synaptic current of one step, the neuron, the synaptic operations one step's input spikes
// cause, and the dense network's multiply-accumulates per output element (its fan-in).
#pragma once
#include <concepts>
#include <cstdint>

#include "minigrad/dsl/nn/conv.hpp"
#include "minigrad/dsl/nn/layers.hpp"
#include "minigrad/frontier/spanda/leaky.hpp"

namespace mg::frontier::spanda {

// x[..., in] -> spikes[..., out]
struct SpikingLinear {
  nn::Linear fc;
  Leaky lif;
  SpikingLinear(std::int64_t in, std::int64_t out, Leaky neuron = {}, bool bias = true, DType dtype = default_float)
      : fc(in, out, bias, dtype), lif(neuron) {}
  Tensor current(const Tensor& x, Loc loc = Loc::current()) const { return fc(x, loc); }
  // Each input event reaches `out` synapses: SynOps = sum(x) * out (exact; x may be graded).
  Tensor synops(const Tensor& x, Loc loc = Loc::current()) const;
  std::int64_t fan_in() const { return fc.weight.shape[1]; }
  template <class F> void for_each_parameter(F&& f) { fc.for_each_parameter(f); }
};

// x[N, C, H, W] -> spikes[N, out, H', W'] (nn::Conv2D's arguments).
struct SpikingConv2D {
  nn::Conv2D conv;
  Leaky lif;
  SpikingConv2D(std::int64_t in, std::int64_t out, nn::Pair kernel, nn::Pair stride = {1, 1}, nn::Pair padding = {0, 0},
                Leaky neuron = {}, bool bias = true, DType dtype = default_float)
      : conv(in, out, kernel, stride, padding, {1, 1}, 1, bias, dtype), lif(neuron) {}
  Tensor current(const Tensor& x, Loc loc = Loc::current()) const { return conv(x, loc); }
  // Exact: every output position counts the input events in its receptive field (a
  // convolution of the events with a ones kernel), times the output channels.
  Tensor synops(const Tensor& x, Loc loc = Loc::current()) const;
  std::int64_t fan_in() const { return conv.weight.shape[1] * conv.weight.shape[2] * conv.weight.shape[3]; }
  template <class F> void for_each_parameter(F&& f) { conv.for_each_parameter(f); }
};

template <class L>
concept SpikingLayer = requires(const L& l, const Tensor& x) {
  { l.current(x) } -> std::convertible_to<Tensor>;
  { l.synops(x) } -> std::convertible_to<Tensor>;
  l.lif;
};

}  // namespace mg::frontier::spanda
