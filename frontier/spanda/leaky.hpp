// The first-order leaky integrate-and-fire neuron with snnTorch's `Leaky` semantics
// (snntorch/_neurons/leaky.py, neurons.py; reset_delay=True, graded_spikes_factor=1):
//   reset = Heaviside(U[t-1] - U_thr), detached (no gradient flows through the reset)
//   subtract: U[t] = beta U[t-1] + I[t] - reset U_thr
//   zero:     U[t] = beta (1 - reset) U[t-1] + I[t]
//   none:     U[t] = beta U[t-1] + I[t]
//   S[t] = spike(U[t] - U_thr)  (Heaviside forward, surrogate backward)
// One time step; the loop over time is mg::scan (frontier/spanda/network.hpp).
#pragma once
#include <utility>

#include "minigrad/frontier/spanda/surrogate.hpp"

namespace mg::frontier::spanda {

enum class Reset { subtract, zero, none };

struct Leaky {
  double beta = 0.9;        // membrane decay; snnTorch clamps it to [0, 1], so does step()
  double threshold = 1.0;   // U_thr
  Surrogate surrogate = Surrogate::atan();  // snnTorch's default
  Reset reset = Reset::subtract;

  // (spikes S[t], membrane U[t]) from the input current I[t] and U[t-1] (same shapes).
  std::pair<Tensor, Tensor> step(const Tensor& input, const Tensor& mem, Loc loc = Loc::current()) const;
  template <class F> void for_each_parameter(F&&) {}  // a module without parameters
};

}  // namespace mg::frontier::spanda
