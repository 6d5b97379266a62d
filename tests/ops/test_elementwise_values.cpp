// Known values for the unary elementwise ops (ir/ops/unary.cpp), run through the
// interpreter. Expected values are closed forms or constants computed offline at 50 digits
// (mpmath), never the kernel's own library call. Every case runs twice: inside a 1-D array
// long enough for the SIMD body and its scalar tail, and alone as a 0-d tensor. Also: f32
// next to f64, i64 where the op takes it, IEEE edge cases, size-1/size-0 shapes, and arrays
// large enough to cross the kernels' chunk and OpenMP thresholds.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/ir/ops.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

using ir::Value;
using Cases = std::vector<std::pair<double, double>>;  // {x, f(x)}
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kLn2 = 0.6931471805599453;

Array run(std::string_view op, const Array& x, Attrs attrs = {}) {
  ir::Graph g;
  std::vector<Value> outs{ir::unary(op, g.add_input("x", x.type()), std::move(attrs))};
  return rt::evaluate(outs, {{"x", x}}).at(0);
}

// nan matches nan; infinities and zeros match exactly; else |got - want| <= rel * |want|.
::testing::AssertionResult close(double got, double want, double rel) {
  bool ok = std::isnan(want)                       ? std::isnan(got)
            : (std::isinf(want) || want == 0)      ? got == want
                                                   : std::abs(got - want) <= rel * std::abs(want);
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << got << ", want " << want << " (rel err "
                                       << std::abs(got - want) / std::abs(want) << ")";
}

// f(x) = want within `ulps` units of T's epsilon, for every case, in dtype T.
template <class T>
void check(std::string_view op, const Cases& cases, Attrs attrs = {}, double ulps = 4) {
  const double rel = ulps * std::numeric_limits<T>::epsilon();
  const char* dt = std::is_same_v<T, float> ? "f32" : "f64";
  const std::size_t n = std::max<std::size_t>(67, cases.size());
  std::vector<T> xs(n);
  for (std::size_t i = 0; i < n; ++i) xs[i] = static_cast<T>(cases[i % cases.size()].first);
  Array out = run(op, Array::from_vector<T>({static_cast<std::int64_t>(n)}, xs), attrs);
  ASSERT_EQ(out.dtype(), dtype_of<T>());
  ASSERT_EQ(out.shape(), Shape{static_cast<std::int64_t>(n)});
  std::vector<bool> failed(cases.size());  // one report per case, not per copy
  for (std::size_t i = 0; i < n; ++i) {
    auto [x, want] = cases[i % cases.size()];
    auto ok = close(out.at(static_cast<std::int64_t>(i)), want, rel);
    if (!ok && !failed[i % cases.size()]) ADD_FAILURE() << op << "(" << x << ") " << dt << " [" << i << "]: " << ok.message();
    failed[i % cases.size()] = failed[i % cases.size()] || !ok;
  }
  for (auto [x, want] : cases) {
    Array s = run(op, Array::from_vector<T>({}, {static_cast<T>(x)}), attrs);
    ASSERT_EQ(s.shape(), Shape{});
    EXPECT_TRUE(close(s.at(0), want, rel)) << op << "(" << x << ") " << dt << " 0-d";
  }
}

// Same cases in f64 and f32.
void check_both(std::string_view op, const Cases& cases, Attrs attrs = {}, double ulps = 4) {
  check<double>(op, cases, attrs, ulps);
  check<float>(op, cases, attrs, ulps);
}

