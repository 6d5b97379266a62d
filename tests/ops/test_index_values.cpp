// Known-value tests for the index, linalg and creation ops (ir/ops/index.cpp, linalg.cpp,
// creation.cpp): hand-checked results, k = 0 and batched matmul, out-of-range indices ->
// UserError at run time, large arrays against a naive index walk (parallel paths), random
// reproducibility and loose sample statistics, cast truncation and bool semantics.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

using ir::Graph;
using ir::Value;

Array eval(Value y, const rt::Bindings& b = {}) {
  std::vector<Value> outs{y};
  return rt::evaluate(outs, b).at(0);
}

void expect_array(const Array& a, DType dtype, const Shape& shape, const std::vector<double>& values) {
  EXPECT_EQ(a.dtype(), dtype);
  EXPECT_EQ(a.shape(), shape);
  EXPECT_EQ(a.to_doubles(), values);
}

Array f64s(Shape shape, std::vector<double> v) { return Array::from_vector(std::move(shape), v); }
Array i64s(Shape shape, std::vector<std::int64_t> v) {
  return Array::from_vector(std::move(shape), v);
}

// Row-major multi-index helpers for the naive references.
std::int64_t flat(const Shape& shape, const std::vector<std::int64_t>& idx) {
  std::int64_t f = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) f = f * shape[k] + idx[k];
  return f;
}
bool next(const Shape& shape, std::vector<std::int64_t>& idx) {
  for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) {
    if (++idx[k] < shape[k]) return true;
    idx[k] = 0;
  }
  return false;
}

Array random_f64(Shape shape, std::uint64_t seed) {
  std::mt19937_64 bits(seed);
  Array a(Type{f64, std::move(shape)});
  for (std::int64_t i = 0; i < a.numel(); ++i)
    a.set(i, static_cast<double>(bits() % 1000) / 100.0 - 5.0);  // exact in f64 sums
  return a;
}
Array random_index(Shape shape, std::int64_t bound, std::uint64_t seed) {
  std::mt19937_64 bits(seed);
  Array a(Type{i64, std::move(shape)});
  for (std::int64_t i = 0; i < a.numel(); ++i)
    a.data<std::int64_t>()[i] = static_cast<std::int64_t>(bits() % static_cast<std::uint64_t>(bound));
  return a;
}

// ---- matmul --------------------------------------------------------------------------

TEST(LinalgValues, Matmul2d) {
  Graph g;
  Value a = g.add_input("a", Type{f64, {2, 3}});
  Value b = g.add_input("b", Type{f64, {3, 4}});
  Array r = eval(ir::matmul(a, b), {{"a", f64s({2, 3}, {1, 2, 3, 4, 5, 6})},
                                    {"b", f64s({3, 4}, {1, 0, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1})}});
  expect_array(r, f64, {2, 4}, {1, 2, 3, 6, 4, 5, 6, 15});
}

TEST(LinalgValues, MatmulBatchedAndF32) {
  Graph g;
  Value a = g.add_input("a", Type{f32, {2, 2, 3}});
  Value b = g.add_input("b", Type{f32, {2, 3, 2}});
  Array av = f64s({2, 2, 3}, {1, 2, 3, 4, 5, 6, 1, 0, 0, 0, 1, 0}).cast(f32);
  Array bv = f64s({2, 3, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}).cast(f32);
  expect_array(eval(ir::matmul(a, b), {{"a", av}, {"b", bv}}), f32, {2, 2, 2},
               {22, 28, 49, 64, 7, 8, 9, 10});
}

TEST(LinalgValues, MatmulEmptyInnerDimGivesZeros) {
  Graph g;
  Value a = g.add_input("a", Type{f64, {2, 0}});
  Value b = g.add_input("b", Type{f64, {0, 3}});
  Array r = eval(ir::matmul(a, b), {{"a", Array(Type{f64, {2, 0}})}, {"b", Array(Type{f64, {0, 3}})}});
  expect_array(r, f64, {2, 3}, {0, 0, 0, 0, 0, 0});
}

