// Known values for the binary elementwise ops and `where` (ir/ops/binary.cpp), through the
// interpreter, and for NumPy broadcasting of the DSL's operators (dsl/expr.hpp). Expected
// values are hand-computed or constants computed offline at 50 digits, never the kernel's
// own library call. Each case runs inside a 1-D array long enough for the SIMD body and its
// tail, and alone on 0-d tensors; f32 next to f64, exact i64 (values beyond 2^53, where a
// detour through double would show), IEEE edge cases (inf, nan, -0), empty shapes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <minigrad/minigrad.hpp>

#include "minigrad/ir/ops.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

using ir::Value;
struct Case { double a, b, want; };
struct ICase { std::int64_t a, b, want; };
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr std::int64_t k2p53 = std::int64_t{1} << 53;

bool is_predicate(std::string_view op) {
  static const std::set<std::string_view> p{"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or"};
  return p.count(op) > 0;
}

// op(x0, x1, ...) on the interpreter.
Array run(std::string_view op, const std::vector<Array>& xs) {
  ir::Graph g;
  std::vector<Value> in;
  rt::Bindings b;
  const char* names[] = {"x0", "x1", "x2"};  // not "x" + to_string(i): GCC 12 -Wrestrict false positive
  for (std::size_t i = 0; i < xs.size(); ++i) {
    in.push_back(g.add_input(names[i], xs[i].type()));
    b.emplace(names[i], xs[i]);
  }
  std::vector<Value> outs{ir::make_op(ir::op(op), in)};
  return rt::evaluate(outs, b).at(0);
}

// nan matches nan; infinities and zeros match exactly; else |got - want| <= rel * |want|.
::testing::AssertionResult close(double got, double want, double rel) {
  bool ok = std::isnan(want)                       ? std::isnan(got)
            : (std::isinf(want) || want == 0)      ? got == want
                                                   : std::abs(got - want) <= rel * std::abs(want);
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want;
}

// op(a, b) = want within `ulps` units of T's epsilon, in dtype T (bool out for predicates).
template <class T>
void check(std::string_view op, const std::vector<Case>& cases, double ulps = 4) {
  const double rel = ulps * std::numeric_limits<T>::epsilon();
  const char* dt = std::is_same_v<T, float> ? "f32" : "f64";
  const DType out_dtype = is_predicate(op) ? DType::boolean : dtype_of<T>();
  const std::size_t n = std::max<std::size_t>(67, cases.size());
  std::vector<T> a(n), b(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<T>(cases[i % cases.size()].a);
    b[i] = static_cast<T>(cases[i % cases.size()].b);
  }
  const Shape shape{static_cast<std::int64_t>(n)};
  Array out = run(op, {Array::from_vector<T>(shape, a), Array::from_vector<T>(shape, b)});
  ASSERT_EQ(out.type(), (Type{out_dtype, shape}));
  std::vector<bool> failed(cases.size());  // one report per case, not per copy
  for (std::size_t i = 0; i < n; ++i) {
    const Case& c = cases[i % cases.size()];
    auto ok = close(out.at(static_cast<std::int64_t>(i)), c.want, rel);
    if (!ok && !failed[i % cases.size()])
      ADD_FAILURE() << op << "(" << c.a << ", " << c.b << ") " << dt << " [" << i << "]: " << ok.message();
    failed[i % cases.size()] = failed[i % cases.size()] || !ok;
  }
  for (const Case& c : cases) {
    Array s = run(op, {Array::from_vector<T>({}, {static_cast<T>(c.a)}), Array::from_vector<T>({}, {static_cast<T>(c.b)})});
    ASSERT_EQ(s.type(), (Type{out_dtype, {}}));
    EXPECT_TRUE(close(s.at(0), c.want, rel)) << op << "(" << c.a << ", " << c.b << ") " << dt << " 0-d";
  }
}

void check_both(std::string_view op, const std::vector<Case>& cases, double ulps = 4) {
  check<double>(op, cases, ulps);
  check<float>(op, cases, ulps);
}

