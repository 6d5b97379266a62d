// Rematerialisation (issue 14): scan's checkpoint_every saves every k-th carry and
// recomputes the rest (gradients unchanged; planned backward peak ~sqrt(T) instead of
// linear, printed as a table); checkpoint(fn) recomputes any subgraph in the backward.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>

#include <minigrad/minigrad.hpp>

#include "tests/loops/rnn_fixture.hpp"
#include "tests/ops/gradcheck.hpp"

namespace mg {
namespace {

// Hidden width 8, weights in [-0.4, 0.4].
struct Rnn : testing::Rnn {
  explicit Rnn(std::int64_t T) : testing::Rnn(T, 8, 0.4) {}
};

void expect_same(const std::vector<Array>& a, const std::vector<Array>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k)
    for (std::int64_t i = 0; i < a[k].numel(); ++i)
      ASSERT_NEAR(a[k].at(i), b[k].at(i), 1e-12 * (1 + std::abs(a[k].at(i)))) << "output " << k << " element " << i;
}

// For gradients summed in another association (per checkpointed block, then across
// blocks; or another GEMM's order): 1e-12 relative to the array's largest element, since a
// small element of a sum of large terms carries their rounding.
void expect_close(const std::vector<Array>& a, const std::vector<Array>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k) {
    double scale = 0;
    for (std::int64_t i = 0; i < a[k].numel(); ++i) scale = std::max(scale, std::abs(a[k].at(i)));
    for (std::int64_t i = 0; i < a[k].numel(); ++i)
      ASSERT_NEAR(a[k].at(i), b[k].at(i), 1e-12 * (1 + scale)) << "output " << k << " element " << i;
  }
}

TEST(Remat, CheckpointedScanGradientsEqualThePlainOnes) {
  for (bool reverse : {false, true}) {
    Rnn m(100);
    std::vector<Tensor> wrt{m.h0, m.xs, m.W, m.U, m.b};
    auto plain = grad(m.loss({.reverse = reverse}), wrt);
    auto remat = grad(m.loss({.reverse = reverse, .checkpoint_every = 10}), wrt);
    auto a = compile(m.g, plain).run(m.feeds());
    auto b = compile(m.g, remat).run(m.feeds());
    expect_same(a, b);
    auto c = compile(m.g, remat, Backend::c99).run(m.feeds());
    expect_same(a, c);
  }
}

TEST(Remat, CheckpointedScanIsTwiceDifferentiable) {
  Rnn m(6);
  Tensor loss = m.loss({.checkpoint_every = 2});
  std::vector<ir::Value> inputs;
  std::vector<Array> values;
  for (const Feed& f : m.feeds()) {
    inputs.push_back(m.g.ir().input(f.name));
    values.push_back(f.value);
  }
  auto r = testing::check_gradients(loss.value(), inputs, values, 2, 1e-6, 13);
  EXPECT_TRUE(r.ok) << r.report;
}

// The planned peak bytes of the training graph (forward + backward, gradients for the
// parameters): linear in T when every carry is saved, ~sqrt(T) with checkpoint_every =
// sqrt(T). Printed as a table.
TEST(Remat, BackwardPeakBytesGrowLinearlyWithoutAndLikeSqrtTWithCheckpoints) {
  std::printf("%8s %6s %22s %22s\n", "T", "k", "peak bytes (save all)", "peak bytes (every k)");
  std::vector<double> plain, remat;
  const std::vector<std::int64_t> Ts{16, 64, 256, 1024};
  for (std::int64_t T : Ts) {
    const auto k = static_cast<std::int64_t>(std::lround(std::sqrt(static_cast<double>(T))));
    std::size_t peak[2];
    for (int with = 0; with < 2; ++with) {
      Rnn m(T);
      auto d = grad(m.final_loss({.checkpoint_every = with ? k : 0}), std::vector<Tensor>{m.W, m.U, m.b});
      peak[with] = compile(m.g, d).peak_bytes();
    }
    std::printf("%8lld %6lld %22zu %22zu\n", static_cast<long long>(T), static_cast<long long>(k), peak[0], peak[1]);
    plain.push_back(static_cast<double>(peak[0]));
    remat.push_back(static_cast<double>(peak[1]));
  }
  // 64x the steps: ~64x the bytes saving every carry, ~8x with sqrt(T) checkpoints.
  EXPECT_GT(plain.back() / plain.front(), 40);
  EXPECT_LT(remat.back() / remat.front(), 12);
  EXPECT_LT(remat.back() * 10, plain.back());
}

// A chain of blocks, each checkpointed: the backward recomputes a block's intermediates
// instead of keeping every block's. Same gradients, smaller planned peak.
TEST(Remat, CheckpointRecomputesASubgraphInTheBackward) {
  Graph g;
  Tensor x = g.input("x", f64, {16, 32});
  Tensor w = g.input("w", f64, {32, 32});
  auto block = [&](const Tensor& h) {
    Tensor a = h;
    for (int l = 0; l < 4; ++l) a = tanh(matmul(a, w) * 0.5 + a);
    return a;
  };
  Tensor h1 = x, h2 = x;
  for (int b = 0; b < 8; ++b) {
    h1 = block(h1);
    h2 = checkpoint(block, h2);
  }
  auto d1 = grad((h1 * h1).sum(), std::vector<Tensor>{x, w});
  auto d2 = grad((h2 * h2).sum(), std::vector<Tensor>{x, w});
  const std::vector<Feed> f{{"x", testing::sample(x.type(), ir::Domain::any, 1)},
                            {"w", testing::sample(w.type(), ir::Domain::unit, 2)}};
  auto e1 = compile(g, d1), e2 = compile(g, d2);
  expect_close(e1.run(f), e2.run(f));
  expect_close(e1.run(f), compile(g, d2, Backend::c99).run(f));
  std::printf("8 blocks of 4 layers: planned peak %zu bytes plain, %zu checkpointed\n", e1.peak_bytes(), e2.peak_bytes());
  EXPECT_LT(e2.peak_bytes() * 2, e1.peak_bytes());
}

TEST(Remat, CheckpointIsTwiceDifferentiable) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Tensor w = g.input("w", f64, {3});
  Tensor y = checkpoint([&](const Tensor& v) { return sin(v * w) * v; }, x);
  std::vector<ir::Value> inputs{x.value(), w.value()};
  std::vector<Array> values{testing::sample(x.type(), ir::Domain::any, 3), testing::sample(w.type(), ir::Domain::any, 4)};
  auto r = testing::check_gradients(y.sum().value(), inputs, values, 2, 1e-6, 17);
  EXPECT_TRUE(r.ok) << r.report;
}

}  // namespace
}  // namespace mg
