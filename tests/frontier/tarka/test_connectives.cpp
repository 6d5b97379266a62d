// TARKA's connectives and quantifiers against LTNtorch's definitions (ltn_reference.hpp):
// values at random points and at the endpoints 0 / 1 (where the stable projections
// matter), gradients against central differences of the reference formula, second order
// by the shared gradient checker, and the C99 backend against the interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <minigrad/frontier/tarka.hpp>
#include <minigrad/minigrad.hpp>

#include "ltn_reference.hpp"
#include "tests/ops/gradcheck.hpp"

namespace {

using namespace mg;
namespace tk = mg::frontier::tarka;

using BinaryOp = std::function<Tensor(const Tensor&, const Tensor&)>;
struct BinaryCase {
  std::string name;
  BinaryOp op;
  double (*ref)(double, double);
};

std::vector<BinaryCase> binary_cases() {
  return {
      {"and_min", [](auto& x, auto& y) { return tk::and_min(x, y); }, ltn_ref::and_min},
      {"and_prod", [](auto& x, auto& y) { return tk::and_prod(x, y); }, ltn_ref::and_prod},
      {"and_prod_unstable", [](auto& x, auto& y) { return tk::and_prod(x, y, false); }, ltn_ref::and_prod_unstable},
      {"and_luk", [](auto& x, auto& y) { return tk::and_luk(x, y); }, ltn_ref::and_luk},
      {"or_max", [](auto& x, auto& y) { return tk::or_max(x, y); }, ltn_ref::or_max},
      {"or_prob_sum", [](auto& x, auto& y) { return tk::or_prob_sum(x, y); }, ltn_ref::or_prob_sum},
      {"or_luk", [](auto& x, auto& y) { return tk::or_luk(x, y); }, ltn_ref::or_luk},
      {"implies_kleene_dienes", [](auto& x, auto& y) { return tk::implies_kleene_dienes(x, y); },
       ltn_ref::implies_kleene_dienes},
      {"implies_godel", [](auto& x, auto& y) { return tk::implies_godel(x, y); }, ltn_ref::implies_godel},
      {"implies_reichenbach", [](auto& x, auto& y) { return tk::implies_reichenbach(x, y); },
       ltn_ref::implies_reichenbach},
      {"implies_goguen", [](auto& x, auto& y) { return tk::implies_goguen(x, y); }, ltn_ref::implies_goguen},
      {"implies_luk", [](auto& x, auto& y) { return tk::implies_luk(x, y); }, ltn_ref::implies_luk},
  };
}

// Points in (0, 1) away from every operator's kinks (x = y, x + y = 1, pi_0(x) = y), where
// the one-sided derivatives differ and finite differences mean nothing.
std::pair<std::vector<double>, std::vector<double>> smooth_points(int n, unsigned seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.02, 0.98);
  std::vector<double> xs, ys;
  while (static_cast<int>(xs.size()) < n) {
    double x = u(rng), y = u(rng);
    if (std::abs(x - y) < 0.03 || std::abs(x + y - 1) < 0.03 || std::abs(ltn_ref::pi_0(x) - y) < 0.03) continue;
    xs.push_back(x);
    ys.push_back(y);
  }
  return {xs, ys};
}

Array vec(const std::vector<double>& v) { return Array::from_vector<double>({static_cast<std::int64_t>(v.size())}, v); }

class Binary : public ::testing::TestWithParam<BinaryCase> {};