// Exact i64 results, read back as integers (bool for predicates).
void check_i64(std::string_view op, const std::vector<ICase>& cases) {
  std::vector<std::int64_t> a, b;
  for (const ICase& c : cases) a.push_back(c.a), b.push_back(c.b);
  const Shape shape{static_cast<std::int64_t>(cases.size())};
  Array out = run(op, {Array::from_vector(shape, a), Array::from_vector(shape, b)});
  const bool pred = is_predicate(op);
  ASSERT_EQ(out.dtype(), pred ? DType::boolean : i64);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    std::int64_t got = pred ? out.data<std::uint8_t>()[i] : out.data<std::int64_t>()[i];
    EXPECT_EQ(got, cases[i].want) << op << "(" << cases[i].a << ", " << cases[i].b << ") i64";
  }
}

TEST(BinaryValues, AddSubMul) {
  check_both("add", {{1, 2, 3}, {0.1, 0.2, 0.30000000000000004}, {-0.0, 0, 0}, {kInf, 1, kInf},
                     {kInf, -kInf, kNan}, {kNan, 1, kNan}, {1, kNan, kNan}});
  check<double>("add", {{1e308, 1e308, kInf}, {1e-300, -1e-300, 0}});
  check_i64("add", {{2, 3, 5}, {-7, 4, -3}, {k2p53, 1, k2p53 + 1}});
  check_both("sub", {{5, 3, 2}, {0.5, 0.25, 0.25}, {0, 0, 0}, {kInf, kInf, kNan}, {-kInf, kInf, -kInf},
                     {1, kNan, kNan}});
  check_i64("sub", {{3, 10, -7}, {k2p53 + 1, k2p53, 1}, {-k2p53, 1, -k2p53 - 1}});
  check_both("mul", {{2, 3.5, 7}, {-1.5, 4, -6}, {0, kInf, kNan}, {-2, kInf, -kInf}, {kNan, 0, kNan}});
  check<double>("mul", {{1e200, 1e200, kInf}, {1e-200, 1e-200, 0}});
  check_i64("mul", {{-3, 4, -12}, {3037000499, 3037000499, 9223372030926249001}, {k2p53 + 1, 3, 3 * k2p53 + 3}});
  EXPECT_TRUE(std::signbit(run("mul", {Array::scalar(f64, -1), Array::scalar(f64, 0)}).at(0)));  // -1*0 = -0
}

TEST(BinaryValues, DivIsIeee) {
  check_both("div", {{7, 2, 3.5}, {1, 3, 0.3333333333333333}, {2, 3, 0.6666666666666666}, {1, 0, kInf},
                     {-1, 0, -kInf}, {1, -0.0, -kInf}, {0, 0, kNan}, {kInf, kInf, kNan}, {1, kInf, 0},
                     {kNan, 1, kNan}, {-6, -4, 1.5}});
}

TEST(BinaryValues, PowFollowsCAndPyTorch) {
  check_both("pow", {{2, 10, 1024}, {2, 0.5, 1.4142135623730951}, {4, -0.5, 0.5}, {3, -2, 0.1111111111111111},
                     {1.5, 2.5, 2.7556759606310752}, {0.5, -3.5, 11.313708498984761}, {9, 0.5, 3},
                     {-2, 3, -8}, {-2, 2, 4}, {-8, 1.0 / 3, kNan}, {-1.5, 0.5, kNan}, {2, kNan, kNan}});
  // IEEE/C special cases that torch.pow matches.
  check_both("pow", {{0, 0, 1}, {0, 2, 0}, {0, 3, 0}, {-0.0, 2, 0}, {0, -1, kInf}, {0, -2, kInf},
                     {kNan, 0, 1}, {1, kNan, 1}, {1, kInf, 1}, {-1, kInf, 1}, {0.5, kInf, 0}, {2, kInf, kInf},
                     {2, -kInf, 0}, {0.5, -kInf, kInf}, {kInf, -1, 0}, {kInf, 2, kInf}, {-kInf, 3, -kInf},
                     {-kInf, 2, kInf}, {-kInf, -1, 0}});
  check<double>("pow", {{10, 20, 1e20}, {10, -20, 1e-20}, {2, 100, 1.2676506002282294e30},
                        {1.1, 300, 2617010996188.4634}, {2, -1074, 4.9406564584124654e-324}, {10, 400, kInf}});
  check<float>("pow", {{10, 20, 1e20}, {2, 100, 1.2676506002282294e30}, {10, 39, kInf}});
}