TEST(LinalgValues, MatmulI64AndOneByOne) {
  Graph g;
  Value a = g.add_input("a", Type{i64, {2, 2}});
  Value b = g.add_input("b", Type{i64, {2, 2}});
  expect_array(eval(ir::matmul(a, b), {{"a", i64s({2, 2}, {1, 2, 3, 4})}, {"b", i64s({2, 2}, {5, 6, 7, 8})}}),
               i64, {2, 2}, {19, 22, 43, 50});
  Graph h;
  Value c = h.add_input("c", Type{f64, {1, 1}});
  expect_array(eval(ir::matmul(c, c), {{"c", f64s({1, 1}, {-3})}}), f64, {1, 1}, {9});
}

TEST(LinalgValues, MatmulLargeAgainstNaiveLoop) {
  Graph g;
  const std::int64_t B = 3, M = 37, K = 50, N = 29;
  Value a = g.add_input("a", Type{f64, {B, M, K}});
  Value b = g.add_input("b", Type{f64, {B, K, N}});
  Array av = random_f64({B, M, K}, 1), bv = random_f64({B, K, N}, 2);
  Array r = eval(ir::matmul(a, b), {{"a", av}, {"b", bv}});
  for (std::int64_t q = 0; q < B; ++q)
    for (std::int64_t i = 0; i < M; ++i)
      for (std::int64_t j = 0; j < N; ++j) {
        double s = 0;
        for (std::int64_t p = 0; p < K; ++p) s += av.at((q * M + i) * K + p) * bv.at((q * K + p) * N + j);
        ASSERT_NEAR(r.at((q * M + i) * N + j), s, 1e-9);
      }
}

TEST(LinalgValues, MatmulRejectsMismatches) {
  Graph g;
  Value a = g.add_input("a", Type{f64, {2, 3}});
  Value b = g.add_input("b", Type{f64, {4, 2}});
  Value c = g.add_input("c", Type{f64, {2, 3, 2}});
  Value d = g.add_input("d", Type{f32, {3, 2}});
  EXPECT_THROW(ir::matmul(a, b), ShapeError);  // k mismatch
  EXPECT_THROW(ir::matmul(a, c), ShapeError);  // batch dims not broadcast
  EXPECT_THROW(ir::matmul(a, d), ShapeError);  // dtype mismatch
}

// ---- gather / scatter_add ------------------------------------------------------------

TEST(IndexValues, GatherAxis0And1) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {3, 2}});
  Value i = g.add_input("i", Type{i64, {2, 2}});
  expect_array(eval(ir::gather(x, i, 0), {{"x", f64s({3, 2}, {1, 2, 3, 4, 5, 6})},
                                         {"i", i64s({2, 2}, {2, 0, 1, 1})}}),
               f64, {2, 2}, {5, 2, 3, 4});

  Graph h;
  Value y = h.add_input("y", Type{f64, {2, 3}});
  Value j = h.add_input("j", Type{i64, {2, 3}});
  Value k = h.add_input("k", Type{i64, {1, 2}});  // smaller than y off the axis
  rt::Bindings bind{{"y", f64s({2, 3}, {1, 2, 3, 4, 5, 6})},
                    {"j", i64s({2, 3}, {2, 0, 0, 1, 1, 2})},
                    {"k", i64s({1, 2}, {2, 1})}};
  expect_array(eval(ir::gather(y, j, 1), bind), f64, {2, 3}, {3, 1, 1, 5, 5, 6});
  expect_array(eval(ir::gather(y, k, 1), bind), f64, {1, 2}, {3, 2});
}

TEST(IndexValues, GatherOutOfRangeIsUserError) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {3}});
  Value i = g.add_input("i", Type{i64, {2}});
  Value y = ir::gather(x, i, 0);
  for (std::int64_t bad : {3, -1}) {
    try {
      eval(y, {{"x", f64s({3}, {1, 2, 3})}, {"i", i64s({2}, {0, bad})}});
      ADD_FAILURE() << "no error for index " << bad;
    } catch (const UserError& e) {
      std::string m = e.what();
      EXPECT_NE(m.find("gather"), std::string::npos) << m;
      EXPECT_NE(m.find("index " + std::to_string(bad)), std::string::npos) << m;
    }
  }
}

