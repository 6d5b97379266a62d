// Small helpers shared by the test suites: building f64 arrays and comparing values.
#pragma once
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "minigrad/ir/array.hpp"

namespace mg::testing {

inline Array vec(Shape s, std::vector<double> v) { return Array::from_vector(std::move(s), v); }

// Standard-normal values of type `t`, deterministic from `seed`.
inline Array randn(const Type& t, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  Array a(t);
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, n(rng));
  return a;
}

inline void expect_values(const Array& a, const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_EQ(a.numel(), static_cast<std::int64_t>(want.size())) << to_string(a.type());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(a.at(static_cast<std::int64_t>(i)), want[i], tol) << i;
}

}  // namespace mg::testing
