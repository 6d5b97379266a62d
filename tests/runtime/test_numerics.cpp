// First-NaN root cause (runtime/glassbox/numerics.hpp): the report names the node that
// made the first non-finite value from finite operands (not one that passed it on), its
// op, text-IR line and the user's line (an adjoint node: the forward line, "while
// differentiating"), operand statistics and the op's hint; a non-finite input is reported
// as that input. Every case runs on both executors and must give the same report.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

#include "minigrad/minigrad.hpp"
#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/pass_manager.hpp"

namespace mg {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class Numerics : public ::testing::TestWithParam<Backend> {
 protected:
  // Runs `outs` of `g` with checks on and returns the report (fails when none is raised).
  static NumericsReport report_of(const Graph& g, std::vector<Tensor> outs, const std::vector<Feed>& feeds,
                                  Backend backend) {
    Executable exe = compile(g, std::move(outs), CompileOptions{.backend = backend, .check_numerics = true});
    try {
      exe.run(feeds);
    } catch (const NumericsError& e) {
      return e.report();
    }
    ADD_FAILURE() << "no NumericsError";
    return {};
  }
  // The report of this executor, checked to be the interpreter's but for its last line.
  static NumericsReport report(const Graph& g, std::vector<Tensor> outs, const std::vector<Feed>& feeds) {
    NumericsReport r = report_of(g, outs, feeds, GetParam());
    EXPECT_EQ(r.executor, GetParam() == Backend::c99 ? "c99" : "interpreter");
    if (GetParam() == Backend::c99) {
      NumericsReport ref = report_of(g, outs, feeds, Backend::interpreter);
      ref.executor = r.executor;
      EXPECT_EQ(r.text(), ref.text());
    }
    return r;
  }
};

TEST_P(Numerics, ForwardLogOfNegativeNamesTheLogNotItsConsumers) {
  Graph g;
  Tensor x = g.input("x", f32, {4});
  Tensor shifted = x - 1.0;
  Tensor y = log(shifted); const int line = __LINE__;
  Tensor z = (y * 2.0 + 1.0).sum();
  NumericsReport r = report(g, {z}, {{"x", Array::from<float>({4}, {2, 0.5f, 3, 1})}});
  EXPECT_EQ(r.op, "log");
  EXPECT_EQ(r.loc.line, static_cast<std::uint32_t>(line));
  EXPECT_EQ(r.role, ir::Role::forward);
  EXPECT_TRUE(r.differentiating.empty());
  EXPECT_EQ(r.result.nan, 1);      // log(-0.5)
  EXPECT_EQ(r.result.neg_inf, 1);  // log(0)
  ASSERT_EQ(r.operands.size(), 1u);
  EXPECT_EQ(r.operands[0].negative, 1);
  EXPECT_EQ(r.operands[0].zero, 1);
  ASSERT_EQ(r.operands[0].shown.size(), 2u);  // the operand at the bad positions
  EXPECT_EQ(r.operands[0].shown[0].first, std::vector<std::int64_t>{1});
  EXPECT_EQ(r.operands[0].shown[0].second, -0.5);
  EXPECT_EQ(r.operands[0].shown[1].first, std::vector<std::int64_t>{3});
  EXPECT_EQ(r.operands[0].shown[1].second, 0.0);
  EXPECT_NE(r.hint.find("log of a negative or zero value"), std::string::npos);
  EXPECT_NE(r.ir_line_text.find("= log("), std::string::npos) << r.ir_line_text;
  // The line number points at that line of the executed text IR.
  ASSERT_GT(r.ir_line, 0);
  std::istringstream text(ir::to_text(g.ir(), std::vector<ir::NodeId>{z.value().id}));
  std::string l;
  for (int i = 0; i < r.ir_line; ++i) std::getline(text, l);
  EXPECT_EQ(l, r.ir_line_text);
  const std::string msg = r.text();
  EXPECT_NE(msg.find(to_string(r.loc)), std::string::npos) << msg;
}

TEST_P(Numerics, ExpOverflowIsInf) {
  Graph g;
  Tensor x = g.input("x", f32, {3});
  Tensor e = exp(x * 100.0); const int line = __LINE__;
  NumericsReport r = report(g, {e.sum()}, {{"x", Array::from<float>({3}, {0.1f, 1.0f, -2.0f})}});
  EXPECT_EQ(r.op, "exp");
  EXPECT_EQ(r.loc.line, static_cast<std::uint32_t>(line));
  EXPECT_EQ(r.result.pos_inf, 1);
  EXPECT_EQ(r.result.nan, 0);
  ASSERT_EQ(r.result.shown.size(), 1u);
  EXPECT_EQ(r.result.shown[0].first, std::vector<std::int64_t>{1});
  EXPECT_NE(r.hint.find("88.7"), std::string::npos);
}

TEST_P(Numerics, BackwardOriginNamesTheForwardLineWhileDifferentiating) {
  // sqrt(0) is finite; its derivative 0.5 / sqrt(0) is not.
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Tensor s = sqrt(x); const int line = __LINE__;
  Tensor loss = s.sum();
  auto [dx] = grad(loss, {x});
  NumericsReport r = report(g, {loss, dx}, {{"x", Array::from<double>({3}, {4, 0, 1})}});
  EXPECT_EQ(r.role, ir::Role::adjoint);
  EXPECT_EQ(r.loc.line, static_cast<std::uint32_t>(line));
  EXPECT_NE(r.differentiating.find("sqrt("), std::string::npos) << r.text();
  EXPECT_NE(r.text().find("while differentiating"), std::string::npos);
  EXPECT_EQ(r.result.pos_inf, 1);
  ASSERT_EQ(r.result.shown.size(), 1u);
  EXPECT_EQ(r.result.shown[0].first, std::vector<std::int64_t>{1});
}

TEST_P(Numerics, DivisionByZeroNaNAndInf) {
  Graph g;
  Tensor a = g.input("a", f64, {2, 2});
  Tensor b = g.input("b", f64, {2, 2});
  Tensor q = a / b; const int line = __LINE__;
  NumericsReport r = report(g, {q + 1.0}, {{"a", Array::from<double>({2, 2}, {1, 0, 2, 3})},
                                           {"b", Array::from<double>({2, 2}, {1, 0, 0, 3})}});
  EXPECT_EQ(r.op, "div");
  EXPECT_EQ(r.loc.line, static_cast<std::uint32_t>(line));
  EXPECT_EQ(r.result.nan, 1);      // 0/0
  EXPECT_EQ(r.result.pos_inf, 1);  // 2/0
  ASSERT_EQ(r.operands.size(), 2u);
  EXPECT_EQ(r.operands[1].zero, 2);
  ASSERT_EQ(r.operands[1].shown.size(), 2u);
  EXPECT_EQ(r.operands[1].shown[0].first, (std::vector<std::int64_t>{0, 1}));
  EXPECT_EQ(r.operands[1].shown[1].first, (std::vector<std::int64_t>{1, 0}));
  EXPECT_NE(r.hint.find("division by zero"), std::string::npos);
}

TEST_P(Numerics, NaNInUserDataIsReportedAsThatInput) {
  Graph g;
  Tensor x = g.input("data", f32, {4});
  Tensor y = relu(x) * 3.0; const int line = __LINE__;
  NumericsReport r = report(g, {y.sum()}, {{"data", Array::from<float>({4}, {1, 2, static_cast<float>(kNaN), 4})}});
  EXPECT_EQ(r.input_name, "data");
  EXPECT_EQ(r.op, "input");
  EXPECT_EQ(r.result.nan, 1);
  ASSERT_EQ(r.result.shown.size(), 1u);
  EXPECT_EQ(r.result.shown[0].first, std::vector<std::int64_t>{2});
  EXPECT_NE(r.first_use.find(":" + std::to_string(line)), std::string::npos) << r.text();
  EXPECT_NE(r.text().find("graph input 'data' (user data)"), std::string::npos) << r.text();
}

TEST_P(Numerics, InsideAFusedNodeNamesTheOpInTheRegion) {
  Graph g;
  Tensor x = g.input("x", f32, {64});
  Tensor a = x * 2.0 + 1.0;
  Tensor b = sqrt(a); const int line = __LINE__;
  Tensor c = tanh(b) * 0.5;
  g.ir().outputs = {c.value().id};
  auto fused = passes::run_pipeline(g.ir(), "fuse").graph;
  bool has_fused = false;
  for (ir::NodeId id = 0; id < fused->size(); ++id) has_fused |= fused->node(id).op_name() == "fused";
  ASSERT_TRUE(has_fused) << ir::to_text(*fused);
  Array xs(Type{f32, {64}});
  for (std::int64_t i = 0; i < 64; ++i) xs.data<float>()[i] = i == 7 ? -3.0f : 1.0f;  // 2 * -3 + 1 < 0
  rt::Bindings b_in{{"x", xs}};
  rt::Executable exe = rt::compile(*fused, fused->outputs, {}, GetParam(), rt::Checks{.numerics = true});
  try {
    exe.run(b_in);
    FAIL() << "no NumericsError";
  } catch (const NumericsError& e) {
    const NumericsReport& r = e.report();
    EXPECT_EQ(r.executor, GetParam() == Backend::c99 ? "c99" : "interpreter");
    EXPECT_EQ(r.op, "sqrt") << r.text();
    EXPECT_EQ(r.loc.line, static_cast<std::uint32_t>(line));
    EXPECT_NE(r.inside.find("fused("), std::string::npos) << r.text();
    EXPECT_EQ(r.result.nan, 1);
    ASSERT_EQ(r.operands.size(), 1u);
    EXPECT_EQ(r.operands[0].negative, 1);
    ASSERT_EQ(r.operands[0].shown.size(), 1u);
    EXPECT_EQ(r.operands[0].shown[0], (std::pair<std::vector<std::int64_t>, double>{{7}, -5.0}));
    // The reported line is that op's line inside the region in the executed text IR.
    std::istringstream text(ir::to_text(*fused, fused->outputs));
    std::string l;
    for (int i = 0; i < r.ir_line; ++i) std::getline(text, l);
    EXPECT_EQ(l, r.ir_line_text);
    EXPECT_NE(l.find("= sqrt("), std::string::npos) << l;
  }
}

TEST_P(Numerics, OffByDefaultAndOnByEnvironment) {
  Graph g;
  Tensor x = g.input("x", f32, {2});
  Tensor y = log(x);
  const std::vector<Feed> feeds{{"x", Array::from<float>({2}, {-1, 1})}};
  Executable plain = compile(g, {y}, GetParam());
  EXPECT_TRUE(std::isnan(plain.run(feeds)[0].at({0})));  // no check: NaN comes out
  ::setenv("MG_CHECK_NUMERICS", "1", 1);
  Executable env = compile(g, {y}, GetParam());
  ::unsetenv("MG_CHECK_NUMERICS");
  EXPECT_THROW(env.run(feeds), NumericsError);
  // Finite runs pass with checks on.
  Executable checked = compile(g, {y}, CompileOptions{.backend = GetParam(), .check_numerics = true});
  EXPECT_NO_THROW(checked.run({{"x", Array::from<float>({2}, {1, 2})}}));
}

TEST(NumericsRegion, InsideARegionRunByItsKernelNamesTheOpInTheBody) {
  // A test-only op running its region on its input, as a loop (scan) runs its body.
  static const ir::OpDef& apply = []() -> const ir::OpDef& {
    ir::op("exp");
    ir::OpDef& d = ir::define_op("test_numerics_apply_region");
    d.doc = "applies region 0 to the input (test only)";
    d.infer = [](std::span<const Type> in, const Attrs&) { return in[0]; };
    d.kernel = [](const ir::KernelArgs& k) {
      std::vector<Array> args{*k.in[0]};
      std::vector<Array> r = (*k.run_region)(0, args);
      std::memcpy(k.out.raw(), r.at(0).raw(), k.out.nbytes());
    };
    d.check_regions = [](const ir::Node& n, std::span<const Type>) {
      if (n.regions.size() != 1) throw ir::TypeRuleError{"expects one region"};
    };
    d.not_differentiable = "test op";
    return d;
  }();
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {3}});
  ir::Value y = ir::make_op(apply, {x});
  auto body = std::make_unique<ir::Graph>();
  {
    LocScope at(SourceLoc{"loop.cpp", 42, 3}, true);
    ir::Value a = body->add_input("a", Type{f64, {3}});
    body->outputs = {ir::add_scalar(ir::log(a), 1.0).id};
  }
  g.mutable_node(y.id).regions.push_back(std::move(body));
  ir::Value z = ir::exp(y);
  rt::Executable exe = rt::compile(g, {z.id}, {}, Backend::interpreter, rt::Checks{.numerics = true});
  try {
    exe.run({{"x", Array::from<double>({3}, {1, -2, 3})}});
    FAIL() << "no NumericsError";
  } catch (const NumericsError& e) {
    const NumericsReport& r = e.report();
    EXPECT_EQ(r.op, "log") << r.text();
    EXPECT_EQ(r.loc.line, 42u);
    EXPECT_NE(r.inside.find("test_numerics_apply_region(%x)"), std::string::npos) << r.text();
    EXPECT_EQ(r.result.nan, 1);
    std::istringstream text(ir::to_text(g, std::vector<ir::NodeId>{z.id}));
    std::string l;
    for (int i = 0; i < r.ir_line; ++i) std::getline(text, l);
    EXPECT_EQ(l, r.ir_line_text);
    EXPECT_NE(l.find("= log("), std::string::npos) << r.text();
  }
}

INSTANTIATE_TEST_SUITE_P(Executors, Numerics, ::testing::Values(Backend::interpreter, Backend::c99),
                         [](const auto& info) { return info.param == Backend::interpreter ? "interpreter" : "c99"; });

}  // namespace
}  // namespace mg