TEST(IndexValues, GatherRejectsBadTypes) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {3, 2}});
  Value wide = g.add_input("wide", Type{i64, {2, 3}});
  Value flt = g.add_input("flt", Type{f64, {2, 2}});
  EXPECT_THROW(ir::gather(x, wide, 0), ShapeError);  // dim 1: 3 > 2
  EXPECT_THROW(ir::gather(x, flt, 0), ShapeError);   // float index
  EXPECT_THROW(ir::gather(x, wide, 2), ShapeError);  // axis out of range
}

TEST(IndexValues, ScatterAddAccumulatesDuplicates) {
  Graph g;
  Value base = g.add_input("base", Type{f64, {3, 2}});
  Value i = g.add_input("i", Type{i64, {2, 2}});
  Value src = g.add_input("src", Type{f64, {2, 2}});
  rt::Bindings b{{"base", Array::zeros(Type{f64, {3, 2}})},
                 {"i", i64s({2, 2}, {0, 2, 0, 0})},
                 {"src", f64s({2, 2}, {1, 2, 3, 4})}};
  expect_array(eval(ir::scatter_add(base, i, src, 0), b), f64, {3, 2}, {4, 4, 0, 0, 0, 2});
  b["i"] = i64s({2, 2}, {0, 2, 3, 0});
  EXPECT_THROW(eval(ir::scatter_add(base, i, src, 0), b), UserError);
}

TEST(IndexValues, GatherScatterLargeAgainstNaiveWalk) {
  const Shape xs{50, 40, 30}, is{50, 60, 20};
  Graph g;
  Value x = g.add_input("x", Type{f64, xs});
  Value i = g.add_input("i", Type{i64, is});
  Value s = g.add_input("s", Type{f64, is});
  Array xv = random_f64(xs, 3), iv = random_index(is, 40, 4), sv = random_f64(is, 5);
  rt::Bindings b{{"x", xv}, {"i", iv}, {"s", sv}};
  Array ga = eval(ir::gather(x, i, 1), b);
  Array sa = eval(ir::scatter_add(x, i, s, 1), b);
  Array want = xv.clone();
  std::vector<std::int64_t> p(3, 0);
  do {
    std::vector<std::int64_t> q = p;
    q[1] = iv.data<std::int64_t>()[flat(is, p)];
    ASSERT_EQ(ga.at(flat(is, p)), xv.at(flat(xs, q)));
    want.set(flat(xs, q), want.at(flat(xs, q)) + sv.at(flat(is, p)));
  } while (next(is, p));
  EXPECT_EQ(sa.to_doubles(), want.to_doubles());
}

// ---- index_select / index_add --------------------------------------------------------

TEST(IndexValues, IndexSelect) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {3, 2}});
  Value i = g.add_input("i", Type{i64, {3}});
  Value j = g.add_input("j", Type{i64, {1}});
  rt::Bindings b{{"x", f64s({3, 2}, {1, 2, 3, 4, 5, 6})}, {"i", i64s({3}, {2, 0, 2})}, {"j", i64s({1}, {1})}};
  expect_array(eval(ir::index_select(x, i, 0), b), f64, {3, 2}, {5, 6, 1, 2, 5, 6});
  expect_array(eval(ir::index_select(x, j, 1), b), f64, {3, 1}, {2, 4, 6});
  b["i"] = i64s({3}, {0, 5, 1});
  EXPECT_THROW(eval(ir::index_select(x, i, 0), b), UserError);
}

