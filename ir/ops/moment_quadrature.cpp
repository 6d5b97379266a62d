// Gauss-Hermite nodes by Newton's method on the orthonormal Hermite recurrence, with the
// usual asymptotic first guesses (Numerical Recipes, 3rd ed., section 4.6, `gauher`).
#include "minigrad/ir/ops/moment_quadrature.hpp"

#include <cmath>
#include <map>
#include <mutex>
#include <numbers>

#include "minigrad/ir/errors.hpp"

namespace mg::ir {

namespace {
GaussHermite compute(int n) {
  GaussHermite gh;
  gh.nodes.assign(n, 0.0);
  gh.weights.assign(n, 0.0);
  const double pim4 = 1.0 / std::pow(std::numbers::pi, 0.25);
  double z = 0;
  for (int i = 0; i < (n + 1) / 2; ++i) {
    if (i == 0) z = std::sqrt(2.0 * n + 1) - 1.85575 * std::pow(2.0 * n + 1, -0.16667);
    else if (i == 1) z -= 1.14 * std::pow(n, 0.426) / z;
    else if (i == 2) z = 1.86 * z - 0.86 * gh.nodes[0];
    else if (i == 3) z = 1.91 * z - 0.91 * gh.nodes[1];
    else z = 2.0 * z - gh.nodes[i - 2];
    double pp = 0;
    for (int it = 0; it < 100; ++it) {
      double p1 = pim4, p2 = 0;
      for (int j = 0; j < n; ++j) {
        const double p3 = p2;
        p2 = p1;
        p1 = z * std::sqrt(2.0 / (j + 1)) * p2 - std::sqrt(static_cast<double>(j) / (j + 1)) * p3;
      }
      pp = std::sqrt(2.0 * n) * p2;
      const double z1 = z;
      z = z1 - p1 / pp;
      if (std::abs(z - z1) <= 1e-15 * std::max(1.0, std::abs(z))) break;
    }
    gh.nodes[i] = z;
    gh.nodes[n - 1 - i] = -z;
    gh.weights[i] = gh.weights[n - 1 - i] = 2.0 / (pp * pp);
  }
  return gh;
}
}  // namespace

const GaussHermite& gauss_hermite(int n) {
  MG_ASSERT(n >= 1 && n <= 64, "gauss_hermite: 1..64 points");
  static std::mutex mu;
  static std::map<int, GaussHermite> cache;  // node-stable: references stay valid
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(n);
  if (it == cache.end()) it = cache.emplace(n, compute(n)).first;
  return it->second;
}

}  // namespace mg::ir
