// Monte Carlo oracles for the moment rules: Gaussian samples from a fixed seed, per-column
// sample mean and variance with their standard errors (the variance's from the sample's
// fourth central moment), and the "within 5 standard errors" check.
#pragma once
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <minigrad/ir/array.hpp>

namespace mg::testing::pramana {

inline constexpr std::int64_t kSamples = 200000;  // >= 1e5 (the floor)

// [n, d] samples, column j ~ N(mean[j], var[j]).
inline Array gaussian_samples(std::int64_t n, const std::vector<double>& mean, const std::vector<double>& var,
                              std::uint64_t seed) {
  const std::int64_t d = static_cast<std::int64_t>(mean.size());
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  Array a(Type{DType::f64, {n, d}});  // written in place: a copy of 1.6e6 doubles was page faults
  double* v = a.data<double>();
  for (std::int64_t i = 0; i < n; ++i)
    for (std::int64_t j = 0; j < d; ++j) v[i * d + j] = mean[j] + std::sqrt(var[j]) * z(rng);
  return a;
}

struct ColumnStats {
  std::vector<double> mean, var, se_mean, se_var;
};
// Statistics of each column of an [n, d] (or [n, 1, d]) f64 array.
inline ColumnStats column_stats(const Array& a) {
  const std::int64_t n = a.type().shape[0], d = a.numel() / n;
  const auto x = a.span<double>();
  ColumnStats s;
  for (std::int64_t j = 0; j < d; ++j) {
    double m = 0;
    for (std::int64_t i = 0; i < n; ++i) m += x[i * d + j];
    m /= static_cast<double>(n);
    double m2 = 0, m4 = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const double e = x[i * d + j] - m;
      m2 += e * e;
      m4 += e * e * e * e;
    }
    const double var = m2 / static_cast<double>(n - 1);
    m4 /= static_cast<double>(n);
    s.mean.push_back(m);
    s.var.push_back(var);
    s.se_mean.push_back(std::sqrt(var / static_cast<double>(n)));
    s.se_var.push_back(std::sqrt(std::max(m4 - var * var, 0.0) / static_cast<double>(n)));
  }
  return s;
}

// "" when every element's mean and variance lie within 5 standard errors of Monte Carlo
// (plus 1e-12 for exactly deterministic columns); else what disagreed.
inline std::string within_5se(const Array& mean, const Array& var, const ColumnStats& mc, const std::string& what) {
  std::string bad;
  const auto m = mean.span<double>(), v = var.span<double>();
  for (std::size_t j = 0; j < mc.mean.size(); ++j) {
    const double zm = std::abs(m[j] - mc.mean[j]), zv = std::abs(v[j] - mc.var[j]);
    if (zm > 5 * mc.se_mean[j] + 1e-12 || zv > 5 * mc.se_var[j] + 1e-12) {
      char line[256];
      std::snprintf(line, sizeof line, " element %zu: mean %.10g vs MC %.10g (se %.3g), var %.10g vs MC %.10g (se %.3g)\n",
                    j, m[j], mc.mean[j], mc.se_mean[j], v[j], mc.var[j], mc.se_var[j]);
      bad += what + line;
    }
  }
  return bad;
}

}  // namespace mg::testing::pramana