TEST(BinaryValues, MaximumMinimumPropagateNan) {
  check_both("maximum", {{1, 2, 2}, {2, 1, 2}, {-1, -1, -1}, {kNan, 1, kNan}, {1, kNan, kNan}, {kNan, kNan, kNan},
                         {-kInf, kInf, kInf}, {-kInf, kNan, kNan}, {-0.0, 0, 0}});
  check_both("minimum", {{1, 2, 1}, {2, 1, 1}, {-1, -1, -1}, {kNan, 1, kNan}, {1, kNan, kNan}, {kNan, kNan, kNan},
                         {-kInf, kInf, -kInf}, {kInf, kNan, kNan}, {-0.0, 0, 0}});
  check_i64("maximum", {{-3, 5, 5}, {7, -2, 7}, {k2p53 + 1, k2p53, k2p53 + 1}, {k2p53, k2p53 + 1, k2p53 + 1}});
  check_i64("minimum", {{-3, 5, -3}, {7, -2, -2}, {k2p53 + 1, k2p53, k2p53}, {k2p53, k2p53 + 1, k2p53}});
}

// Pairs (a, b) and, per op, the expected bool: every comparison with nan is false but ne.
const std::vector<std::pair<double, double>> kPairs = {{1, 2}, {2, 1}, {2, 2}, {kNan, 1}, {1, kNan}, {kNan, kNan},
                                                      {-0.0, 0}, {-kInf, kInf}, {kInf, kInf}};
std::vector<Case> with(std::vector<double> want) {
  std::vector<Case> cs;
  for (std::size_t i = 0; i < kPairs.size(); ++i) cs.push_back({kPairs[i].first, kPairs[i].second, want[i]});
  return cs;
}

TEST(BinaryValues, ComparisonsWithNanAreFalseExceptNe) {
  check_both("eq", with({0, 0, 1, 0, 0, 0, 1, 0, 1}));
  check_both("ne", with({1, 1, 0, 1, 1, 1, 0, 1, 0}));
  check_both("lt", with({1, 0, 0, 0, 0, 0, 0, 1, 0}));
  check_both("le", with({1, 0, 1, 0, 0, 0, 1, 1, 1}));
  check_both("gt", with({0, 1, 0, 0, 0, 0, 0, 0, 0}));
  check_both("ge", with({0, 1, 1, 0, 0, 0, 1, 0, 1}));
}

TEST(BinaryValues, IntegerComparisonsAreExact) {
  // 2^53 and 2^53 + 1 are equal as doubles: these catch a conversion.
  check_i64("eq", {{k2p53, k2p53 + 1, 0}, {5, 5, 1}, {-1, 0, 0}});
  check_i64("ne", {{k2p53, k2p53 + 1, 1}, {5, 5, 0}, {-1, 0, 1}});
  check_i64("lt", {{k2p53, k2p53 + 1, 1}, {5, 5, 0}, {-1, 0, 1}});
  check_i64("le", {{k2p53 + 1, k2p53, 0}, {5, 5, 1}, {-1, 0, 1}});
  check_i64("gt", {{k2p53 + 1, k2p53, 1}, {5, 5, 0}, {-1, 0, 0}});
  check_i64("ge", {{k2p53, k2p53 + 1, 0}, {5, 5, 1}, {0, -1, 1}});
}

