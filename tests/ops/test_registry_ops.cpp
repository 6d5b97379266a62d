// Registry-driven op tests: every registered op, from its own test spec, gets
//  (1) its inferred type checked against what the kernel returns, on every case,
//  (2) an f64 finite-difference gradient check of first and second order (when
//      differentiable), and
//  (3) a completeness check: no registry column empty without a stated reason.
// A new op gets all of this from its registry entry alone.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tests/ops/gradcheck.hpp"
#include "tests/ops/registry_cases.hpp"

namespace mg {
namespace {

std::vector<std::string> op_names(bool only_differentiable) {
  std::vector<std::string> names;
  for (const ir::OpDef* d : ir::all_ops())
    if (!only_differentiable || d->test.grad_order > 0) names.push_back(d->name);
  return names;
}

using testing::bindings_of;
using testing::build;
using testing::Built;
using testing::cases_of;

class RegistryOp : public ::testing::TestWithParam<std::string> {
 protected:
  const ir::OpDef& def() const { return ir::op(GetParam()); }
};

TEST_P(RegistryOp, HasEveryColumnOrAReason) {
  const ir::OpDef& d = def();
  EXPECT_FALSE(d.doc.empty()) << d.name << ": no doc line";
  EXPECT_TRUE(static_cast<bool>(d.infer)) << d.name << ": no shape/dtype rule";
  EXPECT_TRUE(static_cast<bool>(d.kernel)) << d.name << ": no interpreter kernel";
  EXPECT_TRUE(d.vjp || !d.not_differentiable.empty()) << d.name << ": no VJP and no reason why";
  EXPECT_TRUE(!d.vjp || d.test.grad_order > 0 || !d.not_differentiable.empty() ||
              !d.test.vjp_not_derivative.empty())
      << d.name << ": has a VJP but its test spec checks no gradient";
  EXPECT_TRUE(d.test.vjp_not_derivative.empty() || (d.vjp && d.test.grad_order == 0))
      << d.name << ": vjp_not_derivative needs a VJP and grad_order 0";
  EXPECT_FALSE(cases_of(d).empty()) << d.name << ": no test cases";
  // Transformation columns (issue 15): forward mode wherever reverse mode is, a reason
  // where neither is, and a batching rule for every op.
  EXPECT_TRUE(!d.vjp || d.jvp || !d.no_jvp_rule.empty()) << d.name << ": has a VJP but no JVP rule and no reason why";
  EXPECT_TRUE(d.jvp || !d.not_differentiable.empty() || !d.no_jvp_rule.empty())
      << d.name << ": no JVP and no reason why";
  EXPECT_TRUE(d.batch || !d.no_batch_rule.empty()) << d.name << ": no batching rule (vmap) and no reason why";
}

TEST_P(RegistryOp, KernelMatchesInferredType) {
  const ir::OpDef& d = def();
  auto cases = cases_of(d);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    Built b = build(d, cases[ci], 1000 + ci);
    std::vector<ir::Value> outs{b.out};
    auto result = rt::evaluate(outs, bindings_of(b));
    ASSERT_EQ(result.size(), 1u);
    EXPECT_EQ(to_string(result[0].type()), to_string(b.out.type())) << d.name << " case " << ci;
    if (is_float(result[0].dtype()) && !d.traits.random) {
      for (std::int64_t i = 0; i < result[0].numel(); ++i)
        ASSERT_TRUE(std::isfinite(result[0].at(i))) << d.name << " case " << ci << ": non-finite output at " << i;
    }
  }
}

// Traits::reinterprets lets both executors alias operand 0's buffer instead of running the
// kernel (runtime/view_plan.hpp, plan_aliases): the kernel's result must be operand 0's
// bytes exactly, on every test case.
TEST_P(RegistryOp, ReinterpretsOnlyWhereTheKernelCopiesBytes) {
  const ir::OpDef& d = def();
  if (!d.traits.reinterprets) return;  // never aliases
  auto cases = cases_of(d);
  int aliased = 0;
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    Built b = build(d, cases[ci], 3000 + ci);
    ++aliased;
    std::vector<ir::Value> outs{b.out};
    const Array out = rt::evaluate(outs, bindings_of(b))[0];
    ASSERT_EQ(out.nbytes(), b.values[0].nbytes()) << d.name << " case " << ci;
    EXPECT_EQ(std::memcmp(out.raw(), b.values[0].raw(), out.nbytes()), 0) << d.name << " case " << ci;
  }
  EXPECT_GT(aliased, 0) << d.name << ": no test case";
}

class DifferentiableOp : public RegistryOp {};

TEST_P(DifferentiableOp, GradientsMatchFiniteDifferences) {
  const ir::OpDef& d = def();
  auto cases = cases_of(d);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    Built b = build(d, cases[ci], 2000 + 31 * ci);
    bool any_float = false;
    for (auto& in : b.inputs) any_float = any_float || is_float(in.dtype());
    ASSERT_TRUE(any_float) << d.name << ": differentiable op whose test case has no float input";
    auto r = testing::check_gradients(b.out, b.inputs, b.values, d.test.grad_order, d.test.tol, 77 + ci);
    EXPECT_TRUE(r.ok) << d.name << " case " << ci << " (worst rel err " << r.worst << "):\n" << r.report;
  }
}

auto param_name = [](const ::testing::TestParamInfo<std::string>& info) { return info.param; };
INSTANTIATE_TEST_SUITE_P(AllOps, RegistryOp, ::testing::ValuesIn(op_names(false)), param_name);
// Ops whose spec says they have no derivative are covered by HasEveryColumnOrAReason.
INSTANTIATE_TEST_SUITE_P(AllOps, DifferentiableOp, ::testing::ValuesIn(op_names(true)), param_name);

}  // namespace
}  // namespace mg
