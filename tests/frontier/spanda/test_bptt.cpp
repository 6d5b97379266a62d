// BPTT through one scan: the gradients equal those of the same network unrolled step by
// step (a loop of T copies), the scan graph does not grow with T, and the interpreter and
// the C99 backend agree on the trained network's values and gradients.
#include <gtest/gtest.h>

#include <cmath>

#include <boost/hana/at.hpp>

#include <minigrad/frontier/spanda.hpp>
#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "tests/values.hpp"

namespace mg::frontier::spanda {
namespace {

const Leaky kLif{.beta = 0.8, .threshold = 0.3};

auto make_net() {
  return SpikingSequential{SpikingLinear(6, 5, kLif, true, f64), SpikingLinear(5, 3, kLif, true, f64)};
}
using Net = decltype(make_net());

Array spikes_in(std::int64_t T, std::int64_t B, std::int64_t n) {
  Array x = Array::zeros(Type{f64, {B, n}});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, 0.2 + 0.6 * static_cast<double>((i * 7) % 5) / 4.0);
  return rate_encode(x, T, 11);
}

// The unrolled reference: T copies of the step, written directly with Leaky::step.
Tensor unrolled_spikes(const Net& net, const Tensor& xs) {
  const auto& l1 = boost::hana::at_c<0>(net.layers);
  const auto& l2 = boost::hana::at_c<1>(net.layers);
  const std::int64_t T = xs.shape()[0], B = xs.shape()[1];
  Tensor m1 = graph_of(xs).zeros({B, 5}, f64), m2 = graph_of(xs).zeros({B, 3}, f64);
  std::vector<Tensor> out;
  for (std::int64_t t = 0; t < T; ++t) {
    Tensor x = slice(xs, 0, t, t + 1).squeeze(0);
    auto [s1, u1] = l1.lif.step(l1.current(x), m1);
    auto [s2, u2] = l2.lif.step(l2.current(s1), m2);
    m1 = u1;
    m2 = u2;
    out.push_back(s2);
  }
  return stack(out, 0);
}

TEST(SpandaBptt, ScanGradientsEqualTheUnrolledGraphs) {
  const std::int64_t T = 8, B = 4;
  Net net = make_net();
  Graph g;
  nn::bind(net, g, 5);
  Tensor xs = g.input("xs", f64, {T, B, 6});
  Tensor y = g.input("y", i64, {B});
  Recording rec = net(xs);
  Tensor loss_scan = ce_rate_loss(rec.spikes, y);
  Tensor loss_unrolled = ce_rate_loss(unrolled_spikes(net, xs), y);
  std::vector<Tensor> params;
  for (nn::Parameter* p : nn::parameters(net)) params.push_back(p->tensor);
  std::vector<Tensor> gs = grad(loss_scan, params), gu = grad(loss_unrolled, params);
  std::vector<Tensor> outs{loss_scan, loss_unrolled, rec.layer_spikes};
  outs.insert(outs.end(), gs.begin(), gs.end());
  outs.insert(outs.end(), gu.begin(), gu.end());
  const Array xv = spikes_in(T, B, 6);
  const Array yv = Array::from_vector<std::int64_t>({B}, {0, 1, 2, 1});
  std::vector<std::vector<Array>> runs;
  for (Backend b : {Backend::interpreter, Backend::c99})
    runs.push_back(nn::compile_with_parameters(g, outs, net, b).run({{"xs", xv}, {"y", yv}}));
  for (const auto& r : runs) {
    EXPECT_NEAR(r[0].item(), r[1].item(), 1e-12);
    // The test means something only if both layers spiked, and not always.
    for (std::int64_t l = 0; l < 2; ++l) {
      double fired = 0;
      for (std::int64_t t = 0; t < T; ++t) fired += r[2].at(t * 2 + l);
      EXPECT_GT(fired, 0) << "layer " << l;
      EXPECT_LT(fired, static_cast<double>(T * B * (l == 0 ? 5 : 3))) << "layer " << l;
    }
    double norm = 0;
    for (std::size_t i = 0; i < params.size(); ++i) {
      const Array& a = r[3 + i];
      const Array& b = r[3 + params.size() + i];
      for (std::int64_t k = 0; k < a.numel(); ++k) {
        EXPECT_NEAR(a.at(k), b.at(k), 1e-12) << "parameter " << i << " element " << k;
        norm += a.at(k) * a.at(k);
      }
    }
    EXPECT_GT(norm, 1e-6);  // gradients flowed through the surrogate
  }
  for (std::size_t i = 0; i < runs[0].size(); ++i)
    for (std::int64_t k = 0; k < runs[0][i].numel(); ++k)
      EXPECT_NEAR(runs[0][i].at(k), runs[1][i].at(k), 1e-10) << "output " << i << " (interpreter vs C99)";
}

// Forward, loss and the whole backward: the same number of nodes at T = 5 and T = 50.
TEST(SpandaBptt, TheGraphDoesNotGrowWithT) {
  auto nodes = [](std::int64_t T) {
    Net net = make_net();
    Graph g;
    nn::bind(net, g, 5);
    Tensor xs = g.input("xs", f64, {T, 4, 6});
    Tensor y = g.input("y", i64, {4});
    Tensor loss = ce_rate_loss(net(xs).spikes, y);
    std::vector<Tensor> params;
    for (nn::Parameter* p : nn::parameters(net)) params.push_back(p->tensor);
    grad(loss, params);
    return g.ir().size();
  };
  EXPECT_EQ(nodes(5), nodes(50));
}

// A convolutional spiking network (its first layer's convolution hoisted out of the loop
// over all T x B images at once): spikes and gradients equal the unrolled network's, and a
// training step runs.
TEST(SpandaBptt, SpikingConvNetworkMatchesItsUnrolledGraphAndTrains) {
  const Leaky lif{.beta = 0.8, .threshold = 0.2};
  auto net = SpikingSequential{SpikingConv2D(1, 2, {3, 3}, {1, 1}, {1, 1}, lif, true, f64),
                               nn::MaxPool2D{{.kernel_size = {2, 2}}}, nn::Flatten{},
                               SpikingLinear(2 * 2 * 2, 3, lif, true, f64)};
  Graph g;
  nn::bind(net, g, 2);
  const std::int64_t T = 4, B = 2;
  Tensor xs = g.input("xs", f64, {T, B, 1, 4, 4});
  Tensor y = g.input("y", i64, {B});
  Recording rec = net(xs);
  ASSERT_EQ(rec.spikes.shape(), (Shape{T, B, 3}));
  ASSERT_EQ(rec.layers.size(), 2u);
  EXPECT_EQ(rec.layers[0].neurons, 2 * 4 * 4);
  EXPECT_EQ(rec.layers[0].dense_macs, 2 * 4 * 4 * 9);
  EXPECT_EQ(rec.layers[1].dense_macs, 3 * 8);
  const auto& conv = boost::hana::at_c<0>(net.layers);
  const auto& pool = boost::hana::at_c<1>(net.layers);
  const auto& fc = boost::hana::at_c<3>(net.layers);
  Tensor m1 = g.zeros({B, 2, 4, 4}, f64), m2 = g.zeros({B, 3}, f64);
  std::vector<Tensor> out;
  for (std::int64_t t = 0; t < T; ++t) {
    auto [s1, u1] = conv.lif.step(conv.current(slice(xs, 0, t, t + 1).squeeze(0)), m1);
    auto [s2, u2] = fc.lif.step(fc.current(flatten(pool(s1), 1)), m2);
    m1 = u1;
    m2 = u2;
    out.push_back(s2);
  }
  Tensor unrolled = stack(out, 0);
  Tensor loss = mse_count_loss(rec.spikes, y), loss_u = mse_count_loss(unrolled, y);
  std::vector<Tensor> params;
  for (nn::Parameter* p : nn::parameters(net)) params.push_back(p->tensor);
  std::vector<Tensor> outs{rec.spikes, unrolled, rec.layer_spikes};
  for (const Tensor& d : grad(loss, params)) outs.push_back(d);
  for (const Tensor& d : grad(loss_u, params)) outs.push_back(d);
  Array xv = rate_encode(Array::full(Type{f64, {B, 1, 4, 4}}, 0.7), T, 1);
  const Array yv = Array::from_vector<std::int64_t>({B}, {0, 2});
  auto r = nn::compile_with_parameters(g, outs, net).run({{"xs", xv}, {"y", yv}});
  testing::expect_values(r[0], r[1].to_doubles());
  double fired = 0;
  for (std::int64_t t = 0; t < T; ++t) fired += r[2].at(t * 2);
  EXPECT_GT(fired, 0);
  EXPECT_LT(fired, static_cast<double>(T * B * 32));
  for (std::size_t i = 0; i < params.size(); ++i) testing::expect_values(r[3 + i], r[3 + params.size() + i].to_doubles());
  auto step = nn::compile_train(g, loss, net, nn::SGD{.lr = 0.1});
  EXPECT_TRUE(std::isfinite(step.run({{"xs", xv}, {"y", yv}})));
}

}  // namespace
}  // namespace mg::frontier::spanda
