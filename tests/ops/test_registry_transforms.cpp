// Registry-driven tests of the transformation columns (issue 15). Every op, from its own
// test spec:
//  (1) JVP against f64 central differences of f along the tangent,
//  (2) <u, J v> = <J^T u, v>: the JVP rule against the VJP rule,
//  (3) jvp of grad = the double-backward Hessian-vector product (second-order ops),
//  (4) vmap(f) = f stacked over the batch, for every subset of batched operands, with the
//      batch axis in front and at the back, and the result's axis moved by out_axes.
// The completeness check (a column empty without a reason) is in test_registry_ops.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/passes/jvp.hpp"
#include "minigrad/passes/vmap.hpp"
#include "tests/ops/registry_cases.hpp"

namespace mg {
namespace {

using testing::Built;

std::vector<std::string> names_where(bool (*keep)(const ir::OpDef&)) {
  std::vector<std::string> names;
  for (const ir::OpDef* d : ir::all_ops())
    if (keep(*d)) names.push_back(d->name);
  return names;
}

// f's tangent equals its derivative: a JVP rule, not stop_gradient (zero by definition).
bool jvp_is_derivative(const ir::OpDef& d) { return d.jvp && d.arity != 0 && d.test.vjp_not_derivative.empty(); }

std::vector<Array> run(std::vector<ir::Value> outs, const rt::Bindings& b) { return rt::evaluate(outs, b); }

ir::Value dot(ir::Value a, ir::Value b) {
  I64List all;
  for (int i = 0; i < a.rank(); ++i) all.push_back(i);
  return ir::reduce_sum(ir::mul(a, b), all, false);
}

struct WithTangents {
  std::vector<ir::Value> wrt, tangents;
  std::vector<Array> tangent_values;
};
WithTangents float_inputs_with_tangents(Built& b, std::uint64_t seed) {
  WithTangents w;
  for (std::size_t k = 0; k < b.inputs.size(); ++k) {
    if (!is_float(b.inputs[k].dtype())) continue;
    w.wrt.push_back(b.inputs[k]);
    w.tangent_values.push_back(testing::sample(b.inputs[k].type(), ir::Domain::any, seed + 13 * k));
    w.tangents.push_back(b.g->add_constant(w.tangent_values.back()));
  }
  return w;
}

class JvpOp : public ::testing::TestWithParam<std::string> {
 protected:
  const ir::OpDef& def() const { return ir::op(GetParam()); }
};

TEST_P(JvpOp, MatchesCentralDifferences) {
  const ir::OpDef& d = def();
  auto cases = testing::cases_of(d);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    Built b = testing::build(d, cases[ci], 3000 + 31 * ci);
    if (!is_float(b.out.dtype())) continue;
    WithTangents w = float_inputs_with_tangents(b, 500 + ci);
    if (w.wrt.empty()) continue;
    ir::Value jv = passes::jvp(std::span(&b.out, 1), w.wrt, w.tangents)[0];
    Array analytic = run({jv}, testing::bindings_of(b))[0];
    // f(x + h v) and f(x - h v), v the tangents of every float input at once.
    const double h = 1e-6;
    auto shifted = [&](double sign) {
      rt::Bindings m = testing::bindings_of(b);
      std::size_t j = 0;
      for (std::size_t k = 0; k < b.inputs.size(); ++k) {
        if (!is_float(b.inputs[k].dtype())) continue;
        Array x = b.values[k].clone();
        for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, x.at(i) + sign * h * w.tangent_values[j].at(i));
        m[b.inputs[k].node().name] = x;
        ++j;
      }
      return run({b.out}, m)[0];
    };
    Array fp = shifted(1), fm = shifted(-1);
    for (std::int64_t i = 0; i < analytic.numel(); ++i) {
      const double numeric = (fp.at(i) - fm.at(i)) / (2 * h);
      const double err = std::fabs(analytic.at(i) - numeric) / (1 + std::fabs(numeric));
      EXPECT_LE(err, d.test.tol) << d.name << " case " << ci << " element " << i << ": jvp " << analytic.at(i)
                                 << " vs central difference " << numeric;
    }
  }
}