TEST(IndexValues, IndexAdd) {
  Graph g;
  Value base = g.add_input("base", Type{f64, {3, 2}});
  Value i = g.add_input("i", Type{i64, {3}});
  Value src = g.add_input("src", Type{f64, {3, 2}});
  rt::Bindings b{{"base", Array::full(Type{f64, {3, 2}}, 1.0)},
                 {"i", i64s({3}, {0, 0, 2})},
                 {"src", f64s({3, 2}, {1, 2, 3, 4, 5, 6})}};
  expect_array(eval(ir::index_add(base, i, src, 0), b), f64, {3, 2}, {5, 7, 1, 1, 6, 7});
  b["i"] = i64s({3}, {0, -2, 1});
  EXPECT_THROW(eval(ir::index_add(base, i, src, 0), b), UserError);
}

TEST(IndexValues, IndexAddLargeAgainstNaiveWalk) {
  const Shape bs{4, 10, 3000}, ss{4, 25, 3000};
  Graph g;
  Value base = g.add_input("base", Type{f64, bs});
  Value i = g.add_input("i", Type{i64, {25}});
  Value src = g.add_input("src", Type{f64, ss});
  Array bv = random_f64(bs, 6), iv = random_index({25}, 10, 7), sv = random_f64(ss, 8);
  Array r = eval(ir::index_add(base, i, src, 1), {{"base", bv}, {"i", iv}, {"src", sv}});
  Array want = bv.clone();
  std::vector<std::int64_t> p(3, 0);
  do {
    std::vector<std::int64_t> q = p;
    q[1] = iv.data<std::int64_t>()[p[1]];
    want.set(flat(bs, q), want.at(flat(bs, q)) + sv.at(flat(ss, p)));
  } while (next(ss, p));
  EXPECT_EQ(r.to_doubles(), want.to_doubles());
}

// ---- one_hot, cumsum -----------------------------------------------------------------

TEST(IndexValues, OneHot) {
  Graph g;
  Value i = g.add_input("i", Type{i64, {3}});
  Value y = ir::make_op("one_hot", {i}, {{"num_classes", 3}});
  rt::Bindings b{{"i", i64s({3}, {2, 0, 1})}};
  expect_array(eval(y, b), f32, {3, 3}, {0, 0, 1, 1, 0, 0, 0, 1, 0});
  b["i"] = i64s({3}, {2, 3, 1});
  EXPECT_THROW(eval(y, b), UserError);
  Graph h;
  Value s = h.add_input("s", Type{i64, {}});
  expect_array(eval(ir::make_op("one_hot", {s}, {{"num_classes", 2}, {"dtype", i64}}),
                    {{"s", i64s({}, {1})}}),
               i64, {2}, {0, 1});
}

TEST(IndexValues, Cumsum) {
  Graph g;
  Value i = g.add_input("i", Type{i64, {4}});
  expect_array(eval(ir::cumsum(i, 0), {{"i", i64s({4}, {1, 2, 3, 4})}}), i64, {4}, {1, 3, 6, 10});
  Graph h;
  Value x = h.add_input("x", Type{f64, {2, 3}});
  rt::Bindings b{{"x", f64s({2, 3}, {1, 2, 3, 4, 5, 6})}};
  expect_array(eval(ir::cumsum(x, 0), b), f64, {2, 3}, {1, 2, 3, 5, 7, 9});
  expect_array(eval(ir::cumsum(x, 1), b), f64, {2, 3}, {1, 3, 6, 4, 9, 15});
}

TEST(IndexValues, CumsumLargeAgainstNaiveLoop) {
  const Shape s{300, 7, 50};
  Graph g;
  Value x = g.add_input("x", Type{f64, s});
  Array xv = random_f64(s, 9);
  Array r = eval(ir::cumsum(x, 0), {{"x", xv}});
  for (std::int64_t i = 0; i < 7 * 50; ++i) {
    double acc = 0;
    for (std::int64_t j = 0; j < 300; ++j) {
      acc += xv.at(j * 350 + i);
      ASSERT_EQ(r.at(j * 350 + i), acc);
    }
  }
}