TEST(BinaryValues, LogicalAndOr) {
  Array a = Array::from<bool>({4}, {false, false, true, true});
  Array b = Array::from<bool>({4}, {false, true, false, true});
  EXPECT_EQ(run("logical_and", {a, b}).to_doubles(), (std::vector<double>{0, 0, 0, 1}));
  EXPECT_EQ(run("logical_or", {a, b}).to_doubles(), (std::vector<double>{0, 1, 1, 1}));
  Array t = Array::from<bool>({}, {true});
  EXPECT_EQ(run("logical_and", {t, t}).type(), (Type{DType::boolean, {}}));
  EXPECT_EQ(run("logical_or", {t, Array::from<bool>({}, {false})}).at(0), 1);
}

TEST(BinaryValues, WhereSelectsWithoutTouchingTheOtherBranch) {
  Array c = Array::from<bool>({2, 2}, {true, false, false, true});
  Array w = run("where", {c, Array::from<double>({2, 2}, {1, kNan, 3, 4}), Array::from<double>({2, 2}, {kInf, 6, 7, kNan})});
  EXPECT_EQ(w.type(), (Type{f64, {2, 2}}));
  EXPECT_EQ(w.to_doubles(), (std::vector<double>{1, 6, 7, 4}));  // nan/inf only in unselected slots
  Array wf = run("where", {c, Array::from<float>({2, 2}, {1.5f, 2, 3, 4}), Array::from<float>({2, 2}, {5, 6, 7, -0.5f})});
  EXPECT_EQ(wf.type(), (Type{f32, {2, 2}}));
  EXPECT_EQ(wf.to_doubles(), (std::vector<double>{1.5, 6, 7, 4}));
  Array wi = run("where", {c, Array::from<std::int64_t>({2, 2}, {k2p53 + 1, 2, 3, 4}),
                           Array::from<std::int64_t>({2, 2}, {5, -6, 7, 8})});
  EXPECT_EQ(wi.data<std::int64_t>()[0], k2p53 + 1);
  EXPECT_EQ(wi.data<std::int64_t>()[1], -6);
  Array wb = run("where", {c, Array::from<bool>({2, 2}, {false, true, true, true}), Array::from<bool>({2, 2}, {true, true, false, true})});
  EXPECT_EQ(wb.to_doubles(), (std::vector<double>{0, 1, 0, 1}));
  Array s = run("where", {Array::from<bool>({}, {false}), Array::scalar(f64, 1), Array::scalar(f64, 2)});
  EXPECT_EQ(s.type(), (Type{f64, {}}));
  EXPECT_EQ(s.at(0), 2);
}

TEST(BinaryValues, EmptyAndSizeOneShapes) {
  for (const char* op : {"add", "sub", "mul", "div", "pow", "maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge"}) {
    for (DType dt : {f64, f32}) {
      for (Shape s : {Shape{0, 3}, Shape{2, 0}, Shape{0}}) {
        Array e = Array::zeros(Type{dt, s});
        EXPECT_EQ(run(op, {e, e}).type(), (Type{is_predicate(op) ? DType::boolean : dt, s})) << op;
      }
      Array one = run(op, {Array::full(Type{dt, {1, 1}}, 3), Array::full(Type{dt, {1, 1}}, 2)});
      ASSERT_EQ(one.shape(), (Shape{1, 1})) << op;
      EXPECT_EQ(one.at(0), run(op, {Array::scalar(dt, 3), Array::scalar(dt, 2)}).at(0)) << op;
    }
  }
  Array eb = Array::zeros(Type{DType::boolean, {0, 3}});
  EXPECT_EQ(run("logical_and", {eb, eb}).shape(), (Shape{0, 3}));
  EXPECT_EQ(run("where", {eb, Array::zeros(Type{f64, {0, 3}}), Array::zeros(Type{f64, {0, 3}})}).shape(), (Shape{0, 3}));
}

