// Activity counters of a spiking network: spike rate per layer (its sparsity), synaptic
// operations (SynOps: each input event times the synapses it reaches) against the dense
// network's multiply-accumulates, and an energy estimate from per-operation energies.
// Accumulated on the host from a Recording's layer_spikes / layer_synops, run by run.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "minigrad/frontier/spanda/network.hpp"
#include "minigrad/ir/array.hpp"

namespace mg::frontier::spanda {

// Energy per 32-bit floating-point operation in a 45 nm process: M. Horowitz, "Computing's
// energy problem (and what we can do about it)", ISSCC 2014, pp. 10-14 (FP add 0.9 pJ, FP
// mult 3.7 pJ). A dense MAC costs mult + add; a SynOp (a spike arriving at a synapse) is an
// accumulate, one add. Memory access, which dominates on real hardware, is left out of both.
struct EnergyModel {
  double add_pj = 0.9;
  double mult_pj = 3.7;
};

struct LayerActivity {
  LayerInfo info;
  double spikes = 0;  // fired over all steps and samples seen
  double synops = 0;  // caused by this layer's input events, all steps and samples
};

struct ActivityReport {
  std::vector<LayerActivity> layers;
  std::int64_t steps = 0, samples = 0;
  EnergyModel energy;

  // Spikes per neuron per step, in [0, 1]; 1 - rate is the layer's sparsity.
  double spike_rate(std::size_t layer) const;
  double synops_per_sample() const;      // all layers, all T steps
  double dense_macs_per_sample() const;  // the same layers as a dense (non-spiking) network, one pass
  // SNN: SynOps x add + T x neurons x (mult + 2 add) for the membrane updates (beta U,
  // + I, - reset). Dense: MACs x (mult + add). Per sample, in pJ.
  double snn_energy_pj() const;
  double dense_energy_pj() const;
  std::string to_string() const;  // a table of the above
};

class ActivityMeter {
 public:
  explicit ActivityMeter(std::vector<LayerInfo> layers, EnergyModel energy = {});
  // layer_spikes and layer_synops: one run's [T, L] recordings over a batch of `batch`.
  void add(const Array& layer_spikes, const Array& layer_synops, std::int64_t batch);
  ActivityReport report() const { return report_; }

 private:
  ActivityReport report_;
};

}  // namespace mg::frontier::spanda
