// LTNtorch's definitions (ltn/fuzzy_ops.py, eps = 1e-4) written out in plain double
// arithmetic: the oracle the tarka tests compare values and gradients against.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

namespace ltn_ref {

constexpr double eps = 1e-4;
inline double pi_0(double x) { return (1 - eps) * x + eps; }
inline double pi_1(double x) { return (1 - eps) * x; }

inline double not_standard(double x) { return 1 - x; }
inline double and_min(double x, double y) { return std::min(x, y); }
inline double and_prod(double x, double y) { return pi_0(x) * pi_0(y); }
inline double and_prod_unstable(double x, double y) { return x * y; }
inline double and_luk(double x, double y) { return std::max(x + y - 1, 0.0); }
inline double or_max(double x, double y) { return std::max(x, y); }
inline double or_prob_sum(double x, double y) {
  double a = pi_1(x), b = pi_1(y);
  return a + b - a * b;
}
inline double or_luk(double x, double y) { return std::min(x + y, 1.0); }
inline double implies_kleene_dienes(double x, double y) { return std::max(1 - x, y); }
inline double implies_godel(double x, double y) { return x <= y ? 1 : y; }
inline double implies_reichenbach(double x, double y) {
  double a = pi_0(x), b = pi_1(y);
  return 1 - a + a * b;
}
inline double implies_goguen(double x, double y) {
  double a = pi_0(x);
  return a <= y ? 1 : y / a;
}
inline double implies_luk(double x, double y) { return std::min(1 - x + y, 1.0); }

// Aggregators over all elements.
inline double pmean(const std::vector<double>& xs, double p) {
  double s = 0;
  for (double x : xs) s += std::pow(pi_0(x), p);
  return std::pow(s / xs.size(), 1 / p);
}
inline double pmean_error(const std::vector<double>& xs, double p) {
  double s = 0;
  for (double x : xs) s += std::pow(1 - pi_1(x), p);
  return 1 - std::pow(s / xs.size(), 1 / p);
}
inline double softmin(const std::vector<double>& xs, double t) {
  double s = 0;
  for (double x : xs) s += std::exp(-x / t);
  return -t * std::log(s / xs.size());
}

}  // namespace ltn_ref