// Past the 16K chunks and the OpenMP threshold; exact closed forms.
TEST(BinaryValues, LargeArraysCrossChunks) {
  const std::int64_t n = (1 << 17) + 4099;
  Array x(Type{f64, {n}}), y(Type{f64, {n}}), xi(Type{i64, {n}}), yi(Type{i64, {n}});
  for (std::int64_t i = 0; i < n; ++i) {
    x.data<double>()[i] = static_cast<double>(i);
    y.data<double>()[i] = -2.0 * static_cast<double>(i) + 1000;
    xi.data<std::int64_t>()[i] = k2p53 + i;
    yi.data<std::int64_t>()[i] = -i;
  }
  Array sum = run("add", {x, y}), mx = run("maximum", {x, y}), lt = run("lt", {x, y});
  Array isum = run("add", {xi, yi});
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(i), e = -2.0 * d + 1000;
    bad += sum.data<double>()[i] != 1000 - d;
    bad += mx.data<double>()[i] != std::max(d, e);
    bad += lt.data<std::uint8_t>()[i] != (d < e);
    bad += isum.data<std::int64_t>()[i] != k2p53;
  }
  EXPECT_EQ(bad, 0);
}

// ---- DSL: NumPy broadcasting through explicit broadcast_to, scalars as constants ----

std::vector<double> values(const Array& a) { return a.to_doubles(); }

TEST(DslBroadcastValues, RowTimesVectorPlusScalar) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 3});
  Tensor y = g.input("y", f64, {3});
  Tensor z = x * y + 1.0;
  auto out = compile(g, {z}).run({{"x", Array::from<double>({2, 3}, {1, 2, 3, 4, 5, 6})},
                                  {"y", Array::from<double>({3}, {10, 20, 30})}});
  EXPECT_EQ(out[0].type(), (Type{f64, {2, 3}}));
  EXPECT_EQ(values(out[0]), (std::vector<double>{11, 41, 91, 41, 101, 181}));
}

TEST(DslBroadcastValues, ColumnPlusRowAndRankPromotion) {
  Graph g;
  Tensor a = g.input("a", f64, {2, 1});
  Tensor b = g.input("b", f64, {1, 3});
  Tensor v = g.input("v", f64, {3});
  Tensor sum = a + b, diff = a - v, big = maximum(b, a * 15.0);
  auto out = compile(g, {sum, diff, big}).run({{"a", Array::from<double>({2, 1}, {1, 2})},
                                               {"b", Array::from<double>({1, 3}, {10, 20, 30})},
                                               {"v", Array::from<double>({3}, {10, 20, 30})}});
  EXPECT_EQ(out[0].shape(), (Shape{2, 3}));
  EXPECT_EQ(values(out[0]), (std::vector<double>{11, 21, 31, 12, 22, 32}));
  EXPECT_EQ(out[1].shape(), (Shape{2, 3}));
  EXPECT_EQ(values(out[1]), (std::vector<double>{-9, -19, -29, -8, -18, -28}));
  EXPECT_EQ(values(out[2]), (std::vector<double>{15, 20, 30, 30, 30, 30}));
}

TEST(DslBroadcastValues, ScalarTensorMixes) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 3});
  std::vector<Tensor> ys = {2.0 - x, x / 4.0, 1.0 / x, pow(x, 2.0), pow(2.0, x), maximum(x, 2.5),
                            minimum(3.0, x), x > 2.5, where(x > 2.5, x, 0.0), where(x <= 2.0, -1.0, x * 10.0)};
  auto out = compile(g, ys).run({{"x", Array::from<double>({2, 3}, {1, 2, 3, 4, 5, 6})}});
  std::vector<std::vector<double>> want = {
      {1, 0, -1, -2, -3, -4},    {0.25, 0.5, 0.75, 1, 1.25, 1.5}, {1, 0.5, 1.0 / 3, 0.25, 0.2, 1.0 / 6},
      {1, 4, 9, 16, 25, 36},     {2, 4, 8, 16, 32, 64},           {2.5, 2.5, 3, 4, 5, 6},
      {1, 2, 3, 3, 3, 3},        {0, 0, 1, 1, 1, 1},              {0, 0, 3, 4, 5, 6},
      {-1, -1, 30, 40, 50, 60}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(out[i].shape(), (Shape{2, 3})) << i;
    EXPECT_EQ(values(out[i]), want[i]) << i;
  }
  EXPECT_EQ(out[7].dtype(), DType::boolean);
}