TEST_P(JvpOp, AgreesWithVjp) {  // <u, J v> = <J^T u, v>
  const ir::OpDef& d = def();
  if (!d.vjp) GTEST_SKIP() << d.name << " has no VJP (" << d.not_differentiable << ")";
  auto cases = testing::cases_of(d);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    Built b = testing::build(d, cases[ci], 4000 + 31 * ci);
    if (!is_float(b.out.dtype())) continue;
    WithTangents w = float_inputs_with_tangents(b, 700 + ci);
    if (w.wrt.empty()) continue;
    ir::Value u = b.g->add_constant(testing::sample(b.out.type(), ir::Domain::any, 900 + ci));
    ir::Value jv = passes::jvp(std::span(&b.out, 1), w.wrt, w.tangents)[0];
    std::vector<ir::Value> jtu = passes::vjp(std::span(&b.out, 1), std::span(&u, 1), w.wrt);
    ir::Value lhs = dot(u, jv), rhs;
    for (std::size_t k = 0; k < w.wrt.size(); ++k) {
      ir::Value t = dot(jtu[k], w.tangents[k]);
      rhs = rhs.valid() ? ir::add(rhs, t) : t;
    }
    auto r = run({lhs, rhs}, testing::bindings_of(b));
    EXPECT_NEAR(r[0].at(0), r[1].at(0), 1e-10 * (1 + std::fabs(r[1].at(0))))
        << d.name << " case " << ci << ": <u, Jv> vs <J^T u, v>";
  }
}

TEST_P(JvpOp, JvpOfGradEqualsDoubleBackward) {  // forward-over-reverse HVP = reverse-over-reverse
  const ir::OpDef& d = def();
  if (!d.vjp || d.test.grad_order < 2) GTEST_SKIP() << d.name << ": no second-order gradient in its spec";
  auto cases = testing::cases_of(d);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    Built b = testing::build(d, cases[ci], 5000 + 31 * ci);
    if (!is_float(b.out.dtype())) continue;
    WithTangents w = float_inputs_with_tangents(b, 1100 + ci);
    if (w.wrt.empty()) continue;
    ir::Value u = b.g->add_constant(testing::sample(b.out.type(), ir::Domain::any, 1300 + ci));
    std::vector<ir::Value> g = passes::grad(dot(b.out, u), w.wrt);
    std::vector<ir::Value> fwd = passes::jvp(g, w.wrt, w.tangents);
    ir::Value gv;
    for (std::size_t k = 0; k < w.wrt.size(); ++k) {
      ir::Value t = dot(g[k], w.tangents[k]);
      gv = gv.valid() ? ir::add(gv, t) : t;
    }
    std::vector<ir::Value> rev = passes::grad(gv, w.wrt);
    std::vector<ir::Value> outs = fwd;
    outs.insert(outs.end(), rev.begin(), rev.end());
    auto r = run(outs, testing::bindings_of(b));
    for (std::size_t k = 0; k < w.wrt.size(); ++k) {
      const Array& a = r[k];
      const Array& e = r[k + w.wrt.size()];
      for (std::int64_t i = 0; i < a.numel(); ++i)
        EXPECT_NEAR(a.at(i), e.at(i), 1e-9 * (1 + std::fabs(e.at(i))))
            << d.name << " case " << ci << " input " << k << " element " << i;
    }
  }
}

// ---- vmap -------------------------------------------------------------------------------

// The batched array: examples[b] placed at index b of a new axis `axis`.
Array stack(const std::vector<Array>& examples, int axis) {
  const Type& per = examples[0].type();
  Shape s = per.shape;
  s.insert(s.begin() + axis, static_cast<std::int64_t>(examples.size()));
  Array out(Type{per.dtype, s});
  std::int64_t inner = 1;
  for (std::size_t d = static_cast<std::size_t>(axis); d < per.shape.size(); ++d) inner *= per.shape[d];
  const std::int64_t outer = per.numel() / std::max<std::int64_t>(inner, 1);
  const auto n = static_cast<std::int64_t>(examples.size());
  for (std::int64_t o = 0; o < outer; ++o)
    for (std::int64_t b = 0; b < n; ++b)
      for (std::int64_t i = 0; i < inner; ++i) out.set((o * n + b) * inner + i, examples[b].at(o * inner + i));
  return out;
}

constexpr std::int64_t kBatch = 3;

