// Poisson sampling of batches (DP-SGD's sampling): the draws are the random ops' stream (a
// compiled random_uniform node gives the same uniforms), batches are a pure function of
// (seed, step), each example is included at rate q independently of the others, batch sizes
// follow Binomial(n, q) (mean q n, variance q (1 - q) n), empty batches and padding to a
// capacity work, and the capacity bound is the binomial tail. Statistical checks use 6-sigma
// bounds (a false failure about once in 10^8 runs; the seeds are fixed anyway).
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "io_test_util.hpp"
#include "minigrad/minigrad.hpp"
#include "minigrad/runtime/io/poisson_batches.hpp"

namespace mg::io {
namespace {

using test::user_error_of;

std::uint64_t splitmix64(std::uint64_t x) {  // as the random ops key their streams
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// inputs row i = [i, -i] (f32), targets[i] = i (i64).
PoissonBatchLoader make_loader(std::int64_t n, PoissonOptions opt) {
  Array x(f32, {n, 2});
  Array y(i64, {n});
  for (std::int64_t i = 0; i < n; ++i) {
    x.data<float>()[2 * i] = static_cast<float>(i);
    x.data<float>()[2 * i + 1] = static_cast<float>(-i);
    y.data<std::int64_t>()[i] = i;
  }
  return PoissonBatchLoader(x, y, opt);
}

// The inclusion test is u_i < q for u = the f64 uniforms a compiled random_uniform node with
// seed = seed ^ splitmix64(step) draws: the project's one counter-based generator. n spans
// two 2^16 chunks, so the per-chunk keying is checked too.
TEST(PoissonSampling, DrawsAreTheRandomOpsStream) {
  const std::int64_t n = (1 << 16) + 5000;
  for (std::uint64_t seed : {0ull, 42ull})
    for (std::int64_t step : {0, 1, 977}) {
      Graph g;
      Tensor u = g.rand({n}, seed ^ splitmix64(static_cast<std::uint64_t>(step)), f64);
      const Array draws = compile(g, {u}).run({})[0];
      for (double q : {0.003, 0.25}) {
        std::vector<std::int64_t> expect;
        for (std::int64_t i = 0; i < n; ++i)
          if (draws.data<double>()[i] < q) expect.push_back(i);
        EXPECT_EQ(poisson_sample(n, q, seed, step), expect) << seed << " " << step << " " << q;
      }
    }
}

TEST(PoissonSampling, ReproduciblePerSeedAndStep) {
  const auto a = poisson_sample(5000, 0.1, 7, 3);
  EXPECT_EQ(a, poisson_sample(5000, 0.1, 7, 3));
  EXPECT_NE(a, poisson_sample(5000, 0.1, 7, 4));
  EXPECT_NE(a, poisson_sample(5000, 0.1, 8, 3));
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  // A loader's batch of a step does not depend on which steps were asked before.
  PoissonBatchLoader l = make_loader(5000, {.q = 0.1, .seed = 7});
  const PoissonBatch late = l.batch(3);
  for (std::int64_t s = 0; s < 3; ++s) (void)l.batch(s);
  EXPECT_EQ(l.batch(3).rows, late.rows);
  EXPECT_EQ(late.rows, a);
  // q = 0 and q = 1 are exact.
  EXPECT_TRUE(poisson_sample(100, 0.0, 1, 1).empty());
  EXPECT_EQ(poisson_sample(100, 1.0, 1, 1).size(), 100u);
}

// Every example's inclusion count over K steps is Binomial(K, q); the total over all examples
// is Binomial(n K, q); batch sizes have mean q n and variance q (1 - q) n; inclusion of two
// examples is uncorrelated (their joint rate is q^2).
TEST(PoissonSampling, InclusionRateAndBatchSizeDistribution) {
  const std::int64_t n = 1000, K = 4000;
  const double q = 0.05;
  PoissonBatchLoader l = make_loader(n, {.q = q, .steps_per_epoch = K, .seed = 2024});
  std::vector<std::int64_t> count(n, 0);
  std::int64_t both_0_1 = 0;
  double sum = 0, sum_sq = 0;
  for (const PoissonBatch& b : l.epoch(0)) {
    const std::set<std::int64_t> in(b.rows.begin(), b.rows.end());
    for (std::int64_t r : b.rows) ++count[r];
    both_0_1 += in.count(0) && in.count(1);
    sum += static_cast<double>(b.size);
    sum_sq += static_cast<double>(b.size) * static_cast<double>(b.size);
  }
  const double per_sd = std::sqrt(K * q * (1 - q));
  std::int64_t total = 0;
  for (std::int64_t c : count) {
    EXPECT_LE(std::abs(static_cast<double>(c) - K * q), 6 * per_sd);
    total += c;
  }
  const double nk = static_cast<double>(n * K);
  EXPECT_LE(std::abs(static_cast<double>(total) - nk * q), 6 * std::sqrt(nk * q * (1 - q)));
  const double mean = sum / K, var = (sum_sq - K * mean * mean) / (K - 1);
  const double size_var = n * q * (1 - q);
  EXPECT_LE(std::abs(mean - n * q), 6 * std::sqrt(size_var / K));
  EXPECT_LE(std::abs(var - size_var), 6 * size_var * std::sqrt(2.0 / (K - 1)));  // normal approx. of var's sd
  EXPECT_LE(std::abs(static_cast<double>(both_0_1) - K * q * q), 6 * std::sqrt(K * q * q * (1 - q * q)));
  EXPECT_DOUBLE_EQ(l.expected_batch_size(), 50.0);
}

// Rows, targets and weights of a variable-size batch, empty batches included.
TEST(PoissonSampling, VariableSizeAndEmptyBatches) {
  PoissonBatchLoader l = make_loader(20, {.q = 0.02, .seed = 5});
  EXPECT_EQ(l.steps_per_epoch(), 50);  // round(1 / q), as Opacus
  int empty = 0, nonempty = 0;
  for (const PoissonBatch& b : l.epoch(1)) {
    EXPECT_GE(b.step, 50);
    EXPECT_LT(b.step, 100);
    ASSERT_EQ(b.inputs.shape(), (Shape{b.size, 2}));
    ASSERT_EQ(b.targets.shape(), (Shape{b.size}));
    ASSERT_EQ(b.weights.shape(), (Shape{b.size}));
    EXPECT_EQ(b.weights.dtype(), f32);
    for (std::int64_t i = 0; i < b.size; ++i) {
      EXPECT_EQ(b.targets.data<std::int64_t>()[i], b.rows[i]);
      EXPECT_EQ(b.inputs.data<float>()[2 * i + 1], -static_cast<float>(b.rows[i]));
      EXPECT_EQ(b.weights.data<float>()[i], 1.0f);
    }
    (b.size == 0 ? empty : nonempty)++;
  }
  // P(empty) = 0.98^20 = 0.67: both kinds occur in 50 steps.
  EXPECT_GT(empty, 0);
  EXPECT_GT(nonempty, 0);
}

// Padded to a capacity: one static shape for every step; sampled rows first, then zeros with
// weight 0; more sampled rows than the capacity is an error, never a silent truncation.
TEST(PoissonSampling, PaddedToCapacity) {
  PoissonBatchLoader l = make_loader(200, {.q = 0.1, .capacity = 40, .seed = 9});
  for (std::int64_t s = 0; s < 30; ++s) {
    const PoissonBatch b = l.batch(s);
    ASSERT_EQ(b.inputs.shape(), (Shape{40, 2}));
    ASSERT_EQ(b.weights.shape(), (Shape{40}));
    EXPECT_EQ(b.rows, poisson_sample(200, 0.1, 9, s));
    for (std::int64_t i = 0; i < 40; ++i) {
      const bool real = i < b.size;
      EXPECT_EQ(b.weights.data<float>()[i], real ? 1.0f : 0.0f);
      EXPECT_EQ(b.targets.data<std::int64_t>()[i], real ? b.rows[i] : 0);
      EXPECT_EQ(b.inputs.data<float>()[2 * i], real ? static_cast<float>(b.rows[i]) : 0.0f);
    }
  }
  PoissonBatchLoader tight = make_loader(200, {.q = 0.5, .capacity = 10, .seed = 9});
  const std::string msg = user_error_of([&] { (void)tight.batch(0); });
  EXPECT_NE(msg.find("step 0 sampled"), std::string::npos) << msg;
  EXPECT_NE(msg.find("more than the capacity 10"), std::string::npos) << msg;
}

// P(Binomial(10, 1/2) > 9) = 1/1024, P(> 8) = 11/1024.
TEST(PoissonSampling, CapacityIsTheBinomialTail) {
  EXPECT_EQ(poisson_capacity(10, 0.5, 1e-3), 9);
  EXPECT_EQ(poisson_capacity(10, 0.5, 11.0 / 1024 + 1e-9), 8);
  EXPECT_EQ(poisson_capacity(10, 0.5, 11.0 / 1024 - 1e-9), 9);
  EXPECT_EQ(poisson_capacity(10, 1.0), 10);
  EXPECT_EQ(poisson_capacity(10, 0.0), 0);
  // Fashion-MNIST at an expected 256 per batch; oracle: the exact tail in mpmath (30 digits):
  // P(X > 375) = 1.236e-12, P(X > 376) = 8.33e-13; P(X > 356) = 1.342e-9, P(X > 357) = 9.52e-10.
  EXPECT_EQ(poisson_capacity(60000, 256.0 / 60000), 376);
  EXPECT_EQ(poisson_capacity(60000, 256.0 / 60000, 1e-9), 357);
}

TEST(PoissonSampling, BadArguments) {
  EXPECT_NE(user_error_of([] { (void)poisson_sample(10, 1.5, 0, 0); }).find("q must be in [0, 1], got 1.5"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { (void)make_loader(10, {.q = -0.1}); }).find("q must be in [0, 1]"), std::string::npos);
  EXPECT_NE(user_error_of([] { (void)make_loader(10, {.q = 0.0}); }).find("explicit steps_per_epoch"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { (void)PoissonBatchLoader(Array(f32, {3, 2}), Array(i64, {4}), {}); })
                .find("3 inputs but 4 targets"),
            std::string::npos);
}

}  // namespace
}  // namespace mg::io
