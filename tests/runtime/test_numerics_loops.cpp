// First-NaN root cause inside loop bodies (runtime/glassbox/numerics.hpp): a NaN or Inf
// born inside the body of a real mg::scan or mg::while_loop, forward or in the backward
// scan's body, is reported as the node INSIDE the body (its op, its line in the executed
// text IR, the user's line, the loop step), not as the loop; both executors give the same
// report (the C99 backend compiles each body node's check site in).
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

#include "minigrad/minigrad.hpp"
#include "minigrad/ir/printer.hpp"

namespace mg {
namespace {

class NumericsLoops : public ::testing::TestWithParam<Backend> {
 protected:
  static NumericsReport report_of(const Graph& g, const std::vector<Tensor>& outs, const std::vector<Feed>& feeds,
                                  Backend backend) {
    Executable exe = compile(g, outs, CompileOptions{.backend = backend, .check_numerics = true});
    try {
      exe.run(feeds);
    } catch (const NumericsError& e) {
      return e.report();
    }
    ADD_FAILURE() << "no NumericsError";
    return {};
  }
  // This executor's report, checked to be the interpreter's (but for the executor's name).
  static NumericsReport report(const Graph& g, const std::vector<Tensor>& outs, const std::vector<Feed>& feeds) {
    NumericsReport r = report_of(g, outs, feeds, GetParam());
    EXPECT_EQ(r.executor, GetParam() == Backend::c99 ? "c99" : "interpreter");
    if (GetParam() == Backend::c99) {
      NumericsReport ref = report_of(g, outs, feeds, Backend::interpreter);
      ref.executor = r.executor;
      EXPECT_EQ(r.text(), ref.text());
      EXPECT_TRUE(r.same_root_cause(ref));
    }
    // The cited line is that line of the executed graph's text IR, regions included.
    std::vector<ir::NodeId> roots;
    for (const Tensor& t : outs) roots.push_back(t.value().id);
    std::istringstream text(ir::to_text(g.ir(), roots));
    std::string l;
    for (int i = 0; i < r.ir_line; ++i) std::getline(text, l);
    EXPECT_GT(r.ir_line, 0) << r.text();
    EXPECT_EQ(l, r.ir_line_text) << r.text();
    return r;
  }
  static Array steps(std::int64_t T, std::int64_t n, double bad_value, std::int64_t bad_step, std::int64_t bad_at) {
    Array a(Type{f64, {T, n}});
    for (std::int64_t i = 0; i < T * n; ++i) a.data<double>()[i] = 1.0 + 0.1 * static_cast<double>(i);
    a.data<double>()[bad_step * n + bad_at] = bad_value;
    return a;
  }
};

TEST_P(NumericsLoops, ScanForwardNaNNamesTheLogInTheBody) {
  Graph g;
  Tensor xs = g.input("xs", f64, {5, 3});
  Tensor h0 = g.input("h0", f64, {3});
  int log_line = 0;
  auto [hT, hs] = scan([&](const Tensor& h, const Tensor& x) {
    Tensor l = log(x); log_line = __LINE__;
    return std::pair{h + l, h};
  }, h0, xs);
  NumericsReport r = report(g, {hT.sum()}, {{"xs", steps(5, 3, -2.0, 3, 1)}, {"h0", Array::from<double>({3}, {0, 0, 0})}});
  EXPECT_EQ(r.op, "log") << r.text();
  EXPECT_EQ(r.loc.line, static_cast<std::uint32_t>(log_line));
  EXPECT_EQ(r.role, ir::Role::forward);
  EXPECT_NE(r.ir_line_text.find("= log("), std::string::npos) << r.text();
  ASSERT_EQ(r.region_path.size(), 1u) << r.text();
  EXPECT_EQ(r.region_path[0].iteration, 3);  // the step whose x holds the negative value
  EXPECT_NE(r.inside.find("= scan("), std::string::npos) << r.text();
  EXPECT_NE(r.text().find("iteration 3"), std::string::npos) << r.text();
  EXPECT_EQ(r.result.nan, 1);
  ASSERT_EQ(r.operands.size(), 1u);
  EXPECT_EQ(r.operands[0].negative, 1);
  ASSERT_EQ(r.operands[0].shown.size(), 1u);
  EXPECT_EQ(r.operands[0].shown[0], (std::pair<std::vector<std::int64_t>, double>{{1}, -2.0}));
  EXPECT_NE(r.hint.find("log of a negative"), std::string::npos);
}

TEST_P(NumericsLoops, ScanForwardInfNamesTheExpInTheBody) {
  Graph g;
  Tensor xs = g.input("xs", f64, {4, 2});
  Tensor h0 = g.input("h0", f64, {2});
  int exp_line = 0;
  auto [hT, hs] = scan([&](const Tensor& h, const Tensor& x) {
    Tensor a = h * 0.5 + x;
    Tensor e = exp(a * 100.0); exp_line = __LINE__;  // overflows at step 2, element 0
    return std::pair{a, e};
  }, h0, xs);
  NumericsReport r = report(g, {hs.sum()}, {{"xs", steps(4, 2, 9.0, 2, 0)}, {"h0", Array::from<double>({2}, {0, 0})}});
  EXPECT_EQ(r.op, "exp") << r.text();
  EXPECT_EQ(r.loc.line, static_cast<std::uint32_t>(exp_line));
  ASSERT_EQ(r.region_path.size(), 1u);
  EXPECT_EQ(r.region_path[0].iteration, 2);
  EXPECT_EQ(r.result.pos_inf, 1);
  EXPECT_EQ(r.result.nan, 0);
  ASSERT_EQ(r.result.shown.size(), 1u);
  EXPECT_EQ(r.result.shown[0].first, std::vector<std::int64_t>{0});
}

TEST_P(NumericsLoops, ScanBackwardInfNamesTheAdjointInTheReverseBody) {
  // sqrt(0) is finite; its derivative 0.5 / sqrt(0) is not: born in the backward scan's body.
  Graph g;
  Tensor xs = g.input("xs", f64, {4, 3});
  Tensor h0 = g.input("h0", f64, {3});
  int sqrt_line = 0;
  auto [hT, hs] = scan([&](const Tensor& h, const Tensor& x) {
    Tensor s = sqrt(x); sqrt_line = __LINE__;
    return std::pair{h + s, h};
  }, h0, xs);
  Tensor loss = hT.sum();
  auto [dxs] = grad(loss, {xs});
  NumericsReport r = report(g, {loss, dxs}, {{"xs", steps(4, 3, 0.0, 1, 2)}, {"h0", Array::from<double>({3}, {0, 0, 0})}});
  EXPECT_EQ(r.role, ir::Role::adjoint) << r.text();
  EXPECT_EQ(r.loc.line, static_cast<std::uint32_t>(sqrt_line));
  EXPECT_NE(r.differentiating.find("sqrt("), std::string::npos) << r.text();
  EXPECT_NE(r.text().find("while differentiating"), std::string::npos);
  ASSERT_EQ(r.region_path.size(), 1u) << r.text();
  EXPECT_NE(r.inside.find("= scan("), std::string::npos) << r.text();
  EXPECT_EQ(r.region_path[0].iteration, 2);  // the reverse scan runs steps 3, 2, 1: step 1 is its third
  EXPECT_EQ(r.result.pos_inf, 1);
  ASSERT_EQ(r.result.shown.size(), 1u);
  EXPECT_EQ(r.result.shown[0].first, std::vector<std::int64_t>{2});
}

TEST_P(NumericsLoops, ScanBackwardNaNNamesTheAdjointInTheReverseBody) {
  // sqrt's adjoint is (g * 0.5) / sqrt(x): with a zero cotangent at x = 0 it is 0 / 0,
  // NaN made from finite operands in the backward scan's body (the forward is finite).
  Graph g;
  Tensor xs = g.input("xs", f64, {3, 2});
  Tensor h0 = g.input("h0", f64, {2});
  int sqrt_line = 0;
  auto [hT, hs] = scan([&](const Tensor& h, const Tensor& x) {
    Tensor s = sqrt(x); sqrt_line = __LINE__;
    return std::pair{h + s * 0.0 + x, h};
  }, h0, xs);
  Tensor loss = hT.sum();
  auto [dxs] = grad(loss, {xs});
  NumericsReport r = report(g, {loss, dxs}, {{"xs", steps(3, 2, 0.0, 0, 1)}, {"h0", Array::from<double>({2}, {0, 0})}});
  EXPECT_EQ(r.op, "div") << r.text();
  EXPECT_EQ(r.role, ir::Role::adjoint);
  EXPECT_EQ(r.loc.line, static_cast<std::uint32_t>(sqrt_line));
  EXPECT_NE(r.differentiating.find("sqrt("), std::string::npos) << r.text();
  ASSERT_EQ(r.region_path.size(), 1u) << r.text();
  EXPECT_EQ(r.region_path[0].iteration, 2);  // the reverse scan reaches step 0 last
  EXPECT_EQ(r.result.nan, 1);
  EXPECT_EQ(r.result.pos_inf, 0);
  ASSERT_EQ(r.result.shown.size(), 1u);
  EXPECT_EQ(r.result.shown[0].first, std::vector<std::int64_t>{1});
}

TEST_P(NumericsLoops, WhileLoopBodyNaNAndInf) {
  for (bool inf : {false, true}) {
    Graph g;
    Tensor y0 = g.input("y0", f64, {3});
    int body_line = 0;
    auto body = [&](const Tensor& y) {
      Tensor e = exp(y), l = y + log(y - 1.5); body_line = __LINE__;
      return inf ? e : l;
    };
    Tensor y = while_loop([&](const Tensor& y) { return Tensor(y.sum() < 1e300); }, body, y0, 20);
    // NaN: y = 2 -> 2 + log(0.5) = 1.31 -> log(-0.19) = NaN at step 1.
    // Inf: y = 2 -> e^2 = 7.4 -> e^7.4 = 1636 -> e^1636 = Inf at step 2.
    NumericsReport r = report(g, {y * 2.0}, {{"y0", Array::from<double>({3}, {2, 2, 2})}});
    EXPECT_EQ(r.op, inf ? "exp" : "log") << r.text();
    EXPECT_EQ(r.loc.line, static_cast<std::uint32_t>(body_line));
    ASSERT_EQ(r.region_path.size(), 1u) << r.text();
    EXPECT_EQ(r.region_path[0].region, 1u);  // the body, not the condition
    EXPECT_EQ(r.region_path[0].iteration, inf ? 2 : 1);
    EXPECT_NE(r.inside.find("= while_loop("), std::string::npos) << r.text();
    EXPECT_EQ(inf ? r.result.pos_inf : r.result.nan, 3);
  }
}

TEST_P(NumericsLoops, NestedLoopsGiveThePathDownToTheNode) {
  // A scan whose body runs a while_loop: the NaN is born in the inner loop's body.
  Graph g;
  Tensor xs = g.input("xs", f64, {3, 2});
  Tensor h0 = g.input("h0", f64, {2});
  int log_line = 0;
  auto [hT, hs] = scan([&](const Tensor& h, const Tensor& x) {
    Tensor y = while_loop([&](const Tensor& y) { return Tensor(y.sum() < 100.0); },
                          [&](const Tensor& y) { Tensor l = y * 2.0 + log(y * x); log_line = __LINE__; return l; },
                          x * 0.0 + 1.0, 10);
    return std::pair{h + y, h};
  }, h0, xs);
  NumericsReport r = report(g, {hT.sum()}, {{"xs", steps(3, 2, -1.0, 1, 0)}, {"h0", Array::from<double>({2}, {0, 0})}});
  EXPECT_EQ(r.op, "log") << r.text();
  EXPECT_EQ(r.loc.line, static_cast<std::uint32_t>(log_line));
  ASSERT_EQ(r.region_path.size(), 2u) << r.text();
  EXPECT_EQ(r.region_path[0].iteration, 1);  // the scan's second step
  EXPECT_EQ(r.region_path[1].region, 1u);    // the while_loop's body, its first run
  EXPECT_EQ(r.region_path[1].iteration, 0);
  EXPECT_NE(r.inside.find("= while_loop("), std::string::npos) << r.text();
  EXPECT_LT(r.inside.find("= while_loop("), r.inside.find("= scan(")) << r.text();  // innermost first
  EXPECT_NE(r.ir_line_text.find("= log("), std::string::npos) << r.text();
}

TEST_P(NumericsLoops, NaNInUserDataReadOnlyByTheLoopIsThatInput) {
  Graph g;
  Tensor xs = g.input("xs", f64, {4, 3});
  Tensor h0 = g.input("h0", f64, {3});
  auto [hT, hs] = scan([&](const Tensor& h, const Tensor& x) { return std::pair{h + x * 2.0, h}; }, h0, xs);
  NumericsReport r = report(g, {hT.sum()}, {{"xs", steps(4, 3, std::numeric_limits<double>::quiet_NaN(), 2, 0)},
                                            {"h0", Array::from<double>({3}, {0, 0, 0})}});
  EXPECT_EQ(r.input_name, "xs") << r.text();
  EXPECT_TRUE(r.region_path.empty());
  EXPECT_EQ(r.result.nan, 1);
  ASSERT_EQ(r.result.shown.size(), 1u);
  EXPECT_EQ(r.result.shown[0].first, (std::vector<std::int64_t>{2, 0}));
}

TEST_P(NumericsLoops, ANaNThatNeverLeavesTheBodyIsFound) {
  // The NaN of log(x) only decides a comparison: the loop's values stay finite, so only a
  // check inside the body can see it (in C99, a check site compiled into the body).
  Graph g;
  Tensor xs = g.input("xs", f64, {4, 3});
  Tensor h0 = g.input("h0", f64, {3});
  int log_line = 0;
  auto [hT, hs] = scan([&](const Tensor& h, const Tensor& x) {
    Tensor m = log(x).sum(); log_line = __LINE__;
    return std::pair{Tensor(where(m > 0.0, h + 1.0, h)), h};
  }, h0, xs);
  NumericsReport r = report(g, {hT.sum()}, {{"xs", steps(4, 3, -1.0, 2, 2)}, {"h0", Array::from<double>({3}, {0, 0, 0})}});
  EXPECT_EQ(r.op, "log") << r.text();
  EXPECT_EQ(r.loc.line, static_cast<std::uint32_t>(log_line));
  ASSERT_EQ(r.region_path.size(), 1u);
  EXPECT_EQ(r.region_path[0].iteration, 2);
  EXPECT_EQ(r.result.nan, 1);
}

TEST_P(NumericsLoops, ANaNMaskedInsideOneElementwiseChainIsFound) {
  // log(x) is NaN where x < 0 but `where` drops it: the chain's value is finite. The C99
  // backend inlines the log into the where's loop, so it checks the chain's temporaries.
  for (bool in_loop : {false, true}) {
    Graph g;
    Tensor xs = g.input("xs", f64, {4, 3});
    Tensor h0 = g.input("h0", f64, {3});
    int log_line = 0;
    Tensor out;
    if (in_loop) {
      auto [hT, hs] = scan([&](const Tensor& h, const Tensor& x) {
        Tensor m = where(x > 0.0, log(x), x); log_line = __LINE__;
        return std::pair{h + m, h};
      }, h0, xs);
      out = hT.sum();
    } else {
      Tensor m = where(xs > 0.0, log(xs), xs); log_line = __LINE__;
      out = m.sum() + h0.sum();
    }
    NumericsReport r = report(g, {out}, {{"xs", steps(4, 3, -1.0, 2, 2)}, {"h0", Array::from<double>({3}, {0, 0, 0})}});
    EXPECT_EQ(r.op, "log") << r.text();
    EXPECT_EQ(r.loc.line, static_cast<std::uint32_t>(log_line));
    EXPECT_EQ(r.region_path.size(), in_loop ? 1u : 0u);
    EXPECT_EQ(r.result.nan, 1);
  }
}

// Zero cost when off: the C99 source compiled without checks has no check code and is the
// checked source minus its checks, so it is the source the emitter wrote before checks
// existed; with checks, the loop bodies hold check sites.
TEST(NumericsLoopsSource, OffSourceHasNoCheckCode) {
  Graph g;
  Tensor xs = g.input("xs", f32, {6, 4});
  Tensor h0 = g.input("h0", f32, {4});
  Tensor w = g.input("w", f32, {4, 4});
  auto [hT, hs] = scan([&](const Tensor& h, const Tensor& x) {
    Tensor h2 = tanh(matmul(h, w) + x);
    return std::pair{h2, h2};
  }, h0, xs);
  Tensor loss = (hs * hs).sum();
  auto [dw] = grad(loss, {w});
  const std::vector<ir::NodeId> outs{loss.value().id, dw.value().id};
  auto source = [&](bool checks) {
    rt::Executable exe = rt::compile(g.ir(), outs, {}, Backend::c99, rt::Checks{.numerics = checks});
    std::ifstream f(exe.source_path());
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  };
  const std::string off = source(false), on = source(true);
  for (const char* check : {"mg_finite", "mg_nonfinite", "mg_bad", "return -"})
    EXPECT_EQ(off.find(check), std::string::npos) << check;
  // Inside the two scans' bodies (forward, backward): checks returning site codes.
  const std::string site = "return -" + std::to_string(g.ir().size() + 1) + ";";
  EXPECT_NE(on.find(site), std::string::npos);
  // The checked source minus its checks: the check functions (and the blank line after
  // each), the lines using them; bare braces and OpenMP pragmas are dropped from both
  // (a chain whose temporaries are checked is a block with a reduction clause), and so is
  // what the steps' split into functions writes (emit_steps.cpp: functions of ~300 lines,
  // so checked steps, being longer, split elsewhere): signatures, calls, `return 0;`,
  // `(void)` and pointer declarations, blank lines. The steps' code must match line for line.
  auto outlining = [](const std::string& t) {
    if (t.rfind("static MG_NOINLINE int mg_step", 0) == 0 || t.find("_run's steps, in runs of") != std::string::npos || t.rfind("{ const int mg_rc = mg_step", 0) == 0 ||
        t == "return 0;" || t.rfind("(void)", 0) == 0 || t.empty())
      return true;
    const std::size_t decl = t.find("* const v");  // `const float* const v3 = ...;`
    return decl != std::string::npos && decl < 16 && t.find(" = ") != std::string::npos && t.back() == ';' &&
           t.find('[') == std::string::npos;
  };
  auto normalised = [&](const std::string& src) {
    std::istringstream in(src);
    std::string out, line;
    bool in_fn = false, after_fn = false;
    while (std::getline(in, line)) {
      const std::string t = line.substr(std::min(line.find_first_not_of(' '), line.size()));
      if (t.rfind("static int mg_finite_", 0) == 0 || t.rfind("static inline int mg_nonfinite_", 0) == 0) in_fn = true;
      const bool skip = in_fn || (after_fn && t.empty()) || t == "{" || t == "}" || t.rfind("MG_OMP(", 0) == 0 ||
                        t.find("mg_finite_") != std::string::npos || t.find("mg_bad") != std::string::npos ||
                        outlining(t);
      after_fn = in_fn && line == "}";
      if (after_fn) in_fn = false;
      if (!skip) out += t + "\n";
    }
    return out;
  };
  const std::string stripped = normalised(on);
  EXPECT_GT(on.size(), off.size());
  EXPECT_TRUE(stripped == normalised(off)) << "the off source differs from the checked one minus its checks";
}

INSTANTIATE_TEST_SUITE_P(Executors, NumericsLoops, ::testing::Values(Backend::interpreter, Backend::c99),
                         [](const auto& info) { return info.param == Backend::interpreter ? "interpreter" : "c99"; });

}  // namespace
}  // namespace mg
