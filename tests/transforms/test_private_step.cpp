// The DP-SGD training step (issue 15): ONE graph of per-sample gradients (vmap of grad),
// per-example clipping over all parameters, sum, seeded counter-based Gaussian noise,
// average and the optimizer's update. Checked against a loop over examples, for the noise's
// reproducibility / freshness / scale, and C99 against the interpreter.
#include <gtest/gtest.h>

#include <cmath>

#include "minigrad/minigrad.hpp"
#include "minigrad/nn.hpp"
#include "minigrad/runtime/c99/export.hpp"
#include "tests/ops/gradcheck.hpp"
#include "tests/scratch_dir.hpp"

namespace {
struct Tiny {  // 5 -> 4 -> 3, tanh, f64
  mg::nn::Linear fc1{5, 4, true, mg::f64}, fc2{4, 3, true, mg::f64};
  mg::Tensor operator()(const mg::Tensor& x) const { return fc2(mg::tanh(fc1(x))); }
};
}  // namespace
BOOST_HANA_ADAPT_STRUCT(Tiny, fc1, fc2);

namespace mg {
namespace {

constexpr std::int64_t kB = 6;

Array batch_x() { return testing::sample(Type{f64, {kB, 5}}, ir::Domain::any, 21); }
Array batch_y() {
  Array y(Type{i64, {kB}});
  for (std::int64_t b = 0; b < kB; ++b) y.set(b, static_cast<double>(b % 3));
  return y;
}

Tensor example_loss(const Tiny& m, const std::vector<Tensor>& e) {
  return nn::cross_entropy(m(e[0].unsqueeze(0)), e[1].reshape({1}));
}

nn::TrainStep private_step(Tiny& m, nn::Privacy p, double lr, Backend backend = Backend::interpreter) {
  Graph g;
  nn::bind(m, g, 3);
  Tensor x = g.input("x", f64, {kB, 5});
  Tensor y = g.input("y", i64, {kB});
  return nn::compile_train(
      g, [&](const std::vector<Tensor>& e) { return example_loss(m, e); }, {x, y}, m, nn::SGD{.lr = lr},
      {.backend = backend, .privacy = p});
}

std::map<std::string, Array> params_after(nn::TrainStep& step, int steps) {
  for (int i = 0; i < steps; ++i) step.run({{"x", batch_x()}, {"y", batch_y()}});
  return step.parameters();
}

void expect_same(const std::map<std::string, Array>& a, const std::map<std::string, Array>& b, double tol) {
  ASSERT_EQ(a.size(), b.size());
  for (auto& [name, v] : a)
    for (std::int64_t i = 0; i < v.numel(); ++i)
      ASSERT_NEAR(v.at(i), b.at(name).at(i), tol * (1 + std::fabs(b.at(name).at(i)))) << name << "[" << i << "]";
}

TEST(PrivateStep, WithoutClippingOrNoiseItIsSgdOnTheMeanLoss) {
  Tiny a, b;
  auto dp = private_step(a, {.noise_multiplier = 0, .max_grad_norm = 1e9}, 0.5);
  Graph g;
  nn::bind(b, g, 3);
  Tensor x = g.input("x", f64, {kB, 5});
  Tensor y = g.input("y", i64, {kB});
  auto plain = nn::compile_train(g, nn::cross_entropy(b(x), y), b, nn::SGD{.lr = 0.5});
  expect_same(params_after(dp, 3), params_after(plain, 3), 1e-12);
}

// One SGD step of clipped per-example gradients, weighted, summed and divided, computed
// one example at a time.
std::map<std::string, Array> loop_step(double C, double lr, const std::vector<double>& w, double divisor) {
  Tiny r;
  Graph g;
  nn::bind(r, g, 3);
  Tensor x1 = g.input("x", f64, {5});
  Tensor y1 = g.input("y", i64, {});
  std::vector<Tensor> ps;
  for (nn::Parameter* p : nn::parameters(r)) ps.push_back(p->tensor);
  std::vector<Tensor> gs = grad(example_loss(r, {x1, y1}), ps);
  Executable single = compile(g, gs);
  std::map<std::string, Array> want;
  for (nn::Parameter* p : nn::parameters(r)) want[p->name()] = p->value().clone();
  Array xs = batch_x(), ys = batch_y();
  std::vector<Array> sum;
  bool clipped_some = false;
  for (std::int64_t b = 0; b < kB; ++b) {
    std::vector<Feed> feeds{{"x", Array::zeros(Type{f64, {5}})}, {"y", Array::scalar(i64, ys.at(b))}};
    for (int i = 0; i < 5; ++i) feeds[0].value.set(i, xs.at(b * 5 + i));
    for (nn::Parameter* p : nn::parameters(r)) feeds.emplace_back(p->name(), p->value());
    std::vector<Array> g1 = single.run(feeds);
    double n2 = 0;
    for (auto& a : g1)
      for (std::int64_t i = 0; i < a.numel(); ++i) n2 += a.at(i) * a.at(i);
    const double f = std::min(1.0, C / (std::sqrt(n2) + 1e-6));
    clipped_some = clipped_some || f < 1;
    if (sum.empty())
      for (auto& a : g1) sum.push_back(Array::zeros(a.type()));
    for (std::size_t k = 0; k < g1.size(); ++k)
      for (std::int64_t i = 0; i < g1[k].numel(); ++i) sum[k].set(i, sum[k].at(i) + w[b] * f * g1[k].at(i));
  }
  EXPECT_TRUE(clipped_some) << "the bound must bite for the test to mean anything";
  std::size_t k = 0;
  for (nn::Parameter* p : nn::parameters(r)) {
    Array& a = want[p->name()];
    for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, a.at(i) - lr * sum[k].at(i) / divisor);
    ++k;
  }
  return want;
}

TEST(PrivateStep, ClippingEqualsALoopOverExamples) {
  const double C = 0.05, lr = 0.5;
  Tiny m;
  auto dp = private_step(m, {.noise_multiplier = 0, .max_grad_norm = C}, lr);
  expect_same(params_after(dp, 1), loop_step(C, lr, std::vector<double>(kB, 1.0), kB), 1e-12);
}

TEST(PrivateStep, PoissonPaddingWeightsAndTheExpectedBatchSize) {
  const double C = 0.05, lr = 0.5, expected = 4.5;
  const std::vector<double> w{1, 0, 1, 1, 0, 1};  // rows 1 and 4 are padding
  Tiny m;
  Graph g;
  nn::bind(m, g, 3);
  Tensor x = g.input("x", f64, {kB, 5});
  Tensor y = g.input("y", i64, {kB});
  Tensor wt = g.input("w", f64, {kB});
  auto dp = nn::compile_train(
      g, [&](const std::vector<Tensor>& e) { return example_loss(m, e); }, {x, y}, m, nn::SGD{.lr = lr},
      {.privacy = nn::Privacy{.noise_multiplier = 0, .max_grad_norm = C, .weights = wt, .expected_batch_size = expected}});
  dp.run({{"x", batch_x()}, {"y", batch_y()}, {"w", Array::from_vector(Shape{kB}, w)}});
  expect_same(dp.parameters(), loop_step(C, lr, w, expected), 1e-12);
}

TEST(PrivateStep, NoiseIsSeededFreshPerStepAndScaled) {
  // grads of sum(w * x_b) are x_b: clipped sums are known; the rest is the noise.
  Graph g;
  const std::int64_t n = 20000;
  Tensor w = g.input("w", f64, {n});
  Tensor X = g.input("X", f64, {4, n});
  Tensor step = g.input("step", i64, {});
  const nn::Privacy p{.noise_multiplier = 1.5, .max_grad_norm = 2.0, .seed = 11};
  auto dp = nn::private_gradients([&](const std::vector<Tensor>& e) { return (w * e[0]).sum(); }, {X}, {w}, {"w"},
                                  step, p);
  Executable exe = compile(g, {dp.grads[0]});
  Array xv = Array::zeros(Type{f64, {4, n}});  // zero gradients: the output is noise / 4 only
  auto at_step = [&](std::int64_t s) {
    return exe.run({{"X", xv}, {"w", Array::zeros(Type{f64, {n}})}, {"step", Array::scalar(i64, double(s))}})[0];
  };
  Array a0 = at_step(0), b0 = at_step(0), a1 = at_step(1);
  double m = 0, v = 0, same = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    EXPECT_EQ(a0.at(i), b0.at(i));
    same += a0.at(i) == a1.at(i);
    m += a0.at(i);
    v += a0.at(i) * a0.at(i);
  }
  EXPECT_EQ(same, 0) << "step 1 must draw fresh noise";
  m /= n;
  const double sd = std::sqrt(v / n - m * m), want = p.noise_multiplier * p.max_grad_norm / 4;
  EXPECT_NEAR(sd, want, 0.03 * want);
  EXPECT_NEAR(m, 0, 4 * want / std::sqrt(double(n)));
  // Another seed: other noise.
  Graph g2;
  Tensor w2 = g2.input("w", f64, {n});
  Tensor X2 = g2.input("X", f64, {4, n});
  Tensor s2 = g2.input("step", i64, {});
  auto other = nn::private_gradients([&](const std::vector<Tensor>& e) { return (w2 * e[0]).sum(); }, {X2}, {w2},
                                     {"w"}, s2, {.noise_multiplier = 1.5, .max_grad_norm = 2.0, .seed = 12});
  Array c0 = compile(g2, {other.grads[0]})
                 .run({{"X", xv}, {"w", Array::zeros(Type{f64, {n}})}, {"step", Array::scalar(i64, 0)}})[0];
  EXPECT_NE(c0.at(0), a0.at(0));
}

