// Counters: SynOps against a brute-force count of the synapses each input event reaches
// (dense and convolutional), spike rates, and the energy estimate's arithmetic.
#include <gtest/gtest.h>

#include <minigrad/frontier/spanda.hpp>
#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "tests/values.hpp"

namespace mg::frontier::spanda {
namespace {

TEST(SpandaCounters, ConvSynopsCountEveryReachedSynapse) {
  SpikingConv2D layer(2, 3, {3, 3}, {2, 2}, {1, 1}, {}, true, f64);
  Graph g;
  nn::bind(layer, g, 1);
  Tensor x = g.input("x", f64, {1, 2, 5, 5});
  Array xv = Array::zeros(Type{f64, {1, 2, 5, 5}});
  for (std::int64_t i = 0; i < 50; ++i) xv.set(i, (i * 13) % 7 < 3 ? 1.0 : 0.0);
  auto r = compile(g, {layer.synops(x)}).run({{"x", xv}});
  // Brute force: for each output position (3x3, stride 2, pad 1) and input channel, count
  // the events under the kernel; each reaches all 3 output channels.
  double want = 0;
  for (int oy = 0; oy < 3; ++oy)
    for (int ox = 0; ox < 3; ++ox)
      for (int c = 0; c < 2; ++c)
        for (int ky = 0; ky < 3; ++ky)
          for (int kx = 0; kx < 3; ++kx) {
            const int iy = oy * 2 - 1 + ky, ix = ox * 2 - 1 + kx;
            if (iy >= 0 && iy < 5 && ix >= 0 && ix < 5) want += 3 * xv.at(c * 25 + iy * 5 + ix);
          }
  EXPECT_GT(want, 0);
  EXPECT_DOUBLE_EQ(r[0].item(), want);
}

TEST(SpandaCounters, ReportRatesSynopsAndEnergy) {
  ActivityMeter meter({{"a", 4, 40}, {"b", 2, 8}});
  // Two steps over a batch of 3: layer a fired 6 then 3 spikes, b 1 then 2.
  meter.add(testing::vec({2, 2}, {6, 1, 3, 2}), testing::vec({2, 2}, {30, 24, 12, 12}), 3);
  ActivityReport r = meter.report();
  EXPECT_DOUBLE_EQ(r.spike_rate(0), 9.0 / (4 * 2 * 3));
  EXPECT_DOUBLE_EQ(r.spike_rate(1), 3.0 / (2 * 2 * 3));
  EXPECT_DOUBLE_EQ(r.synops_per_sample(), 78.0 / 3);
  EXPECT_DOUBLE_EQ(r.dense_macs_per_sample(), 48);
  EXPECT_DOUBLE_EQ(r.dense_energy_pj(), 48 * (3.7 + 0.9));
  EXPECT_DOUBLE_EQ(r.snn_energy_pj(), 26 * 0.9 + 2 * 6 * (3.7 + 2 * 0.9));
  EXPECT_NE(r.to_string().find("Horowitz ISSCC 2014"), std::string::npos);
  EXPECT_THROW(meter.add(testing::vec({2, 3}, {0, 0, 0, 0, 0, 0}), testing::vec({2, 3}, {0, 0, 0, 0, 0, 0}), 1),
               UserError);
}

}  // namespace
}  // namespace mg::frontier::spanda
