// Surrogate gradients: the forward is snnTorch's strict Heaviside, the backward each of
// snnTorch's formulas (transcribed from snntorch/surrogate.py's backward methods, with its
// default parameters), and grad of grad differentiates the surrogate honestly.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>

#include <minigrad/frontier/spanda.hpp>
#include <minigrad/minigrad.hpp>

#include "tests/ops/gradcheck.hpp"
#include "tests/values.hpp"

namespace mg::frontier::spanda {
namespace {

const std::vector<double> kPoints = {-1.3, -0.2, -0.01, 0.0, 0.03, 0.25, 0.9};

struct Case {
  Surrogate s;
  std::function<double(double)> snntorch;  // dS/dx as snnTorch's backward computes it
};

std::vector<Case> cases() {
  const double pi = std::numbers::pi;
  return {
      {Surrogate::atan(), [=](double x) { return 2.0 / 2 / (1 + std::pow(pi / 2 * 2.0 * x, 2)); }},
      {Surrogate::atan(5.0), [=](double x) { return 5.0 / 2 / (1 + std::pow(pi / 2 * 5.0 * x, 2)); }},
      {Surrogate::fast_sigmoid(), [](double x) { return 1 / std::pow(25 * std::abs(x) + 1.0, 2); }},
      {Surrogate::sigmoid(), [](double x) { return 25 * std::exp(-25 * x) / std::pow(std::exp(-25 * x) + 1, 2); }},
      {Surrogate::triangular(), [](double x) { return x >= 0 ? -1.0 : 1.0; }},
      {Surrogate::triangular(0.5), [](double x) { return x >= 0 ? -0.5 : 0.5; }},
      {Surrogate::straight_through(), [](double) { return 1.0; }},
  };
}

TEST(SpandaSurrogate, ForwardIsStrictHeavisideAndBackwardIsSnntorchsFormula) {
  for (const Case& c : cases()) {
    Graph g;
    Tensor x = g.input("x", f64, {static_cast<std::int64_t>(kPoints.size())});
    Tensor s = spike(x, c.s);
    auto [dx] = grad(s.sum(), {x});
    for (Backend b : {Backend::interpreter, Backend::c99}) {
      auto r = compile(g, {s, dx}, b).run({{"x", testing::vec({7}, kPoints)}});
      for (std::size_t i = 0; i < kPoints.size(); ++i) {
        EXPECT_EQ(r[0].at(static_cast<std::int64_t>(i)), kPoints[i] > 0 ? 1.0 : 0.0) << c.s.name();
        EXPECT_NEAR(r[1].at(static_cast<std::int64_t>(i)), c.snntorch(kPoints[i]), 1e-14)
            << c.s.name() << " at x = " << kPoints[i];
      }
    }
  }
}

// The surrogate's backward is IR: its own derivative, by finite differences, first and
// second order (points away from fast_sigmoid's kink at 0 and triangular's jump).
TEST(SpandaSurrogate, GradOfGradDifferentiatesTheSurrogate) {
  const std::vector<double> smooth = {-0.7, -0.15, 0.05, 0.4};
  for (const Surrogate& s : {Surrogate::atan(), Surrogate::fast_sigmoid(), Surrogate::sigmoid(5.0)}) {
    Graph g;
    Tensor x = g.input("x", f64, {4});
    auto [dx] = grad(spike(x, s).sum(), {x});
    for (int order : {1, 2}) {
      auto c = testing::check_gradients(dx.sum().value(), {x.value()}, {testing::vec({4}, smooth)}, order, 1e-6, 3);
      EXPECT_TRUE(c.ok) << s.name() << " order " << order << ": " << c.report;
    }
    // And the value: d/dx of atan's surrogate at 0.4 against the closed form.
    if (s.kind == Surrogate::Kind::atan) {
      auto [ddx] = grad(dx.sum(), {x});
      auto r = compile(g, {ddx}).run({{"x", testing::vec({4}, smooth)}});
      const double k = std::numbers::pi / 2 * 2.0, z = k * 0.4;
      EXPECT_NEAR(r[0].at(3), -2.0 / 2 * 2 * z * k / std::pow(1 + z * z, 2), 1e-12);
    }
  }
}

TEST(SpandaSurrogate, AnIntegerMembraneNamesTheUsersLine) {
  Graph g;
  Tensor x = g.input("x", i64, {3});
  const int line = __LINE__ + 2;
  try {
    spike(x);
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line));
    EXPECT_NE(std::string(e.what()).find("float membrane"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mg::frontier::spanda