TEST(PrivateStep, C99StepEqualsTheInterpreters) {  // same seed, same noise, on a device
  Tiny a, b;
  const nn::Privacy p{.noise_multiplier = 1.1, .max_grad_norm = 0.1, .seed = 5};
  auto interp = private_step(a, p, 0.3);
  auto c99 = private_step(b, p, 0.3, Backend::c99);
  ASSERT_FALSE(c99.executable().source_path().empty()) << "the step must run as compiled C";
  EXPECT_EQ(interp.executable().source_path(), "");
  expect_same(params_after(c99, 3), params_after(interp, 3), 1e-12);
}

TEST(PrivateStep, ExportsAsMallocFreeC99) {  // private training on a board
  Tiny m;
  auto step = private_step(m, {.noise_multiplier = 1.1, .max_grad_norm = 0.1, .seed = 5}, 0.3);
  testing::ScratchDir dir("mg_private_export_");
  const rt::c99::Module mod = rt::c99::export_c(step.executed_graph(), (dir / "c").string(), {.name = "dp_step"});
  EXPECT_GT(mod.arena_bytes, 0u);
  EXPECT_EQ(mod.source.find("malloc"), std::string::npos);
  EXPECT_NE(mod.source.find("mg_splitmix64"), std::string::npos) << "the counter-keyed noise is in the C";
  const std::string cmd = "cc -std=c99 -O1 -c " + (dir / "c" / "dp_step.c").string() + " -o " +
                          (dir / "dp_step.o").string() + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
}

TEST(PrivateStep, TheBatchLossFormRefusesPrivacy) {
  Tiny m;
  Graph g;
  nn::bind(m, g, 3);
  Tensor x = g.input("x", f64, {kB, 5});
  Tensor y = g.input("y", i64, {kB});
  EXPECT_THROW(nn::compile_train(g, nn::cross_entropy(m(x), y), m, nn::SGD{.lr = 0.1}, {.privacy = nn::Privacy{}}),
               UserError);
}

}  // namespace
}  // namespace mg