TEST_P(Binary, ValuesAndGradientsMatchLtn) {
  const BinaryCase& c = GetParam();
  auto [xs, ys] = smooth_points(40, 7);
  const auto n = static_cast<std::int64_t>(xs.size());
  Graph g;
  Tensor x = g.input("x", f64, {n}), y = g.input("y", f64, {n});
  Tensor out = c.op(x, y);
  auto [dx, dy] = grad(out.sum(), {x, y});
  auto res = compile(g, {out, dx, dy}).run({{"x", vec(xs)}, {"y", vec(ys)}});
  const double h = 1e-6;
  for (std::int64_t i = 0; i < n; ++i) {
    double X = xs[i], Y = ys[i];
    EXPECT_NEAR(res[0].at(i), c.ref(X, Y), 1e-14) << c.name << " at (" << X << ", " << Y << ")";
    double gx = (c.ref(X + h, Y) - c.ref(X - h, Y)) / (2 * h), gy = (c.ref(X, Y + h) - c.ref(X, Y - h)) / (2 * h);
    EXPECT_NEAR(res[1].at(i), gx, 1e-7) << c.name << " d/dx at (" << X << ", " << Y << ")";
    EXPECT_NEAR(res[2].at(i), gy, 1e-7) << c.name << " d/dy at (" << X << ", " << Y << ")";
  }
  // Second order through the shared checker (Hessian-vector products vs differences).
  auto r = mg::testing::check_gradients(out.value(), {x.value(), y.value()}, {vec(xs), vec(ys)}, 2, 1e-6, 3);
  EXPECT_TRUE(r.ok) << c.name << ": " << r.report;
}

TEST_P(Binary, EndpointValuesMatchLtn) {
  // 0 and 1 are where LTN's stable projections change the value (AndProd(0, 0) = eps^2).
  const BinaryCase& c = GetParam();
  std::vector<double> xs, ys;
  for (double a : {0.0, 0.25, 1.0})
    for (double b : {0.0, 0.75, 1.0}) xs.push_back(a), ys.push_back(b);
  Graph g;
  Tensor x = g.input("x", f64, {9}), y = g.input("y", f64, {9});
  auto res = compile(g, {c.op(x, y)}).run({{"x", vec(xs)}, {"y", vec(ys)}});
  for (int i = 0; i < 9; ++i)
    EXPECT_NEAR(res[0].at(i), c.ref(xs[i], ys[i]), 1e-15) << c.name << " at (" << xs[i] << ", " << ys[i] << ")";
}

