// Encoders (rate: Bernoulli statistics; latency: firing times), the rate decoder, and the
// spike-count losses against snnTorch's definitions computed step by step.
#include <gtest/gtest.h>

#include <cmath>

#include <minigrad/frontier/spanda.hpp>
#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "tests/values.hpp"

namespace mg::frontier::spanda {
namespace {

TEST(SpandaEncode, RateFiresWithTheInputsProbability) {
  const std::vector<double> p = {0.0, 0.1, 0.5, 0.93, 1.0, 1.7, -0.2};
  const std::int64_t T = 20000, n = static_cast<std::int64_t>(p.size());
  Array s = rate_encode(testing::vec({n}, p), T, 42);
  ASSERT_EQ(s.shape(), (Shape{T, n}));
  for (std::int64_t i = 0; i < n; ++i) {
    double fired = 0;
    for (std::int64_t t = 0; t < T; ++t) fired += s.at(t * n + i);
    const double q = std::clamp(p[i], 0.0, 1.0), rate = fired / static_cast<double>(T);
    const double se = std::sqrt(q * (1 - q) / static_cast<double>(T));
    if (se == 0) EXPECT_EQ(rate, q) << "p = " << p[i];
    else EXPECT_NEAR(rate, q, 5 * se) << "p = " << p[i];
  }
  // Reproducible by seed, different across seeds.
  Array again = rate_encode(testing::vec({n}, p), T, 42), other = rate_encode(testing::vec({n}, p), T, 43);
  EXPECT_EQ(again.to_doubles(), s.to_doubles());
  EXPECT_NE(other.to_doubles(), s.to_doubles());
}

TEST(SpandaEncode, LatencyFiresOnceBrighterEarlier) {
  // Linear, normalized over T = 11: t = 10 (1 - x).
  Array s = latency_encode(testing::vec({3}, {1.0, 0.5, 0.0}), 11, {.linear = true, .normalize = true});
  std::vector<double> want(33, 0.0);
  want[0 * 3 + 0] = 1;
  want[5 * 3 + 1] = 1;
  want[10 * 3 + 2] = 1;
  testing::expect_values(s, want);
  // Log code, tau 5: t = 5 ln(x / (x - 0.01)); x = 0.011 -> 11.99 capped at T - 1 = 9;
  // x = 0.02 -> 3.47 -> 3; at or below the threshold: no spike.
  Array l = latency_encode(testing::vec({3}, {0.011, 0.02, 0.005}), 10, {.tau = 5});
  std::vector<double> want_l(30, 0.0);
  want_l[9 * 3 + 0] = 1;
  want_l[3 * 3 + 1] = 1;
  testing::expect_values(l, want_l);
}

TEST(SpandaDecode, RateIsTheMeanOverTime) {
  Graph g;
  Tensor s = g.input("s", f64, {4, 2});
  auto r = compile(g, {rate_decode(s)}).run({{"s", testing::vec({4, 2}, {1, 0, 1, 1, 0, 1, 1, 1})}});
  testing::expect_values(r[0], {0.75, 0.75});
}

const std::vector<double> kSpikes = {1, 0, 0, 1, 1, 0,   // t = 0, two samples of three classes
                                     0, 1, 1, 1, 0, 0,   // t = 1
                                     1, 1, 0, 0, 0, 1};  // t = 2

TEST(SpandaLoss, CeRateLossIsTheMeanOverStepsOfTheStepsCrossEntropy) {
  Graph g;
  Tensor s = g.input("s", f64, {3, 2, 3});
  Tensor y = g.input("y", i64, {2});
  Tensor loss = ce_rate_loss(s, y);
  auto r = compile(g, {loss}).run({{"s", testing::vec({3, 2, 3}, kSpikes)}, {"y", Array::from_vector<std::int64_t>({2}, {0, 2})}});
  // By hand: per step and sample, log(sum exp) - logit[target]; mean over samples, then steps.
  const std::int64_t target[2] = {0, 2};
  double want = 0;
  for (int t = 0; t < 3; ++t)
    for (int b = 0; b < 2; ++b) {
      double z = 0;
      for (int c = 0; c < 3; ++c) z += std::exp(kSpikes[t * 6 + b * 3 + c]);
      want += (std::log(z) - kSpikes[t * 6 + b * 3 + target[b]]) / 2 / 3;
    }
  EXPECT_NEAR(r[0].item(), want, 1e-14);
}

TEST(SpandaLoss, MseCountLossMatchesSnntorch) {
  Graph g;
  Tensor s = g.input("s", f64, {3, 2, 3});
  Tensor y = g.input("y", i64, {2});
  Tensor loss = mse_count_loss(s, y, 0.8, 0.1);
  auto r = compile(g, {loss}).run({{"s", testing::vec({3, 2, 3}, kSpikes)}, {"y", Array::from_vector<std::int64_t>({2}, {0, 2})}});
  // counts: sample 0 = (2, 2, 1), sample 1 = (2, 1, 1); targets int(3 * 0.8) = 2 on,
  // int(3 * 0.1) = 0 off: (2, 0, 0) and (0, 0, 2); MSE over 6 entries, divided by T = 3.
  const double sq = 0 + 4 + 1 + 4 + 1 + 1;
  EXPECT_NEAR(r[0].item(), sq / 6 / 3, 1e-14);
}

TEST(SpandaLoss, WrongShapesNameTheUsersLine) {
  Graph g;
  Tensor s = g.input("s", f64, {3, 2, 3});
  Tensor y = g.input("y", i64, {3});
  const int line = __LINE__ + 2;
  try {
    ce_rate_loss(s, y);
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line));
    EXPECT_NE(std::string(e.what()).find("[T, B, C]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mg::frontier::spanda
