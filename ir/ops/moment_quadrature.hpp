// Gauss-Hermite quadrature nodes and weights (physicists' weight e^(-t^2)), for the
// moments column's rule for smooth activations: E[f(X)], X ~ N(mu, var), is
// sum_i w_i f(mu + sqrt(2 var) t_i) / sqrt(pi). Computed once per point count and cached.
#pragma once
#include <vector>

namespace mg::ir {

struct GaussHermite {
  std::vector<double> nodes, weights;  // sum(weights) = sqrt(pi)
};
// n in [1, 64]; thread-safe.
const GaussHermite& gauss_hermite(int n);

}  // namespace mg::ir