TEST_P(Binary, Broadcasts) {
  const BinaryCase& c = GetParam();
  Graph g;
  Tensor x = g.input("x", f64, {3, 1}), y = g.input("y", f64, {1, 4});
  Tensor out = c.op(x, y);
  ASSERT_EQ(out.shape(), (Shape{3, 4}));
  std::vector<double> xs{0.1, 0.5, 0.9}, ys{0.2, 0.4, 0.6, 0.8};
  auto res = compile(g, {out}).run({{"x", Array::from_vector<double>({3, 1}, xs)}, {"y", Array::from_vector<double>({1, 4}, ys)}});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(res[0].at({i, j}), c.ref(xs[i], ys[j]), 1e-15) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Ltn, Binary, ::testing::ValuesIn(binary_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(Unary, NegationsAndProjections) {
  Graph g;
  Tensor x = g.input("x", f64, {4});
  auto res = compile(g, {tk::not_standard(x), tk::not_godel(x), tk::pi_0(x), tk::pi_1(x)})
                 .run({{"x", vec({0.0, 0.3, 0.7, 1.0})}});
  std::vector<double> xs{0.0, 0.3, 0.7, 1.0};
  for (int i = 0; i < 4; ++i) {
    EXPECT_DOUBLE_EQ(res[0].at(i), 1 - xs[i]);
    EXPECT_EQ(res[1].at(i), xs[i] == 0 ? 1.0 : 0.0);
    EXPECT_DOUBLE_EQ(res[2].at(i), ltn_ref::pi_0(xs[i]));
    EXPECT_DOUBLE_EQ(res[3].at(i), ltn_ref::pi_1(xs[i]));
  }
  EXPECT_DOUBLE_EQ(res[2].at(0), 1e-4);  // pi_0 keeps 0 away from 0 by LTN's eps
}

// ---- quantifiers --------------------------------------------------------------------

struct QuantCase {
  std::string name;
  std::function<Tensor(const Tensor&, Axes)> op;
  std::function<double(const std::vector<double>&)> ref;
};

std::vector<QuantCase> quant_cases() {
  std::vector<QuantCase> cs;
  for (double p : {1.0, 2.0, 3.0, 6.0}) {
    std::string tag = std::to_string(static_cast<int>(p));
    cs.push_back({"pmean_p" + tag, [p](const Tensor& x, Axes a) { return tk::pmean(x, a, p); },
                  [p](const std::vector<double>& v) { return ltn_ref::pmean(v, p); }});
    cs.push_back({"pmean_error_p" + tag, [p](const Tensor& x, Axes a) { return tk::pmean_error(x, a, p); },
                  [p](const std::vector<double>& v) { return ltn_ref::pmean_error(v, p); }});
  }
  for (double t : {0.05, 1.0}) {
    cs.push_back({"softmin_t" + std::to_string(static_cast<int>(t * 100)),
                  [t](const Tensor& x, Axes a) { return tk::softmin_forall(x, a, t); },
                  [t](const std::vector<double>& v) { return ltn_ref::softmin(v, t); }});
  }
  cs.push_back({"mean", [](const Tensor& x, Axes a) { return tk::aggreg_mean(x, a); },
                [](const std::vector<double>& v) {
                  double s = 0;
                  for (double e : v) s += e;
                  return s / v.size();
                }});
  return cs;
}

class Quantifier : public ::testing::TestWithParam<QuantCase> {};

TEST_P(Quantifier, ValuesAndGradientsMatchLtn) {
  const QuantCase& c = GetParam();
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(0.01, 0.99);
  std::vector<double> xs(20);
  for (double& v : xs) v = u(rng);
  Graph g;
  Tensor x = g.input("x", f64, {4, 5});
  Tensor all = c.op(x, {}), rows = c.op(x, {1});
  auto [dx] = grad(all, {x});
  auto res = compile(g, {all, rows, dx}).run({{"x", Array::from_vector<double>({4, 5}, xs)}});
  EXPECT_NEAR(res[0].item(), c.ref(xs), 1e-14) << c.name;
  for (int i = 0; i < 4; ++i) {
    std::vector<double> row(xs.begin() + 5 * i, xs.begin() + 5 * i + 5);
    EXPECT_NEAR(res[1].at(i), c.ref(row), 1e-14) << c.name << " row " << i;
  }
  const double h = 1e-6;
  for (int i = 0; i < 20; ++i) {
    auto up = xs, down = xs;
    up[i] += h;
    down[i] -= h;
    EXPECT_NEAR(res[2].at(i), (c.ref(up) - c.ref(down)) / (2 * h), 1e-7) << c.name << " d/dx" << i;
  }
  auto r = mg::testing::check_gradients(rows.value(), {x.value()}, {Array::from_vector<double>({4, 5}, xs)}, 2, 1e-6, 5);
  EXPECT_TRUE(r.ok) << c.name << ": " << r.report;
}

INSTANTIATE_TEST_SUITE_P(Ltn, Quantifier, ::testing::ValuesIn(quant_cases()),
                         [](const auto& info) { return info.param.name; });

TEST(Quantifier, LtnDocstringExample) {
  // LTNtorch's AggregPMeanError docstring: p(x) = sigmoid([0.56, 0.9, 0.7]), forall -> 0.6704.
  Graph g;
  Tensor x = g.input("x", f64, {3});
  auto res = compile(g, {tk::pmean_error(sigmoid(x)), tk::pmean(sigmoid(x))}).run({{"x", vec({0.56, 0.9, 0.7})}});
  EXPECT_NEAR(res[0].item(), 0.6704, 5e-5);
  EXPECT_NEAR(res[1].item(), ltn_ref::pmean({1 / (1 + std::exp(-0.56)), 1 / (1 + std::exp(-0.9)), 1 / (1 + std::exp(-0.7))}, 2),
              1e-14);
}

TEST(Quantifier, SoftminTendsToMinAndMean) {
  Graph g;
  Tensor x = g.input("x", f64, {4});
  auto res = compile(g, {tk::softmin_forall(x, {}, 1e-3), tk::softmin_forall(x, {}, 1e3)})
                 .run({{"x", vec({0.2, 0.9, 0.5, 0.7})}});
  EXPECT_NEAR(res[0].item(), 0.2, 2e-3);
  EXPECT_NEAR(res[1].item(), 0.575, 1e-3);
}

TEST(Quantifier, BadExponentNamesTheUsersLine) {
  Graph g;
  Tensor x = g.input("x", f64, {4});
  try {
    tk::pmean(x, {}, 0.5);  // the line below is what the error must name
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.where().file).find("test_connectives.cpp"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("p >= 1"), std::string::npos) << e.what();
  }
}

// ---- Truth: operators pick the Logic's connectives ------------------------------------

TEST(Truth, OperatorsFollowTheLogic) {
  std::vector<double> xs{0.1, 0.35, 0.8}, ys{0.6, 0.2, 0.95};
  for (tk::Logic logic : {tk::Logic::product(), tk::Logic::lukasiewicz(), tk::Logic::goedel(),
                          tk::Logic{.implication = tk::Implication::goguen},
                          tk::Logic{.implication = tk::Implication::kleene_dienes}}) {
    Graph g;
    Tensor x = g.input("x", f64, {3}), y = g.input("y", f64, {3});
    tk::Truth a(x, logic), b(y, logic);
    auto res = compile(g, {(a & b).tensor(), (a | b).tensor(), (~a).tensor(), (a >> b).tensor(), (a ^ b).tensor()})
                   .run({{"x", vec(xs)}, {"y", vec(ys)}});
    auto and_ref = logic.semantics == tk::Semantics::product       ? ltn_ref::and_prod
                   : logic.semantics == tk::Semantics::lukasiewicz ? ltn_ref::and_luk
                                                                   : ltn_ref::and_min;
    auto or_ref = logic.semantics == tk::Semantics::product       ? ltn_ref::or_prob_sum
                  : logic.semantics == tk::Semantics::lukasiewicz ? ltn_ref::or_luk
                                                                  : ltn_ref::or_max;
    auto imp_ref = logic.implication == tk::Implication::reichenbach   ? ltn_ref::implies_reichenbach
                   : logic.implication == tk::Implication::goguen      ? ltn_ref::implies_goguen
                   : logic.implication == tk::Implication::kleene_dienes ? ltn_ref::implies_kleene_dienes
                   : logic.implication == tk::Implication::goedel      ? ltn_ref::implies_godel
                                                                       : ltn_ref::implies_luk;
    for (int i = 0; i < 3; ++i) {
      double X = xs[i], Y = ys[i];
      std::string tag = tk::to_string(logic.semantics) + "/" + tk::to_string(logic.implication);
      EXPECT_NEAR(res[0].at(i), and_ref(X, Y), 1e-15) << tag;
      EXPECT_NEAR(res[1].at(i), or_ref(X, Y), 1e-15) << tag;
      EXPECT_NEAR(res[2].at(i), 1 - X, 1e-15) << tag;
      EXPECT_NEAR(res[3].at(i), imp_ref(X, Y), 1e-15) << tag;
      EXPECT_NEAR(res[4].at(i), and_ref(imp_ref(X, Y), imp_ref(Y, X)), 1e-15) << tag;  // LTN's Equiv
    }
  }
}

TEST(Truth, MixedLogicsAreAnErrorAtTheUsersLine) {
  Graph g;
  tk::Truth a(g.input("x", f64, {3}), tk::Logic::product()), b(g.input("y", f64, {3}), tk::Logic::goedel());
  const int line = __LINE__ + 2;
  try {
    (void)(a & b);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.where().file).find("test_connectives.cpp"), std::string::npos) << e.what();
    EXPECT_EQ(e.where().line, line) << e.what();
  }
}

