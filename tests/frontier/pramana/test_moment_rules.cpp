// The registry's moment rules: ReLU against the rectified-Gaussian closed form (1e-9), every
// rule against Monte Carlo (2e5 samples, within 5 standard errors, fixed seeds), the kinds
// reported, and the errors (an op without a rule, a random value made discrete).
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include <minigrad/dsl/compile.hpp>
#include <minigrad/dsl/expr.hpp>
#include <minigrad/dsl/graph.hpp>
#include <minigrad/dsl/moments.hpp>
#include <minigrad/dsl/tensor_methods.hpp>
#include <minigrad/ir/builder.hpp>
#include <minigrad/ir/errors.hpp>
#include <minigrad/ir/ops.hpp>
#include <minigrad/ir/ops/moment_quadrature.hpp>

#include "tests/frontier/pramana/mc.hpp"

namespace mg {
namespace {

using testing::pramana::column_stats;
using testing::pramana::gaussian_samples;
using testing::pramana::kSamples;
using testing::pramana::within_5se;

Array row(const std::vector<double>& v) { return Array::from_vector<double>({1, static_cast<std::int64_t>(v.size())}, v); }

// Per-sample function on [B, ...] values (B = 1 for the moments, kSamples for Monte Carlo).
using BatchFn = std::function<ir::Value(const std::vector<ir::Value>&)>;

struct Case {
  std::string name;
  std::vector<std::vector<double>> mean, var;  // per random operand, [d] each
  BatchFn f;
};

// Propagates f's moments at B = 1 and compares them with f over kSamples Gaussian draws.
// Returns the kinds the rules reported.
std::vector<ir::MomentKind> check_case(const Case& c, std::uint64_t seed) {
  Graph g;
  std::vector<Tensor> m, v;
  std::vector<ir::Value> mv;
  std::vector<Feed> feeds;
  for (std::size_t k = 0; k < c.mean.size(); ++k) {
    const std::int64_t d = static_cast<std::int64_t>(c.mean[k].size());
    m.push_back(g.input("m" + std::to_string(k), f64, {1, d}));
    v.push_back(g.input("v" + std::to_string(k), f64, {1, d}));
    mv.push_back(m.back().value());
    feeds.emplace_back("m" + std::to_string(k), row(c.mean[k]));
    feeds.emplace_back("v" + std::to_string(k), row(c.var[k]));
  }
  const Tensor out(c.f(mv));
  MomentsOf mo = propagate_moments({out}, m, m, v);
  const auto got = compile(g, {mo.mean[0], mo.var[0]}).run(feeds);

  Graph mc;
  std::vector<ir::Value> xs;
  std::vector<Feed> samples;
  for (std::size_t k = 0; k < c.mean.size(); ++k) {
    const std::int64_t d = static_cast<std::int64_t>(c.mean[k].size());
    xs.push_back(mc.input("x" + std::to_string(k), f64, {kSamples, d}).value());
    samples.emplace_back("x" + std::to_string(k), gaussian_samples(kSamples, c.mean[k], c.var[k], seed + 7 * k));
  }
  const Tensor y(c.f(xs));
  const auto stats = column_stats(compile(mc, {y}).run(samples)[0]);
  EXPECT_EQ(within_5se(got[0], got[1], stats, c.name), "");
  std::vector<ir::MomentKind> kinds;
  for (auto& s : mo.report) kinds.push_back(s.kind);
  return kinds;
}

std::vector<double> means_for(ir::Domain d, int shift) {
  std::vector<double> m;
  switch (d) {
    case ir::Domain::positive: m = {0.7, 1.0, 1.4, 1.9}; break;
    case ir::Domain::unit: m = {-0.6, -0.2, 0.3, 0.6}; break;
    case ir::Domain::nonzero: m = {-1.5, -0.6, 0.7, 1.6}; break;
    default: m = {-1.2, -0.3, 0.4, 1.1};
  }
  std::rotate(m.begin(), m.begin() + shift % 4, m.end());
  return m;
}

TEST(PramanaRules, GaussHermiteIntegratesGaussianMoments) {
  const auto& gh = ir::gauss_hermite(32);
  double s0 = 0, s2 = 0, s4 = 0;
  for (std::size_t i = 0; i < gh.nodes.size(); ++i) {
    const double t = gh.nodes[i], w = gh.weights[i];
    s0 += w, s2 += w * t * t, s4 += w * t * t * t * t;
  }
  const double rp = std::sqrt(std::numbers::pi);
  EXPECT_NEAR(s0, rp, 1e-13);
  EXPECT_NEAR(s2, rp / 2, 1e-13);
  EXPECT_NEAR(s4, 3 * rp / 4, 1e-12);
}

TEST(PramanaRules, ReluMatchesTheRectifiedGaussianClosedForm) {
  std::vector<double> ms, vs;
  for (double m : {-3.0, -1.5, -0.4, 0.0, 0.3, 1.0, 2.5})
    for (double v : {0.01, 0.25, 1.0, 4.0}) ms.push_back(m), vs.push_back(v);
  ms.push_back(-0.6), vs.push_back(1e-6);  // far in the tail (alpha = -600)
  ms.push_back(0.6), vs.push_back(1e-6);
  ms.push_back(-0.5), vs.push_back(0.0);  // deterministic elements: relu(m), 0
  ms.push_back(0.7), vs.push_back(0.0);
  Graph g;
  const std::int64_t n = static_cast<std::int64_t>(ms.size());
  Tensor m = g.input("m", f64, {n}), v = g.input("v", f64, {n});
  MomentsOf mo = propagate_moments({Tensor(relu(m))}, {m}, {m}, {v});
  ASSERT_EQ(mo.report.size(), 1u);
  EXPECT_EQ(mo.report[0].kind, ir::MomentKind::exact);
  const auto out = compile(g, {mo.mean[0], mo.var[0]})
                       .run({{"m", Array::from_vector<double>({n}, ms)}, {"v", Array::from_vector<double>({n}, vs)}});
  for (std::int64_t i = 0; i < n; ++i) {
    // E[relu X] = mu Phi(a) + s phi(a), E[relu(X)^2] = (mu^2 + s^2) Phi(a) + mu s phi(a), in
    // long double with erfc (no cancellation in Phi's tail), a = mu / s.
    const long double mu = ms[i], var = vs[i], s = std::sqrt(var);
    long double mean = mu > 0 ? mu : 0, second = mean * mean;
    if (var > 0) {
      const long double a = mu / s, cdf = 0.5L * std::erfc(-a / std::sqrt(2.0L)),
                        pdf = std::exp(-a * a / 2) / std::sqrt(2 * std::numbers::pi_v<long double>);
      mean = mu * cdf + s * pdf;
      second = (mu * mu + var) * cdf + mu * s * pdf;
    }
    const double want_var = static_cast<double>(second - mean * mean);
    SCOPED_TRACE("mu = " + std::to_string(ms[i]) + ", var = " + std::to_string(vs[i]));
    EXPECT_NEAR(out[0].span<double>()[i], static_cast<double>(mean), 1e-9 * std::max<double>(std::abs(mean), 1e-3));
    EXPECT_NEAR(out[1].span<double>()[i], want_var, 1e-9 * std::max(want_var, 1e-3 * vs[i]));
  }
}

// Every elementwise op with a rule (the registry walked): the exact and approximation rules
// at variances up to 1.5, the delta method at 1e-6 (its regime: f nearly linear over a few
// standard deviations; its first-order error is then far below the Monte Carlo noise).
TEST(PramanaRules, EveryElementwiseRuleAgreesWithMonteCarlo) {
  int checked = 0;
  std::string kinds_seen;
  for (const ir::OpDef* d : ir::all_ops()) {
    if (!d->moments || !d->traits.elementwise || d->traits.random) continue;
    const Attrs attrs = d->test.cases.empty() ? Attrs{} : d->test.cases[0].attrs;
    std::vector<DType> types;
    if (!d->test.cases.empty())
      for (const Type& t : d->test.cases[0].inputs) types.push_back(t.dtype);
    else
      types.assign(static_cast<std::size_t>(d->arity), f64);
    if (std::any_of(types.begin(), types.end(), [](DType t) { return t == f32 || t == i64; })) continue;
    SCOPED_TRACE(d->name);
    // Float operands random; a bool operand (where's condition) a fixed pattern.
    auto f = [&](const std::vector<ir::Value>& x) {
      std::vector<ir::Value> in;
      std::size_t k = 0;
      for (DType t : types) {
        if (t == f64) {
          in.push_back(x[k++]);
        } else {
          ir::Graph& g = *x[0].graph;
          const ir::Value c = g.add_constant(Array::from<bool>({1, 4}, {true, false, false, true}));
          in.push_back(ir::broadcast_to(c, x[0].shape()));
        }
      }
      return ir::make_op(*d, in, attrs);
    };
    const std::size_t random = static_cast<std::size_t>(std::count(types.begin(), types.end(), f64));
    // The rule's kind decides the variance: run once to learn it.
    Case probe{d->name, {}, {}, f};
    for (std::size_t k = 0; k < random; ++k) {
      probe.mean.push_back(means_for(d->test.domain, static_cast<int>(k)));
      probe.var.push_back(std::vector<double>(4, 1e-6));
    }
    const auto kinds = check_case(probe, 100 + checked);
    ASSERT_EQ(kinds.size(), 1u);
    kinds_seen += d->name + ":" + ir::moment_kind_name(kinds[0]) + " ";
    if (kinds[0] != ir::MomentKind::delta) {
      Case wide = probe;
      for (auto& v : wide.var)
        v = d->test.domain == ir::Domain::any || d->test.domain == ir::Domain::nonzero
                ? std::vector<double>{0.3, 0.8, 0.1, 1.5}
                : std::vector<double>(4, 0.04);
      check_case(wide, 200 + checked);
    }
    ++checked;
  }
  std::printf("%d elementwise rules checked: %s\n", checked, kinds_seen.c_str());
  EXPECT_GE(checked, 30);
  for (const char* exact : {"add:exact", "mul:exact", "relu:exact", "exp:exact", "square:exact", "tanh:approximation",
                            "sigmoid:approximation", "gelu:approximation", "softplus:approximation", "sin:delta"})
    EXPECT_NE(kinds_seen.find(exact), std::string::npos) << exact;
}

TEST(PramanaRules, SmoothActivationsHoldAtLargeVariance) {
  for (const char* op : {"sigmoid", "tanh", "softplus", "gelu", "silu"}) {
    Case c{op, {{-2.0, -0.5, 0.3, 2.5}}, {{4.0, 9.0, 2.0, 6.0}},
           [op](const std::vector<ir::Value>& x) { return ir::unary(op, x[0]); }};
    check_case(c, 31);
  }
}

TEST(PramanaRules, LinearAlgebraAndReductionsAgreeWithMonteCarlo) {
  const std::vector<double> m6 = {0.5, -1.0, 0.2, 1.3, -0.4, 0.9}, v6 = {0.3, 0.1, 1.0, 0.5, 0.2, 0.7};
  std::vector<double> wv;
  for (int i = 0; i < 18; ++i) wv.push_back(std::sin(1.7 * i + 0.3));
  const Array w = Array::from_vector<double>({6, 3}, wv);
  // Linear with a deterministic weight: mu W, var (W o W).
  auto k1 = check_case({"matmul(x, W)", {m6}, {v6}, [&](const std::vector<ir::Value>& x) {
                          return ir::matmul(x[0], x[0].graph->add_constant(w));
                        }},
                       1);
  EXPECT_EQ(k1[0], ir::MomentKind::exact);
  // Both factors random and independent: A [1, 6] @ B [6, 3] per sample.
  std::vector<double> mb(wv), vb(18, 0.2);
  check_case({"matmul(A, B)", {m6, mb}, {v6, vb}, [](const std::vector<ir::Value>& x) {
                const std::int64_t n = x[0].shape()[0];
                return ir::matmul(ir::reshape(x[0], {n, 1, 6}), ir::reshape(x[1], {n, 6, 3}));
              }},
             2);
  // Products and quotients of independent values.
  check_case({"mul", {m6, m6}, {v6, v6}, [](const std::vector<ir::Value>& x) { return ir::mul(x[0], ir::flip(x[1], {1})); }},
             3);
  check_case({"div by a constant", {m6}, {v6}, [](const std::vector<ir::Value>& x) {
                return ir::div(x[0], ir::full_like(x[0], -2.5));
              }},
             4);
  // Sums and means (independent elements), and data movement.
  check_case({"reduce_sum", {m6}, {v6}, [](const std::vector<ir::Value>& x) { return ir::reduce_sum(x[0], {1}, true); }}, 5);
  check_case({"reduce_mean", {m6}, {v6},
              [](const std::vector<ir::Value>& x) { return ir::reduce("reduce_mean", x[0], {1}, true); }},
             6);
  check_case({"data movement", {m6}, {v6}, [](const std::vector<ir::Value>& x) {
                const std::int64_t n = x[0].shape()[0];
                const ir::Value a = ir::reshape(ir::slice(x[0], {0, 1}, {n, 5}, {1, 2}), {n, 2});
                const ir::Value b = ir::flip(ir::reshape(x[0], {n, 2, 3}), {2});
                const ir::Value c = ir::broadcast_to(ir::unsqueeze(x[0], {1}), {n, 2, 6});
                return ir::concat({a, ir::reshape(b, {n, 6}), ir::reshape(c, {n, 12})}, 1);
              }},
             7);
}

// Noise sources: inverted dropout (mean 1, variance p/(1-p)), random_normal, random_uniform,
// multiplying / adding to a random value.
TEST(PramanaRules, RandomOpsAreNoiseSources) {
  const std::vector<double> m = {0.5, -1.0, 2.0, 0.1}, v = {0.2, 0.5, 0.1, 1.0};
  auto noisy = [](std::string op, Attrs extra) {
    return [op, extra](const std::vector<ir::Value>& x) {
      ir::Graph& g = *x[0].graph;
      Attrs a = extra;
      a.set("shape", x[0].shape());
      a.set("dtype", f64);
      a.set("seed", std::int64_t{11});
      std::vector<ir::Value> in;
      if (op == "dropout_mask") in.push_back(g.add_constant(Array::scalar(i64, 3)));
      const ir::Value r = ir::make_op(g, ir::op(op), in, a);
      return op == "dropout_mask" ? ir::mul(x[0], r) : ir::add(x[0], r);
    };
  };
  check_case({"dropout", {m}, {v}, noisy("dropout_mask", {{"p", 0.3}})}, 1);
  check_case({"random_normal", {m}, {v}, noisy("random_normal", {{"mean", 0.5}, {"std", 2.0}})}, 2);
  check_case({"random_uniform", {m}, {v}, noisy("random_uniform", {{"low", -1.0}, {"high", 3.0}})}, 3);
}

// A cast changes the dtype: the delta method's variance follows it.
TEST(PramanaRules, CastToF32PropagatesTheVariance) {
  Graph g;
  Tensor x = g.input("x", f64, {3}), v = g.input("v", f64, {3});
  MomentsOf mo = propagate_moments({Tensor(x.cast(f32) * 2.0f)}, {x}, {x}, {v});
  ASSERT_EQ(mo.var[0].dtype(), f32);
  auto out = compile(g, {mo.mean[0], mo.var[0]})
                 .run({{"x", Array::from<double>({3}, {0.5, -1.0, 2.0})}, {"v", Array::from<double>({3}, {0.1, 0.2, 0.3})}});
  for (int i = 0; i < 3; ++i) EXPECT_FLOAT_EQ(static_cast<float>(out[1].at(i)), static_cast<float>(4 * 0.1 * (i + 1)));
}

TEST(PramanaRules, KindsAreReportedPerNodeWithTheUsersLine) {
  Graph g;
  Tensor x = g.input("x", f64, {4});
  Tensor y = tanh(relu(x) * 2.0) + sin(x);
  MomentsOf mo = propagate_moments({y}, {x}, {x}, {Tensor(x * 0.0 + 0.1)});
  const std::string text = mo.report_text();
  EXPECT_NE(text.find("relu          exact"), std::string::npos) << text;
  EXPECT_NE(text.find("tanh          approximation"), std::string::npos) << text;
  EXPECT_NE(text.find("sin           delta"), std::string::npos) << text;
  EXPECT_NE(text.find("test_moment_rules.cpp"), std::string::npos) << text;
}

TEST(PramanaRules, AnOpWithoutARuleIsAnErrorNamingItAndTheLine) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 4});
  Tensor v = g.input("v", f64, {2, 4});
  Tensor y = softmax(x, 1);
  try {
    propagate_moments({y}, {x}, {x}, {v});
    FAIL() << "no error";
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("'softmax' has no moment rule"), std::string::npos) << msg;
    EXPECT_NE(msg.find("test_moment_rules.cpp"), std::string::npos) << msg;
  }
  Tensor z = Tensor(x > 0.0).cast(f64);
  EXPECT_THROW(propagate_moments({z}, {x}, {x}, {v}), UserError);
}

}  // namespace
}  // namespace mg

namespace mg {
namespace {

// The `moments` column walked over the registry: every float elementwise op with a JVP rule
// has a moment rule (the delta method at least), and the ops without one are listed, so a
// new op's gap shows here rather than in a user's propagation.
TEST(PramanaRules, RegistryListsOpsWithoutAMomentRule) {
  std::string without;
  int with = 0;
  for (const ir::OpDef* d : ir::all_ops()) {
    if (d->moments) {
      ++with;
      continue;
    }
    without += d->name + " ";
    EXPECT_FALSE(d->traits.elementwise && d->jvp && !d->traits.random) << d->name << " lacks the delta default";
  }
  std::printf("%d ops with a moment rule; without one (an error on a random path): %s\n", with, without.c_str());
  for (const char* must : {"matmul", "relu", "reduce_sum", "reduce_mean", "dropout_mask", "tanh", "gelu"})
    EXPECT_TRUE(ir::op(must).moments) << must;
}

}  // namespace
}  // namespace mg
