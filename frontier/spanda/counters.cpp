// ActivityMeter: sums the recorded [T, L] counts; ActivityReport's ratios and energies.
#include "minigrad/frontier/spanda/counters.hpp"

#include <cstdio>

#include "minigrad/ir/errors.hpp"

namespace mg::frontier::spanda {

ActivityMeter::ActivityMeter(std::vector<LayerInfo> layers, EnergyModel energy) {
  for (LayerInfo& l : layers) report_.layers.push_back({std::move(l), 0, 0});
  report_.energy = energy;
}

void ActivityMeter::add(const Array& spikes, const Array& synops, std::int64_t batch) {
  const auto L = static_cast<std::int64_t>(report_.layers.size());
  if (spikes.rank() != 2 || spikes.shape()[1] != L || synops.shape() != spikes.shape())
    throw UserError("spanda::ActivityMeter::add: expects [T, " + std::to_string(L) + "] spike and SynOp counts, got " +
                    mg::to_string(spikes.type()) + " and " + mg::to_string(synops.type()));
  const std::int64_t T = spikes.shape()[0];
  if (report_.steps != 0 && report_.steps != T)
    throw UserError("spanda::ActivityMeter::add: runs of " + std::to_string(T) + " steps after runs of " +
                    std::to_string(report_.steps));
  report_.steps = T;
  report_.samples += batch;
  for (std::int64_t t = 0; t < T; ++t)
    for (std::int64_t l = 0; l < L; ++l) {
      report_.layers[l].spikes += spikes.at(t * L + l);
      report_.layers[l].synops += synops.at(t * L + l);
    }
}

double ActivityReport::spike_rate(std::size_t l) const {
  const double slots = static_cast<double>(layers.at(l).info.neurons) * static_cast<double>(steps * samples);
  return slots > 0 ? layers[l].spikes / slots : 0.0;
}

double ActivityReport::synops_per_sample() const {
  double s = 0;
  for (const LayerActivity& l : layers) s += l.synops;
  return samples > 0 ? s / static_cast<double>(samples) : 0.0;
}

double ActivityReport::dense_macs_per_sample() const {
  double m = 0;
  for (const LayerActivity& l : layers) m += static_cast<double>(l.info.dense_macs);
  return m;
}

double ActivityReport::snn_energy_pj() const {
  double neurons = 0;
  for (const LayerActivity& l : layers) neurons += static_cast<double>(l.info.neurons);
  return synops_per_sample() * energy.add_pj +
         static_cast<double>(steps) * neurons * (energy.mult_pj + 2 * energy.add_pj);
}

double ActivityReport::dense_energy_pj() const { return dense_macs_per_sample() * (energy.mult_pj + energy.add_pj); }

std::string ActivityReport::to_string() const {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-10s %9s %12s %12s %14s\n", "layer", "neurons", "spike rate", "sparsity",
                "SynOps/sample");
  out += line;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const double r = spike_rate(i);
    std::snprintf(line, sizeof line, "%-10s %9lld %11.2f%% %11.2f%% %14.0f\n", layers[i].info.name.c_str(),
                  static_cast<long long>(layers[i].info.neurons), 100 * r, 100 * (1 - r),
                  samples > 0 ? layers[i].synops / static_cast<double>(samples) : 0.0);
    out += line;
  }
  std::snprintf(line, sizeof line,
                "SynOps/sample (T=%lld) %.0f vs dense MACs/sample %.0f (%.2fx)\n"
                "energy/sample (Horowitz ISSCC 2014, 45 nm fp32: add %.1f pJ, mult %.1f pJ): SNN %.1f nJ "
                "(SynOps x add + membrane updates) vs dense %.1f nJ (MACs x (mult + add)): %.2fx\n",
                static_cast<long long>(steps), synops_per_sample(), dense_macs_per_sample(),
                synops_per_sample() / dense_macs_per_sample(), energy.add_pj, energy.mult_pj, snn_energy_pj() / 1e3,
                dense_energy_pj() / 1e3, dense_energy_pj() / snn_energy_pj());
  out += line;
  return out;
}

}  // namespace mg::frontier::spanda
