// The Leaky neuron against a trace computed by hand (snnTorch's update order: the reset
// from the previous membrane, then beta U + I - reset U_thr, then the spike), for the
// three reset mechanisms, on the interpreter and the C99 backend; and the reset detached.
#include <gtest/gtest.h>

#include <minigrad/frontier/spanda.hpp>
#include <minigrad/minigrad.hpp>

#include "tests/ops/gradcheck.hpp"
#include "tests/values.hpp"

namespace mg::frontier::spanda {
namespace {

// beta 0.5, threshold 1, inputs 0.6 0.6 0.6 0 1.5 from U = 0:
//   U1 = 0.6, U2 = 0.3 + 0.6 = 0.9, U3 = 0.45 + 0.6 = 1.05 (spike),
//   subtract: U4 = 0.525 + 0 - 1 = -0.475, U5 = -0.2375 + 1.5 = 1.2625 (spike)
//   zero:     U4 = 0.5 (1 - 1) 1.05 + 0 = 0,  U5 = 1.5 (spike)
//   none:     U4 = 0.525,                     U5 = 0.2625 + 1.5 = 1.7625 (spike)
struct Trace {
  Reset reset;
  std::vector<double> mem, spikes;
};

TEST(SpandaLeaky, TraceMatchesTheHandComputedOne) {
  const std::vector<Trace> traces = {
      {Reset::subtract, {0.6, 0.9, 1.05, -0.475, 1.2625}, {0, 0, 1, 0, 1}},
      {Reset::zero, {0.6, 0.9, 1.05, 0.0, 1.5}, {0, 0, 1, 0, 1}},
      {Reset::none, {0.6, 0.9, 1.05, 0.525, 1.7625}, {0, 0, 1, 0, 1}},
  };
  for (const Trace& tr : traces) {
    Graph g;
    Tensor xs = g.input("xs", f64, {5, 1});
    Leaky lif{.beta = 0.5, .threshold = 1.0, .reset = tr.reset};
    auto [last, ys] = scan(
        [&](const Tensors& mem, const Tensors& x) {
          auto [s, u] = lif.step(x[0], mem[0]);
          return std::pair{Tensors{u}, Tensors{s, u}};
        },
        Tensors{g.zeros({1}, f64)}, Tensors{xs});
    for (Backend b : {Backend::interpreter, Backend::c99}) {
      auto r = compile(g, {ys[0], ys[1]}, b).run({{"xs", testing::vec({5, 1}, {0.6, 0.6, 0.6, 0, 1.5})}});
      testing::expect_values(r[0], tr.spikes);
      testing::expect_values(r[1], tr.mem, 1e-12);
    }
  }
}

// The reset term carries no gradient: with a spike at step 1 (reset by subtraction at
// step 2), dU2/dU0 = beta^2 exactly, as if there were no reset.
TEST(SpandaLeaky, TheResetIsDetached) {
  Graph g;
  Tensor u0 = g.input("u0", f64, {1});
  Tensor i1 = g.input("i1", f64, {1});
  Leaky sub{.beta = 0.5, .threshold = 1.0, .surrogate = Surrogate::straight_through()};
  auto [s1, u1] = sub.step(i1, u0);
  auto [s2, u2] = sub.step(g.zeros({1}, f64), u1);
  auto [d_u0] = grad(u2.sum(), {u0});
  auto r = compile(g, {u2, d_u0}).run({{"u0", testing::vec({1}, {0.4})}, {"i1", testing::vec({1}, {1.0})}});
  // U1 = 0.2 + 1 = 1.2 (spikes), U2 = 0.6 - 1 = -0.4; the gradient ignores the reset.
  testing::expect_values(r[0], {-0.4}, 1e-12);
  testing::expect_values(r[1], {0.25}, 1e-12);
}

// Without spikes (inputs well below threshold) the dynamics are linear and the surrogate
// is never reached: the exact gradient, by finite differences, first and second order.
TEST(SpandaLeaky, SubthresholdDynamicsPassAGradientCheck) {
  Graph g;
  Tensor xs = g.input("xs", f64, {4, 3});
  Leaky lif{.beta = 0.8, .threshold = 10.0};
  auto [last, ys] = scan(
      [&](const Tensors& mem, const Tensors& x) {
        auto [s, u] = lif.step(x[0], mem[0]);
        return std::pair{Tensors{u}, Tensors{Tensor(u * u)}};
      },
      Tensors{g.zeros({3}, f64)}, Tensors{xs});
  const Array v = testing::vec({4, 3}, {0.1, -0.3, 0.5, 0.2, 0.7, -0.1, 0.0, 0.4, 0.3, -0.6, 0.2, 0.1});
  for (int order : {1, 2}) {
    auto c = testing::check_gradients(ys[0].sum().value(), {xs.value()}, {v}, order, 1e-7, 5);
    EXPECT_TRUE(c.ok) << "order " << order << ": " << c.report;
  }
}

TEST(SpandaLeaky, MismatchedCurrentAndMembraneNameTheUsersLine) {
  Graph g;
  Leaky lif;
  const int line = __LINE__ + 2;
  try {
    lif.step(g.zeros({3}), g.zeros({4}));
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line));
    EXPECT_NE(std::string(e.what()).find("spanda::Leaky"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mg::frontier::spanda
