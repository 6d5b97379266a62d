// odeint against exact arithmetic: one dopri5 step on y' = y, linear systems against
// exp(A t) (adaptive methods to their tolerance, fixed-step ones at their convergence
// order), dense output, NFE, the interpreter against C99, and clear errors.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include <minigrad/frontier/sutra.hpp>
#include <minigrad/minigrad.hpp>

#include "minigrad/frontier/sutra/rk.hpp"

namespace mg::frontier::sutra {
namespace {

using M2 = std::array<double, 4>;  // row-major 2x2

M2 mul(const M2& a, const M2& b) {
  return {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3], a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
}
// exp(A t) by scaling and squaring a 30-term Taylor series.
M2 expm(const M2& A, double t) {
  const int s = 10;
  const double scale = t / (1 << s);
  M2 X{A[0] * scale, A[1] * scale, A[2] * scale, A[3] * scale}, term{1, 0, 0, 1}, sum{1, 0, 0, 1};
  for (int k = 1; k < 30; ++k) {
    term = mul(term, X);
    for (double& v : term) v /= k;
    for (int i = 0; i < 4; ++i) sum[i] += term[i];
  }
  for (int i = 0; i < s; ++i) sum = mul(sum, sum);
  return sum;
}

Array arr(Shape s, std::vector<double> v) { return Array::from_vector(std::move(s), v); }

// One dopri5 step on y' = y from y = 1 (t = 0) with h = 0.1: the stages are
// k_i = 1 + h sum_j a_ij k_j, y1 = 1 + h sum b_i k_i, err = h sum e_i k_i, in doubles.
TEST(Odeint, OneDopri5StepOnExpIsTheMethodsArithmetic) {
  const Tableau& tab = tableau(Method::dopri5);
  const double h = 0.1;
  std::vector<double> k;
  for (int i = 0; i < tab.stages(); ++i) {
    double acc = 0;
    for (std::size_t j = 0; j < tab.a[i].size(); ++j) acc += tab.a[i][j] * k[j];
    k.push_back(1 + h * acc);
  }
  double y1 = 0, err = 0, mass = 0;  // summed as the solver does: y + h * (sum of w_i k_i)
  for (int i = 0; i < tab.stages(); ++i) y1 += tab.b[i] * k[i], err += tab.e[i] * k[i], mass += std::abs(tab.e[i] * k[i]);
  y1 = 1 + h * y1, err = h * err;
  // The error estimate cancels (terms ~1e-4, sum ~1e-8): any summation order is within
  // n u sum|terms| of another.
  const double err_bound = h * tab.stages() * 0x1p-52 * mass;

  Graph g;
  Tensor y = g.input("y", f64, {}), t = g.input("t", f64, {}), hh = g.input("h", f64, {});
  detail::Step st = detail::rk_step([](const Tensor&, const Tensors& s) { return s; }, tab, t, hh, {y}, {});
  for (Backend b : {Backend::interpreter, Backend::c99}) {
    auto r = compile(g, {st.y[0], st.err[0], st.k.back()[0]}, b)
                 .run({{"y", Array::scalar(f64, 1)}, {"t", Array::scalar(f64, 0)}, {"h", Array::scalar(f64, h)}});
    EXPECT_NEAR(r[0].at(0), y1, 1e-16);
    EXPECT_NEAR(r[1].at(0), err, err_bound);
    EXPECT_NEAR(r[2].at(0), y1, 1e-16);  // FSAL: the last stage is f(y1) = y1
  }
  EXPECT_NEAR(y1, std::exp(h), 1e-8);  // and it is a 5th-order step: |error| ~ h^6 / 720
}

// y' = A y for a rotation-with-decay A (torchdiffeq's spiral, linear): y(t) = exp(A t) y0.
struct Linear {
  M2 A{-0.1, 2.0, -2.0, -0.1};
  std::vector<double> times{0, 0.3, 1.1, 2.0, 3.7, 5.0};
  std::vector<double> y0{2, 0};
  std::vector<double> exact() const {
    std::vector<double> r;
    for (double t : times) {
      const M2 E = expm(A, t);
      r.push_back(E[0] * y0[0] + E[1] * y0[1]);
      r.push_back(E[2] * y0[0] + E[3] * y0[1]);
    }
    return r;
  }
  std::vector<double> values(Options opt, Backend backend = Backend::interpreter) const {
    Graph g;
    Tensor y = g.input("y0", f64, {2}), ts = g.input("ts", f64, {static_cast<std::int64_t>(times.size())});
    Tensor At = g.input("At", f64, {2, 2});  // A^T, so y' = y A^T as a row vector
    auto sol = odeint([](const Tensor&, const Tensor& y, const Tensors& p) { return matmul(y.unsqueeze(0), p[0]).reshape({2}); },
                      y, ts, {At}, opt);
    auto r = compile(g, {sol.ys}, backend)
                 .run({{"y0", arr({2}, y0)},
                       {"ts", arr({static_cast<std::int64_t>(times.size())}, times)},
                       {"At", arr({2, 2}, {A[0], A[2], A[1], A[3]})}});
    std::vector<double> v;
    for (std::int64_t i = 0; i < r[0].numel(); ++i) v.push_back(r[0].at(i));
    return v;
  }
  // The largest |error| over all times.
  double error(Options opt) const {
    const auto want = exact(), got = values(opt);
    double worst = 0;
    for (std::size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::abs(got[i] - want[i]));
    return worst;
  }
};

TEST(Odeint, AdaptiveMethodsMatchTheMatrixExponentialToTheirTolerance) {
  Linear lin;
  for (Method m : {Method::dopri5, Method::tsit5})
    for (Grad gm : {Grad::none, Grad::backprop, Grad::adjoint}) {
      const double loose = lin.error({.method = m, .rtol = 1e-6, .atol = 1e-8, .grad = gm});
      const double tight = lin.error({.method = m, .rtol = 1e-10, .atol = 1e-12, .grad = gm});
      EXPECT_LT(loose, 1e-4) << to_string(m);
      EXPECT_LT(tight, 1e-8) << to_string(m);
      EXPECT_LT(tight, loose / 100) << to_string(m);  // the tolerance controls the error
    }
}

// Halving the step divides the error by about 2^order.
TEST(Odeint, FixedStepMethodsConvergeAtTheirOrder) {
  Linear lin;
  for (Method m : {Method::euler, Method::midpoint, Method::rk4}) {
    const int p = tableau(m).order;
    const std::int64_t n = m == Method::euler ? 64 : 16;
    const double e1 = lin.error({.method = m, .steps_per_interval = n});
    const double e2 = lin.error({.method = m, .steps_per_interval = 2 * n});
    EXPECT_NEAR(std::log2(e1 / e2), p, 0.25) << to_string(m) << ": " << e1 << " -> " << e2;
  }
  EXPECT_LT(lin.error({.method = Method::rk4, .steps_per_interval = 64}), 1e-6);
}

// A solve is a loop node whatever its step count (DESIGN invariant 7): the graph of a
// solve and its gradient has the same size for 10 and 1000 steps, every mode.
TEST(Odeint, TheGraphSizeDoesNotDependOnTheStepCount) {
  for (Grad gm : {Grad::backprop, Grad::adjoint})
    for (Method m : {Method::rk4, Method::dopri5}) {
      std::vector<std::size_t> sizes;
      for (std::int64_t n : {10, 1000}) {
        Graph g;
        Tensor y = g.input("y0", f64, {2}), ts = g.input("ts", f64, {5}), A = g.input("A", f64, {2, 2});
        auto sol = odeint([](const Tensor&, const Tensor& y, const Tensors& p) { return matmul(y.unsqueeze(0), p[0]).reshape({2}); },
                          y, ts, {A}, {.method = m, .grad = gm, .max_steps = n, .steps_per_interval = n});
        auto d = grad(sol.ys.sum(), {A});
        sizes.push_back(g.ir().size());
      }
      EXPECT_EQ(sizes[0], sizes[1]) << to_string(m);
    }
}

TEST(Odeint, InterpreterEqualsC99) {
  Linear lin;
  for (Method m : {Method::rk4, Method::dopri5, Method::tsit5}) {
    const Options opt{.method = m, .rtol = 1e-8, .atol = 1e-10, .steps_per_interval = 8};
    const auto a = lin.values(opt, Backend::interpreter), b = lin.values(opt, Backend::c99);
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_NEAR(a[i], b[i], 1e-14) << to_string(m) << " " << i;
  }
}

// Each adaptive step attempt costs 6 evaluations (FSAL), the start 2; fixed steps cost
// their stages.
TEST(Odeint, NfeCountsTheEvaluations) {
  Graph g;
  Tensor y = g.input("y0", f64, {2}), ts = g.input("ts", f64, {3});
  auto f = [](const Tensor&, const Tensor& y) { return -y; };
  auto a = odeint(f, y, ts, {.method = Method::dopri5, .grad = Grad::none});
  auto b = odeint(f, y, ts, {.method = Method::dopri5, .rtol = 1e-10, .atol = 1e-12, .grad = Grad::none});
  auto c = odeint(f, y, ts, {.method = Method::rk4, .steps_per_interval = 5});
  auto r = compile(g, {a.nfe, b.nfe, c.nfe}).run({{"y0", arr({2}, {1, 2})}, {"ts", arr({3}, {0, 1, 2})}});
  EXPECT_EQ(std::fmod(r[0].at(0) - 2, 6), 0);
  EXPECT_GT(r[1].at(0), r[0].at(0));  // a tighter tolerance takes more steps
  EXPECT_EQ(r[2].at(0), 2 * 5 * 4);
}

TEST(Odeint, ExceedingMaxStepsIsARunTimeErrorNamingTheUsersLine) {
  for (Grad gm : {Grad::none, Grad::backprop}) {
    Graph g;
    Tensor y = g.input("y0", f64, {2}), ts = g.input("ts", f64, {2});
    const int line = __LINE__ + 1;
    auto sol = odeint([](const Tensor&, const Tensor& y) { return -y; }, y, ts, {.grad = gm, .max_steps = 5});
    for (Backend b : {Backend::interpreter, Backend::c99}) {
      auto exe = compile(g, {sol.ys}, b);
      EXPECT_NO_THROW(exe.run({{"y0", arr({2}, {1, 2})}, {"ts", arr({2}, {0, 0.01})}}));
      try {
        exe.run({{"y0", arr({2}, {1, 2})}, {"ts", arr({2}, {0, 100})}});
        FAIL() << "expected a UserError";
      } catch (const UserError& e) {
        EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
        // The interpreter also says how many (the C99 backend's message has no number).
        EXPECT_NE(std::string(e.what()).find(b == Backend::interpreter ? "max_steps = 5" : "max_steps"), std::string::npos)
            << e.what();
      }
    }
  }
}

// f32 works at an f32-sized tolerance (an f32 error estimate is noise below ~1e-6).
TEST(Odeint, F32SolvesMatchTheExponential) {
  Graph g;
  Tensor y = g.input("y0", f32, {2}), ts = g.input("ts", f32, {3});
  auto sol = odeint([](const Tensor&, const Tensor& y) { return -y; }, y, ts,
                    {.method = Method::tsit5, .rtol = 1e-5, .atol = 1e-6, .grad = Grad::adjoint});
  auto [dy] = grad(sol.ys.sum(), {y});
  auto r = compile(g, {sol.ys, dy})
               .run({{"y0", Array::from_vector({2}, std::vector<float>{1, 2})},
                     {"ts", Array::from_vector({3}, std::vector<float>{0, 1, 2})}});
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(r[0].at(2 * i + 1), 2 * std::exp(-i), 1e-4) << i;
  EXPECT_NEAR(r[1].at(0), 1 + std::exp(-1) + std::exp(-2), 1e-4);  // d sum(ys) / dy0
}

// Forward only: grad through the adaptive while_loop is the loop's GradError at the odeint line.
TEST(Odeint, GradThroughAForwardOnlySolveNamesTheUsersLine) {
  Graph g;
  Tensor y = g.input("y0", f64, {2}), ts = g.input("ts", f64, {3});
  const int line = __LINE__ + 1;
  auto sol = odeint([](const Tensor&, const Tensor& y) { return -y; }, y, ts, {.grad = Grad::none});
  try {
    grad(sol.ys.sum(), {y});
    FAIL() << "expected a GradError";
  } catch (const GradError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
  }
}

TEST(Odeint, AVectorFieldOfTheWrongTypeNamesTheUsersLineAndTheTypes) {
  Graph g;
  Tensor y = g.input("y0", f64, {2}), ts = g.input("ts", f64, {4});
  const int line = __LINE__ + 2;
  try {
    odeint([](const Tensor&, const Tensor& y) { return y.sum(); }, y, ts);
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("f returns f64[] for a state of type f64[2]"), std::string::npos) << e.what();
  }
  try {
    odeint([](const Tensor&, const Tensor& y) { return y; }, y, g.input("t32", f32, {4}));
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("ts is f32[4]"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mg::frontier::sutra
