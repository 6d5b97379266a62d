// Small helpers shared by the test suites: building f64 arrays and comparing values.
#pragma once
#include <gtest/gtest.h>

#include <vector>

#include "minigrad/ir/array.hpp"

namespace mg::testing {

inline Array vec(Shape s, std::vector<double> v) { return Array::from_vector(std::move(s), v); }

inline void expect_values(const Array& a, const std::vector<double>& want, double tol = 1e-12) {
  ASSERT_EQ(a.numel(), static_cast<std::int64_t>(want.size())) << to_string(a.type());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(a.at(static_cast<std::int64_t>(i)), want[i], tol) << i;
}

}  // namespace mg::testing