// vmap of the op over every non-empty subset of its operands, batch axis in front or at the
// back, against the op run on each example; `out_back` moves the result's axis to the back.
void check_vmap(const ir::OpDef& d, const ir::OpTestCase& c, std::size_t ci, unsigned subset, bool axis_back,
                bool out_back) {
  Built b = testing::build(d, c, 6000 + 31 * ci);
  const std::size_t n = b.inputs.size();
  // Example e's value of operand k (unbatched operands: example 0's).
  std::vector<std::vector<Array>> ex(n);
  for (std::size_t k = 0; k < n; ++k)
    for (std::int64_t e = 0; e < kBatch; ++e)
      ex[k].push_back(e == 0 ? b.values[k] : testing::case_input(d, k, c.inputs[k], 6000 + 31 * ci + k + 101 * e));
  std::vector<ir::Value> args, batched;
  std::vector<passes::BatchAxis> axes;
  rt::Bindings bind = testing::bindings_of(b);
  for (std::size_t k = 0; k < n; ++k) {
    if (!(subset >> k & 1)) continue;
    const int axis = axis_back ? b.inputs[k].rank() : 0;
    Array stacked = stack(ex[k], axis);
    ir::Value in = b.g->add_input("batched" + std::to_string(k), stacked.type());
    bind["batched" + std::to_string(k)] = stacked;
    args.push_back(b.inputs[k]);
    batched.push_back(in);
    axes.push_back(axis_back ? -1 : 0);
  }
  const passes::BatchAxis out_axis = out_back ? passes::BatchAxis(-1) : passes::BatchAxis(0);
  ir::Value y = passes::vmap(std::span(&b.out, 1), args, batched, axes, std::span(&out_axis, 1))[0];
  Array got = run({y}, bind)[0];
  std::vector<Array> want;
  for (std::int64_t e = 0; e < kBatch; ++e) {
    rt::Bindings m = testing::bindings_of(b);
    for (std::size_t k = 0; k < n; ++k)
      if (subset >> k & 1) m[b.inputs[k].node().name] = ex[k][static_cast<std::size_t>(e)];
    want.push_back(run({b.out}, m)[0]);
  }
  Array expect = stack(want, out_back ? b.out.rank() : 0);
  ASSERT_EQ(to_string(got.type()), to_string(expect.type())) << d.name << " case " << ci;
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    const double g = got.at(i), e = expect.at(i);
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(g)) << d.name << " case " << ci << " element " << i;
      continue;
    }
    EXPECT_NEAR(g, e, 1e-12 * (1 + std::fabs(e)))
        << d.name << " case " << ci << " subset " << subset << (axis_back ? " axis back" : " axis 0") << " element " << i;
  }
}

class BatchOp : public ::testing::TestWithParam<std::string> {};

TEST_P(BatchOp, VmapEqualsStackingOverTheBatch) {
  const ir::OpDef& d = ir::op(GetParam());
  auto cases = testing::cases_of(d);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const std::size_t n = cases[ci].inputs.size();
    for (unsigned subset = 1; subset < (1u << n); ++subset) {
      for (bool back : {false, true}) {
        SCOPED_TRACE(d.name + " case " + std::to_string(ci) + " subset " + std::to_string(subset));
        check_vmap(d, cases[ci], ci, subset, back, back && subset == 1);
      }
    }
  }
}

auto param_name = [](const ::testing::TestParamInfo<std::string>& info) { return info.param; };
INSTANTIATE_TEST_SUITE_P(AllOps, JvpOp, ::testing::ValuesIn(names_where(jvp_is_derivative)), param_name);
// Ops with operands (creation ops have none: vmap never batches them, see below).
INSTANTIATE_TEST_SUITE_P(AllOps, BatchOp, ::testing::ValuesIn(names_where([](const ir::OpDef& d) {
                           return d.arity != 0 && d.batch;
                         })),
                         param_name);

// A random op under vmap: the draw does not depend on the batched argument, so every
// example sees the same values (as jax.vmap with an unbatched key).
TEST(VmapRandom, AnUnbatchedDrawIsSharedByTheBatch) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {4}});
  ir::Value noise = ir::make_op(g, ir::op("random_normal"), {}, {{"shape", I64List{4}}, {"dtype", f64}, {"seed", 9}});
  ir::Value y = ir::add(x, noise);
  ir::Value xs = g.add_input("xs", Type{f64, {3, 4}});
  const passes::BatchAxis zero = 0;
  ir::Value ys = passes::vmap(std::span(&y, 1), std::span(&x, 1), std::span(&xs, 1), std::span(&zero, 1),
                              std::span(&zero, 1))[0];
  Array xv = testing::sample(Type{f64, {3, 4}}, ir::Domain::any, 1);
  auto r = rt::evaluate(std::vector<ir::Value>{ys, noise}, {{"xs", xv}});
  for (std::int64_t b = 0; b < 3; ++b)
    for (std::int64_t i = 0; i < 4; ++i) EXPECT_EQ(r[0].at(b * 4 + i), xv.at(b * 4 + i) + r[1].at(i));
}

}  // namespace
}  // namespace mg
