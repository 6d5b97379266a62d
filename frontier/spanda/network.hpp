// SpikingSequential: spiking layers (and stateless ones: Flatten, pooling) run over T time
// steps by ONE mg::scan, so backpropagation through time differentiates the loop node and
// the graph does not grow with T (DESIGN invariant 7). The carries are the membrane
// potentials; each step also records the output layer's spikes and membrane, and per
// spiking layer the spikes fired and the synaptic operations caused (for counters.hpp).
//
//   SpikingSequential net{SpikingLinear(784, 256, lif), SpikingLinear(256, 10, lif)};
//   Recording r = net(spikes);                 // spikes [T, B, 784]; r.spikes [T, B, 10]
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include <boost/hana/at.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>

#include "minigrad/dsl/control.hpp"
#include "minigrad/dsl/graph.hpp"
#include "minigrad/dsl/nn/module.hpp"
#include "minigrad/frontier/spanda/layers.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::frontier::spanda {

// What the layers are, for the counters: per spiking layer, its neurons and the dense
// network's multiply-accumulates, both per sample.
struct LayerInfo {
  std::string name;
  std::int64_t neurons = 0;
  std::int64_t dense_macs = 0;
};

struct Recording {
  Tensor spikes;          // [T, ...] the last layer's spikes
  Tensor mem;             // [T, ...] the last layer's membrane potential
  Tensor layer_spikes;    // [T, L] spikes fired per spiking layer per step (whole batch)
  Tensor layer_synops;    // [T, L] synaptic operations per spiking layer per step (whole batch)
  std::vector<LayerInfo> layers;
};

template <class... Ls>
struct SpikingSequential {
  boost::hana::tuple<Ls...> layers;
  explicit SpikingSequential(Ls... ls) : layers(std::move(ls)...) {}

  // xs [T, B, ...]: one input per time step (e.g. rate-coded spikes). Membranes start at 0.
  Recording operator()(const Tensor& xs, Loc loc = Loc::current()) const;

  template <class F> void for_each_parameter(F&& f) {
    std::size_t i = 0;
    boost::hana::for_each(layers, [&](auto& m) { nn::for_each_parameter(m, f, std::to_string(i++) + "."); });
  }
  template <class F> void for_each_submodule(F&& f) { boost::hana::for_each(layers, [&](auto& m) { f(m); }); }
};

template <class... Ls>
Recording SpikingSequential<Ls...>::operator()(const Tensor& xs, Loc loc) const {
  namespace hana = boost::hana;
  if (xs.rank() < 2)
    throw ShapeError("spanda::SpikingSequential: expects inputs [T, batch, ...], got " + to_string(xs.type()),
                     SourceLoc::from(loc));
  Recording rec;
  // Shapes of the membranes: one step traced on zeros outside the loop (dead nodes, never
  // run: executables compute only what their outputs need).
  Shape step_shape(xs.shape().begin() + 1, xs.shape().end());
  Graph g = graph_of(xs, loc);
  Tensor probe = g.zeros(step_shape, xs.dtype(), loc);
  Tensors mem0;
  std::size_t index = 0;
  hana::for_each(layers, [&](const auto& m) {
    if constexpr (SpikingLayer<std::remove_cvref_t<decltype(m)>>) {
      Tensor cur = m.current(probe, loc);
      mem0.push_back(zeros_like(cur, std::nullopt, loc));
      const std::int64_t per_sample = cur.numel() / std::max<std::int64_t>(1, cur.shape()[0]);
      rec.layers.push_back({"layer " + std::to_string(index), per_sample, per_sample * m.fan_in()});
      probe = cur;
    } else {
      probe = Tensor(m(probe, loc), loc);
    }
    ++index;
  });
  if (mem0.empty())
    throw UserError("spanda::SpikingSequential: needs at least one spiking layer", SourceLoc::from(loc));

  // A first spiking layer's synaptic current depends on the inputs only, not on the state:
  // it is computed for all T steps at once outside the loop (one large GEMM or convolution,
  // forward and backward, instead of T small ones) and scanned in beside the inputs.
  using First = std::remove_cvref_t<decltype(hana::at_c<0>(layers))>;
  Tensors scanned{xs};
  if constexpr (SpikingLayer<First>) {
    const Shape& s = xs.shape();
    Shape folded{s[0] * s[1]};
    folded.insert(folded.end(), s.begin() + 2, s.end());
    Tensor cur = hana::at_c<0>(layers).current(xs.reshape(folded, loc), loc);
    Shape unfolded{s[0], s[1]};
    unfolded.insert(unfolded.end(), cur.shape().begin() + 1, cur.shape().end());
    scanned.push_back(cur.reshape(unfolded, loc));
  }

  auto [final_mem, ys] = scan(
      [&](const Tensors& mems, const Tensors& x) {
        Tensors next, fired, ops;
        Tensor h = x[0], last_mem;
        std::size_t k = 0;
        hana::for_each(layers, [&](const auto& m) {
          if constexpr (SpikingLayer<std::remove_cvref_t<decltype(m)>>) {
            ops.push_back(m.synops(h, loc).reshape({1}, loc));
            Tensor cur = (k == 0 && x.size() > 1) ? x[1] : m.current(h, loc);
            auto [s, u] = m.lif.step(cur, mems[k], loc);
            ++k;
            next.push_back(u);
            fired.push_back(s.sum({}, false, loc).reshape({1}, loc));
            h = s;
            last_mem = u;
          } else {
            h = Tensor(m(h, loc), loc);
          }
        });
        return std::pair{next, Tensors{h, last_mem, concat(fired, 0, loc), concat(ops, 0, loc)}};
      },
      mem0, scanned, ScanOptions{}, loc);
  rec.spikes = ys[0];
  rec.mem = ys[1];
  rec.layer_spikes = ys[2];
  rec.layer_synops = ys[3];
  return rec;
}

}  // namespace mg::frontier::spanda
