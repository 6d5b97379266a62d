// Batching and shuffling: an epoch's order is a pure function of (seed, epoch), pinned by
// golden values; every sample appears once per epoch; inputs and targets stay paired; the
// shuffle is unbiased; mean/std normalisation matches hand-computed values.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "io_test_util.hpp"
#include "minigrad/runtime/io/batches.hpp"

namespace mg::io {
namespace {

using test::user_error_of;

// inputs row i = [i, 10 i, 100 i] (f32), targets[i] = i (i64).
BatchLoader make_loader(std::int64_t n, BatchOptions opt) {
  Array x(f32, {n, 3});
  Array y(i64, {n});
  for (std::int64_t i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) x.data<float>()[i * 3 + k] = static_cast<float>(i * std::pow(10, k));
    y.data<std::int64_t>()[i] = i;
  }
  return BatchLoader(x, y, opt);
}

bool is_permutation_of_iota(std::vector<std::int64_t> v) {
  std::sort(v.begin(), v.end());
  for (std::size_t i = 0; i < v.size(); ++i)
    if (v[i] != static_cast<std::int64_t>(i)) return false;
  return true;
}

TEST(Shuffle, GoldenPermutationIsPortable) {
  // std::mt19937_64, std::seed_seq, our bounded draw and Fisher–Yates are all fully
  // specified, so these values hold on every platform; a change here breaks reproducibility.
  EXPECT_EQ(epoch_permutation(10, 42, 0), (std::vector<std::int64_t>{6, 8, 1, 9, 0, 2, 5, 7, 3, 4}));
  EXPECT_EQ(epoch_permutation(10, 42, 1), (std::vector<std::int64_t>{6, 0, 4, 3, 5, 1, 7, 2, 9, 8}));
  std::mt19937_64 check;  // [rand.predef]: the 10000th output of a default-constructed engine
  check.discard(9999);
  EXPECT_EQ(check(), 9981545732273789042ull);
  std::mt19937_64 rng(7);
  std::vector<std::uint64_t> draws;
  for (int i = 0; i < 6; ++i) draws.push_back(uniform_below(rng, 1000));
  EXPECT_EQ(draws, (std::vector<std::uint64_t>{754, 949, 117, 891, 141, 55}));
}

TEST(Shuffle, DeterministicPerSeedAndEpochAndDifferentOtherwise) {
  auto a = epoch_permutation(1000, 1, 0);
  EXPECT_TRUE(is_permutation_of_iota(a));
  EXPECT_EQ(a, epoch_permutation(1000, 1, 0));
  EXPECT_NE(a, epoch_permutation(1000, 2, 0));
  EXPECT_NE(a, epoch_permutation(1000, 1, 1));
  EXPECT_NE(a, epoch_permutation(1000, std::uint64_t{1} << 32 | 1, 0));  // high seed bits count
  EXPECT_TRUE(epoch_permutation(0, 1, 0).empty());
  EXPECT_EQ(epoch_permutation(1, 1, 0), std::vector<std::int64_t>{0});
}

TEST(Shuffle, FisherYatesIsUnbiased) {
  // All 6 orders of 3 elements, 60000 shuffles: each count within 5 sigma of 10000.
  std::mt19937_64 rng(99);
  std::map<std::vector<std::int64_t>, int> counts;
  for (int t = 0; t < 60000; ++t) {
    std::vector<std::int64_t> v{0, 1, 2};
    fisher_yates(v, rng);
    ++counts[v];
  }
  ASSERT_EQ(counts.size(), 6u);
  const double sigma = std::sqrt(60000 * (1.0 / 6) * (5.0 / 6));
  for (const auto& [order, c] : counts) EXPECT_LT(std::abs(c - 10000), 5 * sigma);
  // uniform_below covers its whole range, including a bound that is not a power of two.
  std::set<std::uint64_t> seen;
  for (int t = 0; t < 1000; ++t) seen.insert(uniform_below(rng, 7));
  EXPECT_EQ(seen.size(), 7u);
  EXPECT_EQ(uniform_below(rng, 1), 0u);
}

TEST(BatchLoader, CoversEverySampleOncePerEpochWithPairsIntact) {
  BatchLoader loader = make_loader(10, {.batch_size = 3, .shuffle = true, .drop_last = false, .seed = 5});
  EXPECT_EQ(loader.num_batches(), 4);
  std::vector<std::vector<std::int64_t>> epochs;
  for (std::int64_t e = 0; e < 3; ++e) {
    std::vector<std::int64_t> seen;
    std::vector<std::int64_t> sizes;
    std::int64_t expect_index = 0;
    for (const Batch& b : loader.epoch(e)) {
      EXPECT_EQ(b.index, expect_index++);
      sizes.push_back(b.targets.shape()[0]);
      EXPECT_EQ(b.inputs.shape(), (Shape{b.targets.shape()[0], 3}));
      for (std::int64_t r = 0; r < b.targets.shape()[0]; ++r) {
        std::int64_t id = b.targets.data<std::int64_t>()[r];
        seen.push_back(id);
        EXPECT_EQ(b.inputs.data<float>()[r * 3 + 2], static_cast<float>(100 * id));  // paired
      }
    }
    EXPECT_EQ(sizes, (std::vector<std::int64_t>{3, 3, 3, 1}));
    EXPECT_TRUE(is_permutation_of_iota(seen));
    EXPECT_EQ(seen, loader.order(e));
    epochs.push_back(seen);
  }
  EXPECT_NE(epochs[0], epochs[1]);  // reshuffled each epoch
  // Same seed, fresh loader: identical order; different seed: different order.
  BatchLoader again = make_loader(10, {.batch_size = 3, .shuffle = true, .drop_last = false, .seed = 5});
  EXPECT_EQ(again.order(1), epochs[1]);
  BatchLoader other = make_loader(10, {.batch_size = 3, .shuffle = true, .drop_last = false, .seed = 6});
  EXPECT_NE(other.order(1), epochs[1]);
}

TEST(BatchLoader, DropLastAndNoShuffle) {
  BatchLoader loader = make_loader(10, {.batch_size = 4, .shuffle = false, .drop_last = true, .seed = 0});
  EXPECT_EQ(loader.num_batches(), 2);
  auto epoch = loader.epoch(3);
  EXPECT_EQ(std::distance(epoch.begin(), epoch.end()), 2);
  Batch b = epoch.batch(1);
  EXPECT_EQ(b.targets.to_doubles(), (std::vector<double>{4, 5, 6, 7}));
  EXPECT_EQ(make_loader(8, {.batch_size = 4, .shuffle = true, .drop_last = true, .seed = 0}).num_batches(), 2);
  EXPECT_EQ(make_loader(3, {.batch_size = 4, .shuffle = true, .drop_last = true, .seed = 0}).num_batches(), 0);
  EXPECT_EQ(make_loader(0, {.batch_size = 4, .shuffle = true, .drop_last = false, .seed = 0}).num_batches(), 0);
}

TEST(BatchLoader, RejectsBadArguments) {
  EXPECT_NE(user_error_of([] { BatchLoader(Array(f32, {4, 2}), Array(i64, {3}), {}); }).find("4 inputs but 3"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { BatchLoader(Array(f32, {4}), Array::scalar(i64, 0), {}); }).find("sample axis"),
            std::string::npos);
  EXPECT_NE(user_error_of([] { BatchLoader(Array(f32, {4}), Array(i64, {4}), {.batch_size = 0}); })
                .find("batch_size"), std::string::npos);
}

TEST(Normalizer, GlobalAndPerFeature) {
  // Rows [1, 10], [3, 10], [5, 10]: feature 0 mean 3, population std sqrt(8/3); feature 1
  // is constant (std 0 -> stored as 1). Global: mean 6.5, std sqrt(mean of squared devs).
  Array x = Array::from<double>({3, 2}, {1, 10, 3, 10, 5, 10});
  Normalizer per = fit_normalizer(x, NormalizeOver::per_feature);
  EXPECT_EQ(per.mean.shape(), (Shape{2}));
  EXPECT_DOUBLE_EQ(per.mean.at(0), 3.0);
  EXPECT_DOUBLE_EQ(per.stddev.at(0), std::sqrt(8.0 / 3.0));
  EXPECT_DOUBLE_EQ(per.mean.at(1), 10.0);
  EXPECT_DOUBLE_EQ(per.stddev.at(1), 1.0);
  Array y = per.apply(x);
  EXPECT_DOUBLE_EQ(y.at(0), -2.0 / std::sqrt(8.0 / 3.0));
  EXPECT_DOUBLE_EQ(y.at(1), 0.0);
  EXPECT_DOUBLE_EQ(y.at(4), 2.0 / std::sqrt(8.0 / 3.0));

  Normalizer global = fit_normalizer(x);
  EXPECT_EQ(global.mean.shape(), Shape{});
  EXPECT_DOUBLE_EQ(global.mean.at(0), 6.5);
  double var = 0;
  for (double v : {1., 10., 3., 10., 5., 10.}) var += (v - 6.5) * (v - 6.5);
  EXPECT_DOUBLE_EQ(global.stddev.at(0), std::sqrt(var / 6));
  // Applied in f32 to another split; the result of the training set has mean 0, std 1.
  Array xf = x.cast(f32);
  Array z = global.apply(xf);
  EXPECT_EQ(z.dtype(), f32);
  double m = 0, s = 0;
  for (float v : z.span<float>()) m += v;
  for (float v : z.span<float>()) s += (v - m / 6) * (v - m / 6);
  EXPECT_NEAR(m / 6, 0.0, 1e-6);
  EXPECT_NEAR(std::sqrt(s / 6), 1.0, 1e-6);

  EXPECT_NE(user_error_of([&] { per.apply(Array(f32, {2, 3})); }).find("expects f32/f64 [N,2]"),
            std::string::npos);
  EXPECT_NE(user_error_of([&] { fit_normalizer(Array(i64, {2, 2})); }).find("f32/f64"), std::string::npos);
}

TEST(Normalizer, GlobalStatisticsOfManyValues) {
  // 1037 x 3 values (not a multiple of the 16 summing lanes): mean and std against a
  // long double reference.
  const std::int64_t n = 1037 * 3;
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<float>((i * 7919) % 255) / 255.0f;
  Array x(f32, {1037, 3});
  std::copy(v.begin(), v.end(), x.data<float>());
  long double sum = 0, sq = 0;
  for (float e : v) sum += e;
  const long double mean = sum / n;
  for (float e : v) sq += (e - mean) * (e - mean);
  Normalizer g = fit_normalizer(x);
  EXPECT_NEAR(g.mean.at(0), static_cast<double>(mean), 1e-15);
  EXPECT_NEAR(g.stddev.at(0), static_cast<double>(std::sqrt(sq / n)), 1e-15);
}

TEST(Normalizer, InPlaceWhenTheStorageIsNotShared) {
  Array x = Array::from<float>({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  Normalizer per = fit_normalizer(x, NormalizeOver::per_feature);
  Array copy = per.apply(x);  // x is untouched
  EXPECT_EQ(x.at(3), 3.0);
  Array shared = x;  // a second handle: apply(std::move) must not write through it
  Array moved = per.apply(std::move(x));
  EXPECT_EQ(shared.at(3), 3.0);
  EXPECT_NE(moved.raw(), shared.raw());
  Array sole = Array::from<float>({4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  const void* storage = sole.raw();
  Array in_place = per.apply(std::move(sole));  // the only handle: no new buffer
  EXPECT_EQ(in_place.raw(), storage);
  for (std::int64_t i = 0; i < 8; ++i) {
    EXPECT_EQ(moved.at(i), copy.at(i));
    EXPECT_EQ(in_place.at(i), copy.at(i));
  }
}

}  // namespace
}  // namespace mg::io
