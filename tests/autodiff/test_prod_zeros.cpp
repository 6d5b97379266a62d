// reduce_prod's derivatives where inputs are zero (PyTorch parity): the gradient is the
// product of the other elements and the Hessian H_ik = prod_{j != i, k} x_j, both finite
// and exact with one, two and three zeros (the old rule g * out / x gave NaN there).
#include <gtest/gtest.h>

#include <cmath>

#include <minigrad/minigrad.hpp>

namespace mg {
namespace {

double prod_except(const std::vector<double>& x, std::size_t i, std::size_t k = SIZE_MAX) {
  double p = 1;
  for (std::size_t j = 0; j < x.size(); ++j)
    if (j != i && j != k) p *= x[j];
  return p;
}

void check(const std::vector<double>& xv) {
  const auto n = static_cast<std::int64_t>(xv.size());
  Graph g;
  Tensor x = g.input("x", f64, {n});
  Tensor y = x.prod();
  auto [dx] = grad(y, {x});
  Tensor h = hessian(y, x);
  auto out = compile(g, {dx, h}).run({{"x", Array::from_vector({n}, xv)}});
  for (std::size_t i = 0; i < xv.size(); ++i) {
    EXPECT_EQ(out[0].at(static_cast<std::int64_t>(i)), prod_except(xv, i)) << "d/dx" << i;
    for (std::size_t k = 0; k < xv.size(); ++k) {
      const double want = i == k ? 0.0 : prod_except(xv, i, k);
      const double got = out[1].at(static_cast<std::int64_t>(i * xv.size() + k));
      EXPECT_TRUE(std::isfinite(got));
      EXPECT_EQ(got, want) << "H[" << i << "," << k << "] at x = " << to_string(Array::from_vector({n}, xv));
    }
  }
}

TEST(ProdAtZeros, GradientAndHessianAreTheProductsOfTheOthers) {
  check({0, 2, 3, -1.5});    // one zero
  check({0, 2, 0, -1.5});    // two zeros: H between them is the rest's product
  check({0, 0, 0, 4});       // three zeros: everything vanishes
  check({1.5, 2, -3, 0.5});  // none: as before
}

TEST(ProdAtZeros, PartialReductionPerRow) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 3});
  Tensor y = (x.prod(1) * x.prod(1)).sum();  // rows reduced separately
  auto [dx] = grad(y, {x});
  auto out = compile(g, {dx}).run({{"x", Array::from<double>({2, 3}, {0, 2, 3, 1, 2, 4})}});
  // Row 0 has product 0, so d(p^2)/dx = 2 p dp/dx = 0; row 1: 2 * 8 * (8 / x).
  const std::vector<double> want{0, 0, 0, 2 * 8 * 8, 2 * 8 * 4, 2 * 8 * 2};
  EXPECT_EQ(out[0].to_doubles(), want);
}

}  // namespace
}  // namespace mg