TEST(IndexValues, EmptyDimensions) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {3, 0}});
  Value i = g.add_input("i", Type{i64, {2, 0}});
  Value e = g.add_input("e", Type{i64, {0}});
  Value z = g.add_input("z", Type{f64, {0, 3}});
  Value m = g.add_input("m", Type{f64, {3, 2}});
  rt::Bindings b{{"x", Array(Type{f64, {3, 0}})}, {"i", Array(Type{i64, {2, 0}})},
                 {"e", Array(Type{i64, {0}})}, {"z", Array(Type{f64, {0, 3}})},
                 {"m", f64s({3, 2}, {1, 2, 3, 4, 5, 6})}};
  expect_array(eval(ir::gather(x, i, 0), b), f64, {2, 0}, {});
  expect_array(eval(ir::index_select(m, e, 0), b), f64, {0, 2}, {});
  expect_array(eval(ir::index_add(m, e, ir::index_select(m, e, 0), 0), b), f64, {3, 2},
               {1, 2, 3, 4, 5, 6});
  expect_array(eval(ir::cumsum(z, 0), b), f64, {0, 3}, {});
  expect_array(eval(ir::cumsum(x, 0), b), f64, {3, 0}, {});
  expect_array(eval(ir::matmul(z, ir::transpose_last2(z)), b), f64, {0, 0}, {});
}

// ---- creation ------------------------------------------------------------------------

Value create(Graph& g, const char* name, Attrs attrs) {
  return ir::make_op(g, ir::op(name), {}, std::move(attrs));
}

TEST(CreationValues, FullArangeEye) {
  Graph g;
  expect_array(eval(create(g, "full", {{"shape", I64List{2}}, {"dtype", f64}, {"value", 2.5}})), f64, {2},
               {2.5, 2.5});
  expect_array(eval(create(g, "full", {{"shape", I64List{2}}, {"dtype", boolean}, {"value", 0.5}})),
               boolean, {2}, {1, 1});
  expect_array(eval(create(g, "arange", {{"start", 1.0}, {"step", 0.5}, {"n", 4}, {"dtype", f64}})), f64,
               {4}, {1, 1.5, 2, 2.5});
  expect_array(eval(create(g, "arange", {{"start", 5}, {"step", -2}, {"n", 3}, {"dtype", i64}})), i64, {3},
               {5, 3, 1});
  expect_array(eval(create(g, "arange", {{"n", 0}})), f32, {0}, {});
  expect_array(eval(create(g, "eye", {{"n", 2}, {"m", 3}, {"dtype", f64}})), f64, {2, 3},
               {1, 0, 0, 0, 1, 0});
  expect_array(eval(create(g, "eye", {{"n", 3}, {"m", 2}, {"dtype", i64}})), i64, {3, 2},
               {1, 0, 0, 1, 0, 0});
  EXPECT_THROW(create(g, "full", {{"shape", I64List{-1}}}), ShapeError);
}

Array draw(const char* name, DType dtype, std::int64_t n, std::int64_t seed, Attrs extra = {}) {
  Graph g;
  extra.set("shape", I64List{n}).set("dtype", dtype).set("seed", seed);
  return eval(create(g, name, std::move(extra)));
}

TEST(CreationValues, RandomIsReproducible) {
  for (const char* name : {"random_normal", "random_uniform"}) {
    Array a = draw(name, f64, 200000, 42), b = draw(name, f64, 200000, 42), c = draw(name, f64, 200000, 43);
    EXPECT_EQ(a.to_doubles(), b.to_doubles()) << name;
    EXPECT_NE(a.to_doubles(), c.to_doubles()) << name;
    // A prefix does not depend on the total size (chunked engines).
    Array p = draw(name, f64, 1000, 42);
    for (std::int64_t i = 0; i < 1000; ++i) ASSERT_EQ(p.at(i), a.at(i)) << name;
  }
}

