// The Butcher tableaus: order conditions of the solution weights (all rooted trees up to
// order 5), of the embedded pair, and of the dense outputs; none satisfies one order more.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <vector>

#include <minigrad/frontier/sutra.hpp>

namespace mg::frontier::sutra {
namespace {

using Vec = std::vector<double>;

Vec times(const Vec& x, const Vec& y) {
  Vec r(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) r[i] = x[i] * y[i];
  return r;
}
Vec mat_a(const Tableau& t, const Vec& x) {  // (A x)_i = sum_j a_ij x_j
  Vec r(x.size(), 0.0);
  for (std::size_t i = 0; i < x.size(); ++i)
    for (std::size_t j = 0; j < t.a[i].size(); ++j) r[i] += t.a[i][j] * x[j];
  return r;
}
double dot(const Vec& w, const Vec& x) {
  double s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s += w[i] * x[i];
  return s;
}

struct Condition {
  int order;
  double want;                              // 1 / (gamma of the tree)
  std::function<Vec(const Tableau&)> phi;   // the tree's stage vector
};

// The 17 rooted trees up to order 5 as (stage vector, 1/gamma); sum_i w_i phi_i = want.
std::vector<Condition> conditions() {
  auto c = [](const Tableau& t) { return t.c; };
  auto one = [](const Tableau& t) { return Vec(t.c.size(), 1.0); };
  auto c2 = [=](const Tableau& t) { return times(t.c, t.c); };
  auto c3 = [=](const Tableau& t) { return times(c2(t), t.c); };
  auto Ac = [=](const Tableau& t) { return mat_a(t, t.c); };
  auto Ac2 = [=](const Tableau& t) { return mat_a(t, c2(t)); };
  auto AAc = [=](const Tableau& t) { return mat_a(t, Ac(t)); };
  return {
      {1, 1.0, one},
      {2, 1.0 / 2, c},
      {3, 1.0 / 3, c2},
      {3, 1.0 / 6, Ac},
      {4, 1.0 / 4, c3},
      {4, 1.0 / 8, [=](const Tableau& t) { return times(t.c, Ac(t)); }},
      {4, 1.0 / 12, Ac2},
      {4, 1.0 / 24, AAc},
      {5, 1.0 / 5, [=](const Tableau& t) { return times(c3(t), t.c); }},
      {5, 1.0 / 10, [=](const Tableau& t) { return times(c2(t), Ac(t)); }},
      {5, 1.0 / 15, [=](const Tableau& t) { return times(t.c, Ac2(t)); }},
      {5, 1.0 / 30, [=](const Tableau& t) { return times(t.c, AAc(t)); }},
      {5, 1.0 / 20, [=](const Tableau& t) { return times(Ac(t), Ac(t)); }},
      {5, 1.0 / 20, [=](const Tableau& t) { return mat_a(t, c3(t)); }},
      {5, 1.0 / 40, [=](const Tableau& t) { return mat_a(t, times(t.c, Ac(t))); }},
      {5, 1.0 / 60, [=](const Tableau& t) { return mat_a(t, Ac2(t)); }},
      {5, 1.0 / 120, [=](const Tableau& t) { return mat_a(t, AAc(t)); }},
  };
}

// The highest order p such that every condition of order <= p holds for weights w.
int order_of(const Tableau& t, const Vec& w, double tol) {
  int ok_up_to = 5;
  for (const Condition& k : conditions())
    if (std::abs(dot(w, k.phi(t)) - k.want) > tol) ok_up_to = std::min(ok_up_to, k.order - 1);
  return ok_up_to;
}

const Method all[] = {Method::euler, Method::midpoint, Method::rk4, Method::dopri5, Method::tsit5};

TEST(Tableau, RowSumsAreTheNodes) {
  for (Method m : all) {
    const Tableau& t = tableau(m);
    for (std::size_t i = 0; i < t.c.size(); ++i) {
      double s = 0;
      for (double a : t.a[i]) s += a;
      EXPECT_NEAR(s, t.c[i], 1e-14) << t.name << " row " << i;
    }
  }
}

// Exactly their order: every condition up to it holds (1e-14; tsit5's published decimals
// to 1e-12), and at least one of the next order fails.
TEST(Tableau, SolutionWeightsHaveExactlyTheMethodsOrder) {
  for (Method m : all) {
    const Tableau& t = tableau(m);
    const double tol = m == Method::tsit5 ? 1e-12 : 1e-14;
    EXPECT_EQ(order_of(t, t.b, tol), t.order) << t.name;
  }
}

TEST(Tableau, EmbeddedPairsAreOrderFour) {
  for (Method m : {Method::dopri5, Method::tsit5}) {
    const Tableau& t = tableau(m);
    Vec bhat(t.b.size());
    for (std::size_t i = 0; i < bhat.size(); ++i) bhat[i] = t.b[i] - t.e[i];
    EXPECT_EQ(order_of(t, bhat, 1e-12), 4) << t.name;
    EXPECT_NEAR(dot(t.e, Vec(t.e.size(), 1.0)), 0.0, 1e-14) << t.name;  // the error weights sum to 0
    // FSAL: the last stage is f(t + h, y_new).
    EXPECT_TRUE(t.fsal);
    for (std::size_t j = 0; j + 1 < t.b.size(); ++j) EXPECT_NEAR(t.a.back()[j], t.b[j], 1e-15) << t.name;
  }
}

// The dense output B_i(theta): B(0) = 0, B(1) = b (continuous at the step's end),
// B'(0) = e_1 (matches f at the start), and the order-4 continuous conditions
// sum_i B_i(theta) phi_i = theta^order(tree) / gamma for every tree up to order 4.
TEST(Tableau, DenseOutputsAreOrderFourAndContinuous) {
  for (Method m : {Method::dopri5, Method::tsit5}) {
    const Tableau& t = tableau(m);
    auto B = [&](double th) {
      Vec r;
      for (const Vec& p : t.interp) {
        double v = 0;
        for (std::size_t q = p.size(); q-- > 0;) v = v * th + p[q];
        r.push_back(v);
      }
      return r;
    };
    const Vec b0 = B(0), b1 = B(1);
    for (std::size_t i = 0; i < t.b.size(); ++i) {
      EXPECT_NEAR(b0[i], 0.0, 1e-15);
      EXPECT_NEAR(b1[i], t.b[i], 1e-9) << t.name << " stage " << i;
      EXPECT_NEAR(t.interp[i][1], i == 0 ? 1.0 : 0.0, 1e-9) << t.name << " stage " << i;
    }
    for (double th : {0.1, 0.37, 0.5, 0.8}) {
      const Vec w = B(th);
      for (const Condition& k : conditions()) {
        if (k.order > 4) continue;
        EXPECT_NEAR(dot(w, k.phi(t)), k.want * std::pow(th, k.order), 1e-9) << t.name << " theta " << th;
      }
    }
  }
}

}  // namespace
}  // namespace mg::frontier::sutra
