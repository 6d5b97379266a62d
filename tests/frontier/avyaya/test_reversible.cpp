// AVYAYA (issue 18): the inverse reconstructs the inputs, the reversible backward gives
// ordinary backprop's gradients (first and second order), interpreter == C99, errors name
// the user's line.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/frontier/avyaya/net.hpp"
#include "tests/ops/gradcheck.hpp"

namespace mg {
namespace {

using testing::parameter_feeds;
using testing::revnet;

double max_abs_diff(const Array& a, const Array& b) {
  EXPECT_EQ(a.type(), b.type());
  double m = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::abs(a.at(i) - b.at(i)));
  return m;
}
double max_abs(const Array& a) {
  double m = 0;
  for (std::int64_t i = 0; i < a.numel(); ++i) m = std::max(m, std::abs(a.at(i)));
  return m;
}
Array draw(const Type& t, std::uint64_t seed) { return testing::sample(t, ir::Domain{}, seed); }

std::vector<Feed> with(std::vector<Feed> feeds, std::string name, Array v) {
  feeds.emplace_back(std::move(name), std::move(v));
  return feeds;
}

// Depth 12 in f64: the inverse of the output gives back the input to a few ulps.
TEST(Avyaya, InverseReconstructsTheInputF64) {
  Graph g;
  auto net = revnet(12, 3, 8, f64);
  nn::bind(net, g, 1);
  Tensor x = g.input("x", f64, {5, 6});
  Tensor y = net(x);
  Tensor back = net.inverse(y);
  const Array xv = draw(x.type(), 2);
  auto r = compile(g, {y, back}).run(with(parameter_feeds(net), "x", xv));
  EXPECT_GT(max_abs_diff(r[0], xv), 0.1);  // the network does change x
  const double err = max_abs_diff(r[1], xv) / max_abs(xv);
  EXPECT_LT(err, 1e-14) << err;
}

TEST(Avyaya, InverseReconstructsTheInputF32) {
  Graph g;
  auto net = revnet(12, 3, 8, f32);
  nn::bind(net, g, 1);
  Tensor x = g.input("x", f32, {5, 6});
  Tensor back = net.inverse(net(x));
  const Array x32 = draw(x.type(), 2);
  auto r = compile(g, {back}).run(with(parameter_feeds(net), "x", x32));
  const double err = max_abs_diff(r[0], x32) / max_abs(x32);
  EXPECT_LT(err, 1e-6) << err;
}

// Gradients of one loss with respect to the input and every parameter, through the
// reversible backward and through ordinary backprop of the same network.
struct Grads {
  std::vector<Array> rev, ord;
};
Grads both_gradients(int depth, Backend backend) {
  Graph g;
  auto net = revnet(depth, 2, 5, f64);
  nn::bind(net, g, 3);
  Tensor x = g.input("x", f64, {4, 4});
  Tensor w = g.input("w", f64, {4, 4});  // a loss that weighs each output differently
  std::vector<Tensor> wrt{x};
  for (nn::Parameter* p : nn::parameters(net)) wrt.push_back(p->tensor);
  auto rev = grad((mg::tanh(net(x)) * w).sum(), wrt);
  auto ord = grad((mg::tanh(net.ordinary(x)) * w).sum(), wrt);
  std::vector<Tensor> outs = rev;
  outs.insert(outs.end(), ord.begin(), ord.end());
  auto r = compile(g, outs, backend)
               .run(with(with(parameter_feeds(net), "x", draw(x.type(), 4)), "w", draw(w.type(), 5)));
  Grads out;
  out.rev.assign(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(rev.size()));
  out.ord.assign(r.begin() + static_cast<std::ptrdiff_t>(rev.size()), r.end());
  return out;
}

TEST(Avyaya, GradientsEqualOrdinaryBackprop) {
  Grads gr = both_gradients(10, Backend::interpreter);
  ASSERT_EQ(gr.rev.size(), 1u + 10 * 8);
  for (std::size_t i = 0; i < gr.rev.size(); ++i) {
    EXPECT_GT(max_abs(gr.ord[i]), 1e-6) << i;  // every gradient is non-trivial
    EXPECT_LT(max_abs_diff(gr.rev[i], gr.ord[i]), 1e-10) << "gradient " << i;
  }
}

// The C99 backend runs the same graphs (the custom_vjp's backward inlined) to the same values.
TEST(Avyaya, InterpreterEqualsC99) {
  Grads a = both_gradients(3, Backend::interpreter), c = both_gradients(3, Backend::c99);
  for (std::size_t i = 0; i < a.rev.size(); ++i) {
    EXPECT_LT(max_abs_diff(a.rev[i], c.rev[i]), 1e-12) << i;
    EXPECT_LT(max_abs_diff(a.ord[i], c.ord[i]), 1e-12) << i;
  }
}

// The reversible backward against finite differences, first and second order (f and g are
// tanh MLPs: smooth, so the backward, traced as IR, differentiates again).
TEST(Avyaya, FiniteDifferencesFirstAndSecondOrder) {
  Graph g;
  auto net = revnet(3, 2, 3, f64);
  nn::bind(net, g, 6);
  Tensor x = g.input("x", f64, {2, 4});
  Tensor loss = (mg::tanh(net(x)) * mg::tanh(net(x))).sum();
  std::vector<ir::Value> ins{x.value()};
  std::vector<Array> vals{draw(x.type(), 7)};
  for (nn::Parameter* p : nn::parameters(net)) {
    ins.push_back(p->tensor.value());
    vals.push_back(p->value());
  }
  auto c = testing::check_gradients(loss.value(), ins, vals, 2, 1e-6, 8);
  EXPECT_TRUE(c.ok) << c.report;
}

// Grad of grad equals ordinary backprop's (a Hessian-vector product through the
// reversible backward, which rebuilds the activations from the output).
TEST(Avyaya, SecondOrderEqualsOrdinaryBackprop) {
  Graph g;
  auto net = revnet(4, 2, 4, f64);
  nn::bind(net, g, 9);
  Tensor x = g.input("x", f64, {3, 4});
  Tensor v = g.input("v", f64, {3, 4});
  auto hvp = [&](const Tensor& y) {
    auto [dx] = grad((y * y).sum(), {x});
    std::vector<Tensor> wrt{x};
    for (nn::Parameter* p : nn::parameters(net)) wrt.push_back(p->tensor);
    return grad((dx * v).sum(), wrt);
  };
  auto rev = hvp(net(x)), ord = hvp(net.ordinary(x));
  std::vector<Tensor> outs = rev;
  outs.insert(outs.end(), ord.begin(), ord.end());
  auto r = compile(g, outs).run(with(with(parameter_feeds(net), "x", draw(x.type(), 10)), "v", draw(v.type(), 11)));
  const std::size_t n = rev.size();
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_GT(max_abs(r[n + i]), 1e-8) << i;
    EXPECT_LT(max_abs_diff(r[i], r[n + i]), 1e-10) << "second-order gradient " << i;
  }
}