// Exact i64 results (compared as integers, no detour through double).
void check_i64(std::string_view op, std::vector<std::pair<std::int64_t, std::int64_t>> cases) {
  std::vector<std::int64_t> xs;
  for (auto [x, _] : cases) xs.push_back(x);
  Array out = run(op, Array::from_vector<std::int64_t>({static_cast<std::int64_t>(xs.size())}, xs));
  ASSERT_EQ(out.dtype(), i64);
  for (std::size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(out.data<std::int64_t>()[i], cases[i].second) << op << "(" << cases[i].first << ") i64";
  Array s = run(op, Array::from_vector<std::int64_t>({}, {cases[0].first}));
  EXPECT_EQ(s.data<std::int64_t>()[0], cases[0].second) << op << " i64 0-d";
}

TEST(UnaryValues, Neg) {
  check_both("neg", {{0, 0}, {1.5, -1.5}, {-2, 2}, {kInf, -kInf}, {-kInf, kInf}, {kNan, kNan}});
  check_i64("neg", {{3, -3}, {-7, 7}, {0, 0}, {std::int64_t{1} << 62, -(std::int64_t{1} << 62)}});
  EXPECT_TRUE(std::signbit(run("neg", Array::scalar(f64, 0.0)).at(0)));  // -(+0) = -0
}

TEST(UnaryValues, ExpAndLog) {
  check_both("exp", {{0, 1}, {1, 2.718281828459045}, {-1, 0.36787944117144233}, {2, 7.38905609893065},
                     {0.5, 1.6487212707001282}, {10, 22026.465794806718}, {-10, 4.5399929762484854e-05},
                     {-kInf, 0}, {kInf, kInf}, {kNan, kNan}});
  check<double>("exp", {{800, kInf}, {-800, 0}, {-30, 9.357622968840175e-14}});
  check<float>("exp", {{100, kInf}, {-120, 0}});
  check_both("log", {{1, 0}, {2, kLn2}, {0.5, -kLn2}, {10, 2.302585092994046}, {3, 1.0986122886681098},
                     {0.25, -1.3862943611198906}, {0, -kInf}, {-0.0, -kInf}, {-1, kNan}, {kInf, kInf},
                     {kNan, kNan}});
  check<double>("log", {{1e-300, -690.7755278982137}, {1e10, 23.025850929940457}});
}

TEST(UnaryValues, SqrtAndRsqrt) {
  check_both("sqrt", {{4, 2}, {0.25, 0.5}, {2, 1.4142135623730951}, {3, 1.7320508075688772}, {0, 0},
                      {-1, kNan}, {kInf, kInf}, {kNan, kNan}});
  check_both("rsqrt", {{4, 0.5}, {0.25, 2}, {2, 0.7071067811865476}, {10, 0.31622776601683794}, {0, kInf},
                       {-1, kNan}, {kInf, 0}, {kNan, kNan}});
}

TEST(UnaryValues, Trigonometric) {
  check_both("sin", {{0, 0}, {0.5, 0.479425538604203}, {1, 0.8414709848078965}, {-2, -0.9092974268256817},
                     {3, 0.1411200080598672}, {0.25, 0.24740395925452294}, {kInf, kNan}, {kNan, kNan}});
  check<double>("sin", {{1e-10, 1e-10}});
  check_both("cos", {{0, 1}, {0.5, 0.8775825618903728}, {1, 0.5403023058681398}, {-2, -0.4161468365471424},
                     {3, -0.9899924966004454}, {0.25, 0.9689124217106447}, {-kInf, kNan}, {kNan, kNan}});
}

TEST(UnaryValues, TanhSaturates) {
  check_both("tanh", {{0, 0}, {0.5, 0.46211715726000974}, {1, 0.7615941559557649}, {-2, -0.9640275800758169},
                      {3, 0.9950547536867305}, {0.25, 0.24491866240370913}, {20, 1}, {50, 1}, {-50, -1},
                      {kInf, 1}, {-kInf, -1}, {kNan, kNan}});
  check<double>("tanh", {{1e-10, 1e-10}});
}

TEST(UnaryValues, SigmoidHasNoNanAtLargeInputs) {
  check_both("sigmoid", {{0, 0.5}, {1, 0.7310585786300049}, {-1, 0.2689414213699951}, {2, 0.8807970779778824},
                         {-2, 0.11920292202211756}, {10, 0.9999546021312976}, {-800, 0}, {800, 1},
                         {-kInf, 0}, {kInf, 1}, {kNan, kNan}});
  check<double>("sigmoid", {{-30, 9.357622968839299e-14}, {30, 0.9999999999999064}});
}

TEST(UnaryValues, ReluAndLeakyRelu) {
  // As PyTorch (relu is clamp_min(x, 0)): nan propagates.
  check_both("relu", {{-1, 0}, {0, 0}, {-0.0, 0}, {2.5, 2.5}, {-kInf, 0}, {kInf, kInf},
                      {kNan, kNan}});
  check<double>("relu", {{1e-300, 1e-300}});
  check_both("leaky_relu", {{-1, -0.2}, {3, 3}, {0, 0}, {-2.5, -0.5}, {-kInf, -kInf}, {kInf, kInf}, {kNan, kNan}},
             {{"alpha", 0.2}});
  check_both("leaky_relu", {{-5, -0.05}, {2, 2}});  // default alpha 0.01
}

TEST(UnaryValues, GeluExactAndTanh) {
  check_both("gelu", {{0, 0}, {1, 0.8413447460685429}, {2, 1.9544997361036416}, {0.5, 0.34573123063700656},
                      {3, 2.99595030590511}, {kInf, kInf}, {kNan, kNan}});
  // x < 0: 1 + erf(x/sqrt2) cancels (the formula PyTorch uses too): a looser tolerance.
  check_both("gelu", {{-1, -0.15865525393145705}, {-0.5, -0.15426876936299344}, {-2, -0.04550026389635842}}, {}, 64);
  check<double>("gelu", {{-3, -0.0040496940948902835}, {-3.1113, -0.0028976408257832664}, {-40, 0}}, {}, 1024);
  check<double>("gelu", {{3.1113, 3.1084023591742165}});
  Attrs approx{{"approximate", std::string("tanh")}};
  check_both("gelu", {{0, 0}, {1, 0.8411919906082767}, {2, 1.954597694087775}, {0.5, 0.34571400982514394},
                      {3, 2.996362607918227}, {kNan, kNan}}, approx);
  check_both("gelu", {{-1, -0.1588080093917233}, {-2, -0.04540230591222498}}, approx, 64);
  check<double>("gelu", {{-3, -0.003637392081773019}}, approx, 1024);
}

TEST(UnaryValues, Silu) {
  check_both("silu", {{0, 0}, {1, 0.7310585786300049}, {-1, -0.2689414213699951}, {2, 1.7615941559557649},
                      {-2, -0.23840584404423512}, {0.5, 0.3112296656009273}, {-800, 0}, {800, 800}, {kNan, kNan}});
  check<double>("silu", {{-30, -2.8072868906517896e-12}, {10, 9.999546021312975}});
}

TEST(UnaryValues, SoftplusIncludingLinearRegime) {
  check_both("softplus", {{0, kLn2}, {1, 1.3132616875182228}, {-1, 0.3132616875182228}, {2, 2.1269280110429727},
                          {0.5, 0.9740769841801067}, {-10, 4.539889921686465e-05},
                          {20, 20.000000002061153},  // beta*x == threshold: still the log form
                          {21, 21}, {1000, 1000}, {-1000, 0}, {kInf, kInf}, {-kInf, 0}, {kNan, kNan}});
  check<double>("softplus", {{-30, 9.357622968839737e-14}, {-800, 0}});
  Attrs b2{{"beta", 2.0}, {"threshold", 10.0}};
  check_both("softplus", {{1, 1.0634640055214863}, {0.5, 0.6566308437591114}, {-1, 0.06346400552148625},
                          {5, 5.000022699449609},  // 2*5 == 10: log form
                          {5.5, 5.5}, {6, 6}}, b2);
}

TEST(UnaryValues, AbsSignSquare) {
  check_both("abs", {{-2, 2}, {0, 0}, {-0.0, 0}, {3, 3}, {-kInf, kInf}, {kNan, kNan}});
  check_i64("abs", {{-5, 5}, {0, 0}, {7, 7}, {-(std::int64_t{1} << 62), std::int64_t{1} << 62}});
  EXPECT_FALSE(std::signbit(run("abs", Array::scalar(f64, -0.0)).at(0)));
  check_both("sign", {{-2.5, -1}, {0, 0}, {-0.0, 0}, {3, 1}, {-kInf, -1}, {kInf, 1}, {kNan, kNan}});
  check<double>("sign", {{1e-300, 1}, {-1e-300, -1}});
  check_i64("sign", {{-5, -1}, {0, 0}, {9, 1}, {std::numeric_limits<std::int64_t>::min(), -1}});
  check_both("square", {{3, 9}, {-1.5, 2.25}, {0, 0}, {1e200, kInf}, {-kInf, kInf}, {kNan, kNan}});
  check_i64("square", {{-4, 16}, {0, 0}, {3, 9}, {3037000499, 9223372030926249001}});
}

TEST(UnaryValues, Reciprocal) {
  check_both("reciprocal", {{2, 0.5}, {-4, -0.25}, {3, 0.3333333333333333}, {0, kInf}, {-0.0, -kInf},
                            {kInf, 0}, {kNan, kNan}});
}

TEST(UnaryValues, Erf) {
  check_both("erf", {{0, 0}, {0.5, 0.5204998778130465}, {-0.5, -0.5204998778130465}, {1, 0.8427007929497149},
                     {2, 0.9953222650189527}, {-2, -0.9953222650189527}, {3, 0.9999779095030014},
                     {0.25, 0.27632639016823696}, {6, 1}, {kInf, 1}, {-kInf, -1}, {kNan, kNan}});
  check<double>("erf", {{1e-10, 1.1283791670955126e-10}, {4, 0.9999999845827421}, {2.2, 0.9981371537020182},
                        {-2.20005, -0.9981375997607027}, {1.5, 0.9661051464753108}});
}

TEST(UnaryValues, Log1pAndExpm1AreAccurateNearZero) {
  check_both("log1p", {{0, 0}, {1e-10, 9.999999999500001e-11}, {1, kLn2}, {0.5, 0.4054651081081644},
                       {-0.5, -kLn2}, {0.25, 0.22314355131420976}, {2, 1.0986122886681098}, {-1, -kInf},
                       {-2, kNan}, {kInf, kInf}, {kNan, kNan}});
  check<double>("log1p", {{1e-300, 1e-300}, {1e10, 23.025850930040455}});
  check_both("expm1", {{0, 0}, {1e-10, 1.00000000005e-10}, {1, 1.7182818284590453}, {-1, -0.6321205588285577},
                       {0.5, 0.6487212707001282}, {-0.5, -0.3934693402873666}, {10, 22025.465794806718},
                       {-10, -0.9999546000702375}, {-kInf, -1}, {kInf, kInf}, {kNan, kNan}});
  check<double>("expm1", {{-30, -0.9999999999999064}, {800, kInf}, {1e-300, 1e-300}});
}

TEST(UnaryValues, Clamp) {
  Attrs lim{{"min", -1.0}, {"max", 2.0}};
  check_both("clamp", {{-3, -1}, {0.5, 0.5}, {5, 2}, {-1, -1}, {2, 2}, {-kInf, -1}, {kInf, 2}, {kNan, kNan}}, lim);
  check_both("clamp", {{-1e30, -1e30}, {7, 7}, {kInf, kInf}});  // default bounds: +-inf
  check_both("clamp", {{-3, 0.5}, {1, 1}, {4, 1.5}}, {{"min", 0.5}, {"max", 1.5}});
}

TEST(UnaryValues, LogicalNot) {
  Array x = Array::from<bool>({2, 2}, {true, false, false, true});
  Array y = run("logical_not", x);
  EXPECT_EQ(y.dtype(), DType::boolean);
  EXPECT_EQ(y.shape(), (Shape{2, 2}));
  EXPECT_EQ(y.to_doubles(), (std::vector<double>{0, 1, 1, 0}));
  EXPECT_EQ(run("logical_not", Array::from<bool>({}, {false})).at(0), 1);
  EXPECT_EQ(run("logical_not", Array::zeros(Type{DType::boolean, {0, 3}})).shape(), (Shape{0, 3}));
}

const std::vector<std::pair<std::string, Attrs>> kFloatOps = {
    {"neg", {}},     {"exp", {}},        {"log", {}},        {"sqrt", {}},       {"rsqrt", {}},
    {"sin", {}},     {"cos", {}},        {"tanh", {}},       {"sigmoid", {}},    {"relu", {}},
    {"leaky_relu", {}}, {"gelu", {}},    {"gelu", {{"approximate", std::string("tanh")}}},
    {"silu", {}},    {"softplus", {}},   {"abs", {}},        {"sign", {}},       {"square", {}},
    {"reciprocal", {}}, {"erf", {}},     {"log1p", {}},      {"expm1", {}},
    {"clamp", {{"min", 0.0}, {"max", 1.0}}}};

TEST(UnaryValues, EmptyAndSizeOneShapes) {
  for (DType dt : {f64, f32}) {
    for (const auto& [op, attrs] : kFloatOps) {
      for (Shape s : {Shape{0, 3}, Shape{3, 0, 2}, Shape{0}}) {
        Array y = run(op, Array::zeros(Type{dt, s}), attrs);
        EXPECT_EQ(y.type(), (Type{dt, s})) << op;
      }
      // x = 1 in a {1,1} tensor: the value must match the 0-d result.
      Array one = run(op, Array::full(Type{dt, {1, 1}}, 1.0), attrs);
      ASSERT_EQ(one.shape(), (Shape{1, 1})) << op;
      Array scalar = run(op, Array::scalar(dt, 1.0), attrs);
      EXPECT_EQ(one.at(0), scalar.at(0)) << op;
    }
  }
  for (const char* op : {"neg", "abs", "sign", "square"})
    EXPECT_EQ(run(op, Array::zeros(Type{i64, {0, 3}})).type(), (Type{i64, {0, 3}})) << op;
}

// Enough elements to cross the 16K chunks and the OpenMP threshold; exact closed forms.
TEST(UnaryValues, LargeArraysCrossChunks) {
  const std::int64_t n = (1 << 17) + 4099;
  Array sq(Type{f64, {n}});
  Array ints(Type{i64, {n}});
  for (std::int64_t i = 0; i < n; ++i) {
    sq.data<double>()[i] = static_cast<double>(i) * static_cast<double>(i);
    ints.data<std::int64_t>()[i] = i - n / 2;
  }
  Array r = run("sqrt", sq);
  Array a = run("abs", ints);
  Array neg = run("neg", ints);
  std::int64_t bad = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    bad += r.data<double>()[i] != static_cast<double>(i);
    bad += a.data<std::int64_t>()[i] != std::abs(i - n / 2);
    bad += neg.data<std::int64_t>()[i] != n / 2 - i;
  }
  EXPECT_EQ(bad, 0);
}

}  // namespace
}  // namespace mg
