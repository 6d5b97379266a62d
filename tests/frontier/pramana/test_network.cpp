// PRAMANA on networks: a 3-layer network's output moments against Monte Carlo (exact where
// the stated assumptions hold; the diagonal assumption's error measured where they do not),
// the layer API against the one-pass API, C99 against the interpreter, second-order
// gradients of the propagated moments, and GaussianNLLLoss against torch.nn.GaussianNLLLoss.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include <boost/hana/adapt_struct.hpp>

#include <minigrad/dsl/autodiff.hpp>
#include <minigrad/dsl/compile.hpp>
#include <minigrad/dsl/expr.hpp>
#include <minigrad/dsl/graph.hpp>
#include <minigrad/dsl/nn/module.hpp>
#include <minigrad/dsl/nn/train.hpp>
#include <minigrad/dsl/tensor_methods.hpp>
#include <minigrad/frontier/pramana.hpp>
#include <minigrad/ir/errors.hpp>
#include <minigrad/ir/ops.hpp>

#include "tests/frontier/pramana/mc.hpp"
#include "tests/ops/gradcheck.hpp"

namespace pr = mg::frontier::pramana;

struct ThreeLayer {
  pr::DistributionalLinear fc1{8, 8, true, mg::f64}, fc2{8, 4, true, mg::f64}, fc3{4, 2, true, mg::f64};
  mg::Tensor operator()(const mg::Tensor& x) const { return fc3(fc2(mg::Tensor(mg::relu(fc1(x))))); }
};
BOOST_HANA_ADAPT_STRUCT(ThreeLayer, fc1, fc2, fc3);

struct Mlp {
  pr::DistributionalLinear fc1{8, 32, true, mg::f64}, fc2{32, 32, true, mg::f64}, fc3{32, 2, true, mg::f64};
  mg::Tensor operator()(const mg::Tensor& x) const {
    return fc3(mg::Tensor(mg::tanh(fc2(mg::Tensor(mg::relu(fc1(x)))))));
  }
};
BOOST_HANA_ADAPT_STRUCT(Mlp, fc1, fc2, fc3);