TEST(Truth, ShapeMismatchNamesTheUsersLine) {
  Graph g;
  tk::Truth a(g.input("x", f64, {3})), b(g.input("y", f64, {4}));
  try {
    (void)(a >> b);
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("test_connectives.cpp"), std::string::npos) << e.what();
  }
}

// ---- one graph with every connective, quantifier and their gradients: C99 = interpreter

TEST(Backends, C99AgreesWithTheInterpreter) {
  auto [xs, ys] = smooth_points(16, 21);
  Graph g;
  Tensor x = g.input("x", f64, {16}), y = g.input("y", f64, {16});
  std::vector<Tensor> outs;
  Tensor total = g.scalar(0.0, f64);
  for (const auto& c : binary_cases()) {
    outs.push_back(c.op(x, y));
    total = total + outs.back().sum();
  }
  for (const auto& c : quant_cases()) {
    outs.push_back(c.op(reshape(x, {4, 4}), {1}));
    total = total + outs.back().sum();
  }
  auto [dx, dy] = grad(total, {x, y});
  outs.push_back(dx);
  outs.push_back(dy);
  std::vector<Feed> feeds{{"x", vec(xs)}, {"y", vec(ys)}};
  auto a = compile(g, outs, Backend::interpreter).run(feeds);
  auto b = compile(g, outs, Backend::c99).run(feeds);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t k = 0; k < a.size(); ++k)
    for (std::int64_t i = 0; i < a[k].numel(); ++i) EXPECT_NEAR(a[k].at(i), b[k].at(i), 1e-12) << "output " << k;
}

}  // namespace

