// The whole network against snnTorch's code paths: a 5-4-3 spiking network over T = 7 with
// snnTorch's Leaky (each reset mechanism), its atan and fast-sigmoid surrogates and
// ce_rate_loss, run in PyTorch with torch's autograd (gen_snntorch_goldens.py, f64). Loss,
// spike counts and every parameter's BPTT gradient must agree (the default neuron on both
// executors).
#include <gtest/gtest.h>

#include <cstring>

#include <minigrad/frontier/spanda.hpp>
#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "tests/values.hpp"

namespace mg::frontier::spanda {
namespace {

#include "tests/frontier/spanda/snntorch_goldens.inc"

TEST(SpandaSnntorchOracle, LossSpikesAndBpttGradientsMatch) {
  ASSERT_EQ(kGoldens.size(), 6u);
  for (const Golden& gold : kGoldens) {
    const Reset reset = std::strcmp(gold.reset, "subtract") == 0 ? Reset::subtract
                        : std::strcmp(gold.reset, "zero") == 0   ? Reset::zero
                                                                 : Reset::none;
    const Surrogate s = std::strcmp(gold.surrogate, "atan") == 0 ? Surrogate::atan() : Surrogate::fast_sigmoid();
    auto net = SpikingSequential{SpikingLinear(kIn, kHid, {.beta = 0.8, .threshold = 0.6, .surrogate = s, .reset = reset}, true, f64),
                                 SpikingLinear(kHid, kOut, {.beta = 0.7, .threshold = 0.9, .surrogate = s, .reset = reset}, true, f64)};
    Graph g;
    nn::bind(net, g);
    const std::vector<nn::Parameter*> params = nn::parameters(net);
    ASSERT_EQ(params.size(), 4u);
    const std::vector<const std::vector<double>*> values = {&kW1, &kB1, &kW2, &kB2};
    for (std::size_t i = 0; i < 4; ++i) params[i]->storage->value = Array::from_vector(params[i]->shape, *values[i]);
    Tensor xs = g.input("xs", f64, {kT, kB, kIn});
    Tensor y = g.input("y", i64, {kB});
    Recording rec = net(xs);
    Tensor loss = ce_rate_loss(rec.spikes, y);
    std::vector<Tensor> wrt;
    for (nn::Parameter* p : params) wrt.push_back(p->tensor);
    std::vector<Tensor> outs{loss, rec.spikes.sum(), rec.layer_spikes};
    for (const Tensor& d : grad(loss, wrt)) outs.push_back(d);
    // C99 for the default neuron (subtract, atan) only: each case is a C compile.
    const bool c99 = reset == Reset::subtract && s.kind == Surrogate::Kind::atan;
    for (Backend b : {Backend::interpreter, Backend::c99}) {
      if (b == Backend::c99 && !c99) continue;
      auto r = nn::compile_with_parameters(g, outs, net, b)
                   .run({{"xs", testing::vec({kT, kB, kIn}, kX)}, {"y", Array::from_vector<std::int64_t>({kB}, kY)}});
      const std::string what = std::string(gold.reset) + " / " + gold.surrogate;
      EXPECT_NEAR(r[0].item(), gold.loss, 1e-12) << what;
      EXPECT_EQ(r[1].item(), gold.spikes) << what;
      double hidden = 0;
      for (std::int64_t t = 0; t < kT; ++t) hidden += r[2].at(t * 2);
      EXPECT_EQ(hidden, gold.hidden) << what;
      for (std::size_t i = 0; i < 4; ++i) testing::expect_values(r[3 + i], gold.grads[i], 1e-12);
    }
  }
}

}  // namespace
}  // namespace mg::frontier::spanda