TEST(CreationValues, RandomGoldenValues) {
  // Pinned outputs, computed independently (a Python mt19937_64 + splitmix64 reference):
  // the engine and our conversions are fully specified, so these must not change across
  // platforms or releases (normal goes through libm log/cos/sin, hence the tolerance).
  Array u = draw("random_uniform", f64, 3, 123);
  Array n = draw("random_normal", f64, 3, 123);
  const std::vector<double> want_u{0.5570833562332169, 0.4337361486897584, 0.8118925614783588};
  const std::vector<double> want_n{-0.9892949926581466, 0.4374656715174492, -0.4633977804085115};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(u.at(i), want_u[static_cast<std::size_t>(i)]);
    EXPECT_NEAR(n.at(i), want_n[static_cast<std::size_t>(i)], 1e-13);
  }
}

void expect_moments(const Array& a, double mean, double stddev, double tol) {
  double s = 0, s2 = 0;
  const double n = static_cast<double>(a.numel());
  for (std::int64_t i = 0; i < a.numel(); ++i) s += a.at(i);
  const double m = s / n;
  for (std::int64_t i = 0; i < a.numel(); ++i) s2 += (a.at(i) - m) * (a.at(i) - m);
  EXPECT_NEAR(m, mean, tol * stddev);
  EXPECT_NEAR(std::sqrt(s2 / n), stddev, tol * stddev);
}

TEST(CreationValues, RandomStatistics) {
  const std::int64_t n = 100000;  // standard error of the mean ~ 0.003 sigma; bounds 0.02 sigma
  expect_moments(draw("random_normal", f64, n, 1), 0.0, 1.0, 0.02);
  expect_moments(draw("random_normal", f32, n, 2, {{"mean", 2.0}, {"std", 3.0}}), 2.0, 3.0, 0.02);
  Array u = draw("random_uniform", f64, n, 3, {{"low", -1.0}, {"high", 3.0}});
  expect_moments(u, 1.0, 4.0 / std::sqrt(12.0), 0.02);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_TRUE(u.at(i) >= -1.0 && u.at(i) < 3.0);
  Array uf = draw("random_uniform", f32, n, 4);
  for (std::int64_t i = 0; i < n; ++i) ASSERT_TRUE(uf.at(i) >= 0.0 && uf.at(i) < 1.0);
  // Normal tail mass: P(|z| > 2) = 0.0455.
  Array z = draw("random_normal", f64, n, 5);
  std::int64_t tail = 0;
  for (std::int64_t i = 0; i < n; ++i) tail += std::abs(z.at(i)) > 2.0;
  EXPECT_NEAR(static_cast<double>(tail) / static_cast<double>(n), 0.0455, 0.004);
}

// ---- cast ----------------------------------------------------------------------------

TEST(CreationValues, CastTruncatesAndTestsNonzero) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {6}});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  rt::Bindings b{{"x", f64s({6}, {-1.7, -0.2, 0.0, 0.5, 2.9, nan})}};
  expect_array(eval(ir::cast(x, i64), b), i64, {6}, {-1, 0, 0, 0, 2, 0});
  expect_array(eval(ir::cast(x, boolean), b), boolean, {6}, {1, 1, 0, 1, 1, 1});
  Array f = eval(ir::cast(x, f32), b);
  EXPECT_EQ(f.dtype(), f32);
  EXPECT_EQ(f.at(0), static_cast<double>(-1.7f));
  // Same dtype: make_op still builds the node (ir::cast skips it); the kernel copies.
  Graph s;
  Value y = s.add_input("y", Type{f64, {2}});
  expect_array(eval(ir::make_op("cast", {y}, {{"dtype", f64}}), {{"y", f64s({2}, {-1.5, 3.25})}}), f64,
               {2}, {-1.5, 3.25});

  Graph h;
  Value m = h.add_input("m", Type{boolean, {3}});
  Value i = h.add_input("i", Type{i64, {3}});
  rt::Bindings c{{"m", Array::from<bool>({3}, {true, false, true})}, {"i", i64s({3}, {-3, 0, 7})}};
  expect_array(eval(ir::cast(m, f32), c), f32, {3}, {1, 0, 1});
  expect_array(eval(ir::cast(i, f64), c), f64, {3}, {-3, 0, 7});
  expect_array(eval(ir::cast(i, boolean), c), boolean, {3}, {1, 0, 1});
}

}  // namespace
}  // namespace mg