namespace {

// LTNtorch's own printed outputs (the docstrings of ltn/fuzzy_ops.py, 4 decimals): p(x) =
// sigmoid of [0.56, 0.9], p(y) = sigmoid of [0.7, 0.2, 0.1], the operator on every pair.
// Independent of ltn_reference.hpp: these numbers came out of LTNtorch itself.
TEST(LtnDocstrings, PrintedValuesMatch) {
  Graph g;
  Tensor px = reshape(sigmoid(g.input("x", f64, {2})), {2, 1});
  Tensor py = reshape(sigmoid(g.input("y", f64, {3})), {1, 3});
  struct Golden {
    const char* name;
    Tensor value;
    std::vector<double> want;
  };
  std::vector<Golden> cases{
      {"AndMin", tk::and_min(px, py), {0.6365, 0.5498, 0.5250, 0.6682, 0.5498, 0.5250}},
      {"AndProd", tk::and_prod(px, py), {0.4253, 0.3500, 0.3342, 0.4751, 0.3910, 0.3733}},
      {"AndLuk", tk::and_luk(px, py), {0.3046, 0.1863, 0.1614, 0.3791, 0.2608, 0.2359}},
      {"ImpliesGoguen", tk::implies_goguen(px, py), {1.0000, 0.8639, 0.8248, 0.9398, 0.7733, 0.7384}},
      {"ImpliesLuk", tk::implies_luk(px, py), {1.0000, 0.9134, 0.8885, 0.9572, 0.8389, 0.8140}},
      {"Equiv(AndProd, ImpliesReichenbach)",
       (tk::Truth(px) ^ tk::Truth(py)).tensor(), {0.5972, 0.5708, 0.5645, 0.6165, 0.5718, 0.5617}},
  };
  std::vector<Tensor> outs;
  for (auto& c : cases) outs.push_back(c.value);
  auto res = compile(g, outs).run({{"x", vec({0.56, 0.9})}, {"y", vec({0.7, 0.2, 0.1})}});
  for (std::size_t k = 0; k < cases.size(); ++k)
    for (int i = 0; i < 6; ++i) EXPECT_NEAR(res[k].at(i), cases[k].want[i], 5.01e-5) << cases[k].name << " [" << i << "]";
}

}  // namespace