namespace mg {
namespace {

using testing::pramana::column_stats;
using testing::pramana::gaussian_samples;
using testing::pramana::kSamples;
using testing::pramana::within_5se;

const std::vector<double> kMean = {0.3, -0.8, 1.1, 0.0, -0.2, 0.6, -1.3, 0.9};

Array rows(std::int64_t n, std::int64_t d, const std::vector<double>& v) {
  std::vector<double> all;
  for (std::int64_t i = 0; i < n; ++i) all.insert(all.end(), v.begin(), v.end());
  return Array::from_vector<double>({n, d}, all);
}

// The network's moments in one pass ([1, 8] input) and by Monte Carlo over kSamples draws.
template <class M>
std::pair<std::vector<Array>, testing::pramana::ColumnStats> one_pass_and_mc(M& net, double input_var,
                                                                               MomentsOf* report = nullptr) {
  Graph g;
  nn::bind(net, g, 5);
  Tensor m = g.input("m", f64, {1, 8}), v = g.input("v", f64, {1, 8});
  pr::DistributionalTensor y = pr::propagate([&](const Tensor& x) { return net(x); }, pr::gaussian(m, v), report);
  auto exe = nn::compile_with_parameters(g, {y.mean, y.var}, net);
  auto got = exe.run({{"m", rows(1, 8, kMean)}, {"v", rows(1, 8, std::vector<double>(8, input_var))}});

  Graph mc;
  nn::bind(net, mc, 5);
  Tensor x = mc.input("x", f64, {kSamples, 8});
  auto mce = nn::compile_with_parameters(mc, {net(x)}, net);
  auto samples = mce.run({{"x", gaussian_samples(kSamples, kMean, std::vector<double>(8, input_var), 77)}});
  return {got, column_stats(samples[0])};
}

// Linear (rows orthogonal: its outputs are independent Gaussians) -> ReLU (exact rectified
// Gaussian) -> Linear (each output reads its own two units: still independent) -> Linear
// (a sum of independent terms): every rule's assumption holds, so the one-pass moments are
// the true ones, within 5 standard errors of 2e5 samples.
TEST(PramanaNetwork, ThreeLayerMomentsMatchMonteCarloWhenTheAssumptionsHold) {
  ThreeLayer net;
  Graph g0;
  nn::bind(net, g0, 5);
  std::vector<double> h(64);  // Sylvester Hadamard 8x8 / 2: orthogonal rows
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 8; ++j) h[i * 8 + j] = (__builtin_popcount(i & j) % 2 ? -0.5 : 0.5);
  net.fc1.linear.weight.assign(Array::from_vector<double>({8, 8}, h));
  std::vector<double> w2(32, 0.0);
  for (int i = 0; i < 4; ++i) w2[i * 8 + 2 * i] = 1.0 + 0.3 * i, w2[i * 8 + 2 * i + 1] = -0.7 + 0.2 * i;
  net.fc2.linear.weight.assign(Array::from_vector<double>({4, 8}, w2));
  MomentsOf report;
  auto [got, mc] = one_pass_and_mc(net, 0.4, &report);
  EXPECT_EQ(within_5se(got[0], got[1], mc, "3-layer"), "");
  for (auto& s : report.report) EXPECT_EQ(s.kind, ir::MomentKind::exact) << s.op;
}

// Each column of an [n, d] array permuted on its own: the marginals stay, the dependence
// between columns (units) goes.
Array decorrelate(const Array& a, std::uint64_t seed) {
  const std::int64_t n = a.type().shape[0], d = a.numel() / n;
  Array out = a.clone();
  double* v = out.data<double>();
  std::vector<double> col(static_cast<std::size_t>(n));
  std::mt19937_64 rng(seed);
  for (std::int64_t j = 0; j < d; ++j) {
    for (std::int64_t i = 0; i < n; ++i) col[i] = v[i * d + j];
    std::shuffle(col.begin(), col.end(), rng);
    for (std::int64_t i = 0; i < n; ++i) v[i * d + j] = col[i];
  }
  return out;
}

// A general 8-32-32-2 ReLU/tanh MLP (default init): its hidden units share their inputs, so
// they are correlated, and the diagonal propagation drops those covariances. Against the
// true Monte Carlo the means agree closely and the variances only roughly (measured, printed;
// on this net one output's variance is about half the true one). Against a Monte Carlo that
// keeps each hidden unit's marginal but makes the units independent (each column shuffled
// on its own between layers: exactly the diagonal assumption), the one pass agrees within
// 5 standard errors: what remains is the covariance, not a rule.
TEST(PramanaNetwork, GeneralMlpDiffersFromMonteCarloOnlyByTheDroppedCovariances) {
  Mlp net;
  auto [got, mc] = one_pass_and_mc(net, 0.05);
  // The same network, layer by layer, units decorrelated between layers.
  Array h = gaussian_samples(kSamples, kMean, std::vector<double>(8, 0.05), 77);
  auto layer = [&](auto&& f, std::int64_t in) {
    Graph g;
    nn::bind(net, g, 5);
    Tensor x = g.input("x", f64, {kSamples, in});
    return nn::compile_with_parameters(g, {f(x)}, net).run({{"x", h}})[0];
  };
  h = decorrelate(layer([&](const Tensor& x) { return Tensor(relu(net.fc1(x))); }, 8), 1);
  h = decorrelate(layer([&](const Tensor& x) { return Tensor(tanh(net.fc2(x))); }, 32), 2);
  const auto independent = column_stats(layer([&](const Tensor& x) { return net.fc3(x); }, 32));
  EXPECT_EQ(within_5se(got[0], got[1], independent, "decorrelated MLP"), "");
  for (std::size_t j = 0; j < 2; ++j) {
    const double m = got[0].span<double>()[j], v = got[1].span<double>()[j];
    std::printf("output %zu: one pass mean %.5f var %.6f | Monte Carlo mean %.5f var %.6f | units decorrelated: "
                "mean %.5f var %.6f\n",
                j, m, v, mc.mean[j], mc.var[j], independent.mean[j], independent.var[j]);
    EXPECT_LT(std::abs(m - mc.mean[j]), 0.2 * std::sqrt(mc.var[j]));  // the covariances barely move the mean
  }
}

// DistributionalLinear and relu on DistributionalTensors, layer by layer, give the one-pass
// result; both executors agree on the propagated graph.
TEST(PramanaNetwork, LayerApiAndC99AgreeWithTheOnePass) {
  ThreeLayer net;
  Graph g;
  nn::bind(net, g, 9);
  Tensor m = g.input("m", f64, {3, 8}), v = g.input("v", f64, {3, 8});
  pr::DistributionalTensor x = pr::gaussian(m, v);
  pr::DistributionalTensor layered = net.fc3(net.fc2(pr::relu(net.fc1(x))));
  pr::DistributionalTensor whole = pr::propagate([&](const Tensor& t) { return net(t); }, x);
  const std::vector<Tensor> outs = {layered.mean, layered.var, whole.mean, whole.var};
  std::vector<double> mv, vv;
  for (int i = 0; i < 24; ++i) mv.push_back(std::sin(0.9 * i)), vv.push_back(0.05 + 0.02 * (i % 7));
  const std::vector<Feed> feeds = {{"m", Array::from_vector<double>({3, 8}, mv)}, {"v", Array::from_vector<double>({3, 8}, vv)}};
  auto a = nn::compile_with_parameters(g, outs, net).run(feeds);
  auto c = nn::compile_with_parameters(g, outs, net, Backend::c99).run(feeds);
  for (int k = 0; k < 2; ++k)
    for (std::int64_t i = 0; i < a[k].numel(); ++i) {
      EXPECT_NEAR(a[k].span<double>()[i], a[k + 2].span<double>()[i], 1e-14);
      for (int j : {k, k + 2}) EXPECT_NEAR(a[j].span<double>()[i], c[j].span<double>()[i], 1e-12 * (1 + std::abs(a[j].span<double>()[i])));
    }
}

// The quadrature (tanh), rectified-Gaussian (relu) and matmul rules on both executors.
TEST(PramanaNetwork, C99AgreesWithTheInterpreterOnAnMlpsMoments) {
  Mlp net;
  Graph g;
  nn::bind(net, g, 3);
  Tensor m = g.input("m", f64, {4, 8}), v = g.input("v", f64, {4, 8});
  pr::DistributionalTensor y = pr::propagate([&](const Tensor& t) { return net(t); }, pr::gaussian(m, v));
  std::vector<double> mv, vv;
  for (int i = 0; i < 32; ++i) mv.push_back(std::cos(0.7 * i)), vv.push_back(0.01 + 0.03 * (i % 5));
  const std::vector<Feed> feeds = {{"m", Array::from_vector<double>({4, 8}, mv)}, {"v", Array::from_vector<double>({4, 8}, vv)}};
  auto a = nn::compile_with_parameters(g, {y.mean, y.var}, net).run(feeds);
  auto c = nn::compile_with_parameters(g, {y.mean, y.var}, net, Backend::c99).run(feeds);
  for (int k = 0; k < 2; ++k)
    for (std::int64_t i = 0; i < a[k].numel(); ++i)
      EXPECT_NEAR(a[k].span<double>()[i], c[k].span<double>()[i], 1e-12 * (1 + std::abs(a[k].span<double>()[i])));
}

// The propagated moments are ordinary IR: their first and second derivatives (w.r.t. the
// input mean, variance and the weight) match f64 finite differences.
TEST(PramanaNetwork, PropagatedMomentsDifferentiateToSecondOrder) {
  ir::Graph g;
  ir::Value m = g.add_input("m", Type{f64, {2, 3}}), v = g.add_input("v", Type{f64, {2, 3}});
  ir::Value w = g.add_input("w", Type{f64, {3, 2}});
  ir::Value y = ir::unary("tanh", ir::unary("relu", ir::matmul(m, w)));
  const std::vector<ir::Value> outs = {ir::add(y, ir::exp(ir::scale(y, 0.5)))};
  auto r = passes::propagate_moments(outs, std::vector<ir::Value>{m}, std::vector<ir::Value>{m}, std::vector<ir::Value>{v});
  const std::vector<Array> values = {testing::sample(m.type(), ir::Domain::any, 1),
                                     testing::sample(v.type(), ir::Domain::positive, 2),
                                     testing::sample(w.type(), ir::Domain::any, 3)};
  for (const ir::Value& out : {r.mean[0], r.var[0]}) {
    auto res = testing::check_gradients(out, {m, v, w}, values, 2, 1e-6, 4);
    EXPECT_TRUE(res.ok) << res.report;
  }
}

// torch.nn.GaussianNLLLoss(full, eps=1e-6) on these values (torch 1.13, f64), with two
// variances below eps: torch clamps them under no_grad, so their gradient is d/dvar at eps.
TEST(PramanaLoss, GaussianNllMatchesTorchValueAndGradient) {
  const std::vector<double> in = {0.5, -1.0, 2.0, 0.1, 0.3, -0.7}, tg = {0.4, -0.5, 1.0, 0.2, 0.1, 0.0},
                            va = {0.5, 1e-8, 2.0, 0.0, 1e-7, 0.3};
  const std::vector<double> want_gi = {0.033333333333333326, -83333.33333333333, 0.08333333333333333,
                                       -16666.666666666668, 33333.33333333333,   -0.3888888888888889};
  const std::vector<double> want_gv = {0.16333333333333333, -20833250000.0, 0.020833333333333332,
                                       -833250000.0000001,  -3333249999.999999, -0.17592592592592582};
  for (bool full : {false, true}) {
    Graph g;
    Tensor i = g.input("i", f64, {2, 3}), t = g.input("t", f64, {2, 3}), v = g.input("v", f64, {2, 3});
    Tensor loss = pr::GaussianNLLLoss{.full = full}(i, t, v);
    auto [gi, gv] = grad(loss, {i, v});
    auto out = compile(g, {loss, gi, gv})
                   .run({{"i", Array::from_vector<double>({2, 3}, in)},
                         {"t", Array::from_vector<double>({2, 3}, tg)},
                         {"v", Array::from_vector<double>({2, 3}, va)}});
    EXPECT_NEAR(out[0].span<double>()[0], full ? 24997.544174271126 : 24996.625235737924, 1e-9);
    for (int k = 0; k < 6; ++k) {
      EXPECT_NEAR(out[1].span<double>()[k], want_gi[k], 1e-12 * (1 + std::abs(want_gi[k])));
      EXPECT_NEAR(out[2].span<double>()[k], want_gv[k], 1e-12 * (1 + std::abs(want_gv[k])));
    }
  }
}

// torch.nn.GaussianNLLLoss with one variance per row: var [2] (unsqueezed) and [2, 1].
TEST(PramanaLoss, GaussianNllTakesTorchsVarianceShapes) {
  const std::vector<double> in = {0.5, -1.0, 2.0, 0.1, 0.3, -0.7}, tg = {0.4, -0.5, 1.0, 0.2, 0.1, 0.0};
  const std::vector<double> want_gi = {0.033333333333333326, -0.16666666666666666, 0.3333333333333333,
                                       -16666.666666666668,  33333.33333333333,    -116666.66666666666};
  for (Shape vs : {Shape{2}, Shape{2, 1}}) {
    Graph g;
    Tensor i = g.input("i", f64, {2, 3}), t = g.input("t", f64, {2, 3}), v = g.input("v", f64, vs);
    Tensor loss = pr::GaussianNLLLoss{}(i, t, v);
    auto [gi, gv] = grad(loss, {i, v});
    auto out = compile(g, {loss, gi, gv})
                   .run({{"i", Array::from_vector<double>({2, 3}, in)},
                         {"t", Array::from_vector<double>({2, 3}, tg)},
                         {"v", Array::from_vector<double>(vs, {0.5, 1e-8})}});
    EXPECT_NEAR(out[0].span<double>()[0], 44996.58283556535, 1e-9);
    for (int k = 0; k < 6; ++k) EXPECT_NEAR(out[1].span<double>()[k], want_gi[k], 1e-12 * (1 + std::abs(want_gi[k])));
    EXPECT_NEAR(out[2].span<double>()[0], 0.08000000000000002, 1e-14);
    EXPECT_NEAR(out[2].span<double>()[1], -44999749999.99999, 1e-3);
  }
  Graph g;
  Tensor i = g.input("i", f64, {2, 3}), v = g.input("v", f64, {3});
  EXPECT_THROW(pr::GaussianNLLLoss{}(i, i, v), ShapeError);
}

// Heteroscedastic training: a GaussianHead fitted with GaussianNLLLoss on y = 2x - 1 + e,
// e ~ N(0, (0.2 + 0.6 x)^2) for x in [0, 1], learns the mean line and the growing noise.
TEST(PramanaLoss, HeteroscedasticTrainingLearnsTheNoise) {
  const std::int64_t n = 4096;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  std::normal_distribution<double> z(0, 1);
  Array X(Type{f64, {n, 1}}), Y(Type{f64, {n, 1}});
  for (std::int64_t i = 0; i < n; ++i) {
    const double x = u(rng);
    X.set(i, x), Y.set(i, 2 * x - 1 + (0.2 + 0.6 * x) * z(rng));
  }
  pr::GaussianHead head(1, 1, f64);
  Graph g;
  nn::bind(head, g, 1);
  Tensor x = g.input("x", f64, {n, 1}), y = g.input("y", f64, {n, 1});
  pr::DistributionalTensor p = head(x);
  auto step = nn::compile_train(g, pr::GaussianNLLLoss{}(p.mean, y, p.var), head, nn::Adam{.lr = 0.05});
  for (int s = 0; s < 600; ++s) step.run({{"x", X}, {"y", Y}});
  Graph e;
  nn::bind(head, e, 1);
  Tensor xe = e.input("x", f64, {2, 1});
  pr::DistributionalTensor pe = head(xe);
  auto out = nn::compile_with_parameters(e, {pe.mean, pe.var}, head).run({{"x", Array::from<double>({2, 1}, {0.1, 0.9})}});
  std::printf("x = 0.1: mean %.4f sd %.4f; x = 0.9: mean %.4f sd %.4f\n", out[0].at(0), std::sqrt(out[1].at(0)),
              out[0].at(1), std::sqrt(out[1].at(1)));
  EXPECT_NEAR(out[0].at(0), -0.8, 0.05);
  EXPECT_NEAR(out[0].at(1), 0.8, 0.08);
  // softplus(a x + b) is not a square, so the fit is close, not exact: sd 0.26 and 0.74.
  EXPECT_NEAR(std::sqrt(out[1].at(0)), 0.26, 0.06);
  EXPECT_NEAR(std::sqrt(out[1].at(1)), 0.74, 0.08);
  EXPECT_GT(out[1].at(1), 4 * out[1].at(0));
}

}  // namespace
}  // namespace mg