TEST(DslBroadcastValues, ZeroDimOperands) {
  Graph g;
  Tensor a = g.input("a", f64, {});
  Tensor b = g.input("b", f64, {});
  Tensor v = g.input("v", f64, {3});
  Tensor ab = a * b + a / b, p = pow(a, b), av = a * v - b;
  auto out = compile(g, {ab, p, av}).run({{"a", Array::scalar(f64, 3)}, {"b", Array::scalar(f64, 4)},
                                          {"v", Array::from<double>({3}, {1, 2, 3})}});
  EXPECT_EQ(out[0].shape(), Shape{});
  EXPECT_EQ(out[0].at(0), 12.75);
  EXPECT_EQ(out[1].at(0), 81);
  EXPECT_EQ(out[2].shape(), (Shape{3}));
  EXPECT_EQ(values(out[2]), (std::vector<double>{-1, 2, 5}));
}

TEST(DslBroadcastValues, IntegerTensorsWithIntegerScalars) {
  Graph g;
  Tensor x = g.input("x", i64, {2, 3});
  Tensor y = g.input("y", i64, {3});
  std::vector<Tensor> ys = {x * 3 + 1, -x, x - 2, maximum(x, 0), x * y, x > 0, 10 - x};
  auto out = compile(g, ys).run({{"x", Array::from<std::int64_t>({2, 3}, {1, -2, 3, -4, 5, 6})},
                                 {"y", Array::from<std::int64_t>({3}, {10, 20, k2p53})}});
  std::vector<std::vector<double>> want = {{4, -5, 10, -11, 16, 19}, {-1, 2, -3, 4, -5, -6}, {-1, -4, 1, -6, 3, 4},
                                           {1, 0, 3, 0, 5, 6},       {10, -40, 3.0 * k2p53, -40, 100, 6.0 * k2p53},
                                           {1, 0, 1, 0, 1, 1},       {9, 12, 7, 14, 5, 4}};
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(out[i].dtype(), i == 5 ? DType::boolean : i64) << i;
    EXPECT_EQ(values(out[i]), want[i]) << i;
  }
  EXPECT_EQ(out[4].data<std::int64_t>()[5], 6 * k2p53);  // exact beyond 2^53
  EXPECT_THROW((void)Tensor(x + 2.5), ShapeError);        // non-integer scalar with i64
}

TEST(DslBroadcastValues, F32KeepsDtypeAndEmptyBroadcasts) {
  Graph g;
  Tensor x = g.input("x", f32, {3});
  Tensor e = g.input("e", f64, {0, 3});
  Tensor r = g.input("r", f64, {3});
  Tensor xf = x * 0.5 + 1.0, er = e + r, cmp = (x > 1.0) & (x < 3.0);
  auto out = compile(g, {xf, er, cmp}).run({{"x", Array::from<float>({3}, {1, 2, 3})},
                                            {"e", Array::zeros(Type{f64, {0, 3}})},
                                            {"r", Array::from<double>({3}, {1, 2, 3})}});
  EXPECT_EQ(out[0].type(), (Type{f32, {3}}));
  EXPECT_EQ(values(out[0]), (std::vector<double>{1.5, 2, 2.5}));
  EXPECT_EQ(out[1].type(), (Type{f64, {0, 3}}));
  EXPECT_EQ(values(out[2]), (std::vector<double>{0, 1, 0}));
}

}  // namespace
}  // namespace mg