// One ReversibleBlock called on its own is the coupling y1 = x1 + f(x2), y2 = x2 + g(y1),
// written out here by hand with the same modules.
TEST(Avyaya, ABlockIsTheAdditiveCoupling) {
  Graph g;
  auto net = revnet(1, 2, 3, f64);
  nn::bind(net, g, 12);
  const testing::Block& b = net.blocks[0];
  Tensor x = g.input("x", f64, {3, 4});
  Tensor x1 = slice(x, -1, 0, 2), x2 = slice(x, -1, 2, 4);
  Tensor y1 = x1 + b.f(x2);
  Tensor want = concat({y1, x2 + b.g(y1)}, -1);
  auto r = compile(g, {b(x), net(x), want}).run(with(parameter_feeds(net), "x", draw(x.type(), 13)));
  EXPECT_GT(max_abs(r[2]), 0.1);
  EXPECT_EQ(max_abs_diff(r[0], r[2]), 0.0);
  EXPECT_EQ(max_abs_diff(r[1], r[2]), 0.0);
}

TEST(Avyaya, AnOddWidthNamesTheUsersLine) {
  Graph g;
  auto net = revnet(2, 2, 3, f64);
  nn::bind(net, g);
  Tensor x = g.input("x", f64, {2, 5});
  const int line = __LINE__ + 2;
  try {
    net(x);
    FAIL() << "expected a ShapeError";
  } catch (const ShapeError& e) {
    EXPECT_EQ(e.where().line, static_cast<std::uint32_t>(line)) << e.what();
    EXPECT_NE(std::string(e.what()).find("even length, got f64[2,5]"), std::string::npos) << e.what();
  }
}

TEST(Avyaya, AnUnboundModelIsAClearError) {
  Graph g;
  auto net = revnet(2, 2, 3, f64);
  Tensor x = g.input("x", f64, {2, 4});
  try {
    net(x);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("'0.f.0.weight' is not bound"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mg
