// Known values for the reduce family (reduce_*, var, logsumexp, argmax/argmin, softmax,
// log_softmax), evaluated through the interpreter: keepdim, 0-d, size-1 and size-0 axes,
// ties, NaN, large magnitudes, i64 exactness, f64 accumulation of f32, and every axis
// subset of a rank-4 tensor against a naive loop (the strided view's corner cases).
#include <gtest/gtest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/graph.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

using ir::Value;
constexpr double kInf = std::numeric_limits<double>::infinity();

Array run(Value y, const Array& x) {
  std::vector<Value> outs{y};
  return rt::evaluate(outs, {{"x", x}})[0];
}

Array f64s(Shape shape, std::vector<double> v) { return Array::from_vector(std::move(shape), v); }
Array f32s(Shape shape, std::vector<float> v) { return Array::from_vector(std::move(shape), v); }
Array i64s(Shape shape, std::vector<std::int64_t> v) { return Array::from_vector(std::move(shape), v); }

// 0, 1, 2, ... as f64.
Array iota(Shape shape) {
  Array a(Type{f64, std::move(shape)});
  for (std::int64_t i = 0; i < a.numel(); ++i) a.data<double>()[i] = static_cast<double>(i);
  return a;
}

void expect_array(const Array& a, DType dtype, const Shape& shape, const std::vector<double>& want,
                  double tol = 1e-12) {
  ASSERT_EQ(a.dtype(), dtype);
  ASSERT_EQ(a.shape(), shape);
  ASSERT_EQ(a.numel(), static_cast<std::int64_t>(want.size()));
  for (std::size_t i = 0; i < want.size(); ++i) {
    double got = a.at(static_cast<std::int64_t>(i));
    if (std::isnan(want[i])) {
      EXPECT_TRUE(std::isnan(got)) << "element " << i << " = " << got;
    } else if (std::isinf(want[i])) {
      EXPECT_EQ(got, want[i]) << "element " << i;
    } else {
      EXPECT_NEAR(got, want[i], tol * std::max(1.0, std::abs(want[i]))) << "element " << i;
    }
  }
}

// One op on one input "x".
Array reduce(std::string_view op, const Array& x, I64List axes, bool keepdim = false) {
  ir::Graph g;
  Value v = g.add_input("x", x.type());
  return run(ir::reduce(op, v, std::move(axes), keepdim), x);
}
Array apply(std::string_view op, const Array& x, Attrs attrs) {
  ir::Graph g;
  Value v = g.add_input("x", x.type());
  return run(ir::make_op(op, {v}, std::move(attrs)), x);
}
Array var(const Array& x, I64List axes, std::int64_t correction, bool keepdim = false) {
  return apply("var", x, {{"axes", std::move(axes)}, {"keepdim", keepdim}, {"correction", correction}});
}
Array along(std::string_view op, const Array& x, std::int64_t axis) { return apply(op, x, {{"axis", axis}}); }

// d sum(op(x)) / dx through the grad pass; `make` builds op(x).
template <class F>
Array grad_of_sum(const Array& x, F make) {
  ir::Graph g;
  Value v = g.add_input("x", x.type());
  Value y = make(v);
  I64List all;
  for (int d = 0; d < y.rank(); ++d) all.push_back(d);
  Value loss = ir::reduce_sum(y, all, false);
  std::vector<Value> wrt{v};
  return run(passes::grad(loss, wrt)[0], x);
}

// x = [[1,2,3],[4,5,6]]
Array m23() { return f64s({2, 3}, {1, 2, 3, 4, 5, 6}); }

TEST(ReduceValues, SumAxesAndKeepdim) {
  expect_array(reduce("reduce_sum", m23(), {1}), f64, {2}, {6, 15});
  expect_array(reduce("reduce_sum", m23(), {0}), f64, {3}, {5, 7, 9});
  expect_array(reduce("reduce_sum", m23(), {1}, true), f64, {2, 1}, {6, 15});
  expect_array(reduce("reduce_sum", m23(), {0, 1}), f64, {}, {21});
  expect_array(reduce("reduce_sum", m23(), {0, 1}, true), f64, {1, 1}, {21});
}

TEST(ReduceValues, EmptyAxisListIsIdentity) {
  expect_array(reduce("reduce_sum", m23(), {}), f64, {2, 3}, {1, 2, 3, 4, 5, 6});
  expect_array(reduce("reduce_max", f64s({}, {3.5}), {}), f64, {}, {3.5});
  expect_array(reduce("reduce_mean", f64s({}, {3.5}), {}, true), f64, {}, {3.5});
  expect_array(var(f64s({}, {3.5}), {}, 0), f64, {}, {0});
}

TEST(ReduceValues, SizeOneAxis) {
  Array x = f64s({2, 1, 3}, {1, 2, 3, 4, 5, 6});
  expect_array(reduce("reduce_sum", x, {1}), f64, {2, 3}, {1, 2, 3, 4, 5, 6});
  expect_array(reduce("reduce_prod", x, {1}, true), f64, {2, 1, 3}, {1, 2, 3, 4, 5, 6});
  expect_array(reduce("reduce_sum", x, {0, 1}), f64, {3}, {5, 7, 9});
}

TEST(ReduceValues, NonAdjacentAxes) {
  // x[i,j,k] = 12i + 4j + k; summing over i and k: 60 + 32j.
  expect_array(reduce("reduce_sum", iota({2, 3, 4}), {0, 2}), f64, {3}, {60, 92, 124});
  // Over j only: 12 (3i) ... = 36i + 12 + 3k.
  expect_array(reduce("reduce_sum", iota({2, 3, 4}), {1}), f64, {2, 4},
               {12, 15, 18, 21, 48, 51, 54, 57});
  expect_array(reduce("reduce_max", iota({2, 3, 4}), {0, 2}, true), f64, {1, 3, 1}, {15, 19, 23});
}

TEST(ReduceValues, SizeZeroExtent) {
  Array e = Array::zeros(Type{f64, {2, 0}});
  expect_array(reduce("reduce_sum", e, {1}), f64, {2}, {0, 0});
  expect_array(reduce("reduce_prod", e, {1}), f64, {2}, {1, 1});
  expect_array(reduce("reduce_mean", e, {1}), f64, {2}, {NAN, NAN});
  expect_array(reduce("reduce_max", e, {1}), f64, {2}, {-kInf, -kInf});
  expect_array(reduce("reduce_min", e, {1}, true), f64, {2, 1}, {kInf, kInf});
  expect_array(reduce("logsumexp", e, {1}), f64, {2}, {-kInf, -kInf});
  expect_array(var(e, {1}, 1), f64, {2}, {NAN, NAN});
  expect_array(reduce("reduce_sum", e, {0}), f64, {0}, {});  // no outputs at all
  Array ei = Array::zeros(Type{i64, {0, 2}});
  expect_array(reduce("reduce_max", ei, {0}), i64, {2},
               {static_cast<double>(std::numeric_limits<std::int64_t>::lowest()),
                static_cast<double>(std::numeric_limits<std::int64_t>::lowest())});
}

TEST(ReduceValues, MeanMaxMinProd) {
  Array x = f64s({2, 3}, {1, 5, 3, 4, -2, 6});
  expect_array(reduce("reduce_mean", x, {1}), f64, {2}, {3, 8.0 / 3});
  expect_array(reduce("reduce_mean", x, {0, 1}), f64, {}, {17.0 / 6});
  expect_array(reduce("reduce_max", x, {1}), f64, {2}, {5, 6});
  expect_array(reduce("reduce_max", x, {0}), f64, {3}, {4, 5, 6});
  expect_array(reduce("reduce_min", x, {1}), f64, {2}, {1, -2});
  expect_array(reduce("reduce_min", x, {0, 1}, true), f64, {1, 1}, {-2});
  expect_array(reduce("reduce_prod", x, {1}), f64, {2}, {15, -48});
  expect_array(reduce("reduce_prod", x, {0}), f64, {3}, {4, -10, 18});
}

TEST(ReduceValues, MaxMinPropagateNan) {
  Array x = f64s({2, 3}, {1, NAN, 3, 4, 5, 6});
  expect_array(reduce("reduce_max", x, {1}), f64, {2}, {NAN, 6});
  expect_array(reduce("reduce_min", x, {1}), f64, {2}, {NAN, 4});
  expect_array(reduce("reduce_max", x, {0}), f64, {3}, {4, NAN, 6});
}

TEST(ReduceValues, Int64IsExact) {
  // 2^53 + 1 is not a double: an f64 accumulator would lose the 1.
  const std::int64_t big = (std::int64_t{1} << 53) + 1;
  Array x = i64s({2, 2}, {big, 1, -3, 7});
  Array s = reduce("reduce_sum", x, {1});
  ASSERT_EQ(s.dtype(), i64);
  EXPECT_EQ(s.data<std::int64_t>()[0], big + 1);
  EXPECT_EQ(s.data<std::int64_t>()[1], 4);
  expect_array(reduce("reduce_max", x, {0}), i64, {2}, {static_cast<double>(big), 7});
  expect_array(reduce("reduce_min", x, {1}), i64, {2}, {1, -3});
  expect_array(reduce("reduce_prod", i64s({3}, {-2, 3, 5}), {0}), i64, {}, {-30});
}

TEST(ReduceValues, Float32AccumulatesInDouble) {
  // In f32, 1e8 + 1 == 1e8, so a float accumulator returns 0.
  expect_array(reduce("reduce_sum", f32s({3}, {1e8f, 1.0f, -1e8f}), {0}), f32, {}, {1});
  expect_array(reduce("reduce_mean", f32s({2, 2}, {1, 2, 3, 4}), {0}), f32, {2}, {2, 3});
}

TEST(ReduceValues, LargeReductionsUseEveryPath) {
  // A full reduction long enough to be split, a long row reduction, and a column
  // reduction wide enough for several tiles.
  const std::int64_t n = 300006;  // 3 rows of 100002 = 7 * 14286 elements
  Array x(Type{f64, {n}});
  for (std::int64_t i = 0; i < n; ++i) x.data<double>()[i] = static_cast<double>(i % 7);
  double want = 0;
  for (std::int64_t i = 0; i < n; ++i) want += static_cast<double>(i % 7);
  expect_array(reduce("reduce_sum", x, {0}), f64, {}, {want});
  expect_array(reduce("reduce_max", x, {0}), f64, {}, {6});
  expect_array(reduce("reduce_mean", x.reshaped({3, n / 3}), {1}), f64, {3}, {3, 3, 3}, 1e-6);
  Array cols = iota({400, 300});  // column j sums to 300 * (0+...+399) + 400 j
  Array s = reduce("reduce_sum", cols, {0});
  ASSERT_EQ(s.shape(), (Shape{300}));
  for (std::int64_t j = 0; j < 300; ++j) EXPECT_EQ(s.at(j), 300.0 * 399 * 400 / 2 + 400.0 * j);
}

TEST(ReduceValues, EveryAxisSubsetMatchesNaiveLoop) {
  const Shape shape{3, 1, 4, 5};
  Array x(Type{f64, shape});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<double>()[i] = std::sin(1.0 + static_cast<double>(i));
  const auto strides = strides_of(shape);
  for (int mask = 0; mask < 16; ++mask) {
    I64List axes;
    for (int d = 0; d < 4; ++d)
      if (mask & (1 << d)) axes.push_back(d);
    Shape kept_shape;
    for (int d = 0; d < 4; ++d)
      if (!(mask & (1 << d))) kept_shape.push_back(shape[static_cast<std::size_t>(d)]);
    std::vector<double> sum(static_cast<std::size_t>(numel(kept_shape)), 0.0);
    std::vector<double> mx(sum.size(), -kInf);
    for (std::int64_t i = 0; i < x.numel(); ++i) {
      std::int64_t out = 0;
      for (int d = 0; d < 4; ++d) {
        std::int64_t idx = i / strides[static_cast<std::size_t>(d)] % shape[static_cast<std::size_t>(d)];
        if (!(mask & (1 << d))) out = out * shape[static_cast<std::size_t>(d)] + idx;
      }
      sum[static_cast<std::size_t>(out)] += x.at(i);
      mx[static_cast<std::size_t>(out)] = std::max(mx[static_cast<std::size_t>(out)], x.at(i));
    }
    SCOPED_TRACE("mask " + std::to_string(mask));
    expect_array(reduce("reduce_sum", x, axes), f64, kept_shape, sum);
    expect_array(reduce("reduce_max", x, axes), f64, kept_shape, mx);
  }
}

TEST(ReduceValues, Var) {
  Array x = f64s({4}, {1, 2, 3, 4});  // mean 2.5, squared deviations sum to 5
  expect_array(var(x, {0}, 1), f64, {}, {5.0 / 3});
  expect_array(var(x, {0}, 0), f64, {}, {1.25});
  expect_array(var(x, {0}, 1, true), f64, {1}, {5.0 / 3});
  expect_array(var(f64s({1}, {7}), {0}, 1), f64, {}, {NAN});     // 0 / 0
  expect_array(var(f64s({2, 2}, {1, 2, 3, 5}), {1}, 0), f64, {2}, {0.25, 1});
  // Two passes: a large common offset does not cancel the result away.
  expect_array(var(f64s({4}, {1e9 + 1, 1e9 + 2, 1e9 + 3, 1e9 + 4}), {0}, 1), f64, {}, {5.0 / 3}, 1e-9);
}

TEST(ReduceValues, LogSumExpIsStable) {
  const double ln2 = std::log(2.0);
  expect_array(reduce("logsumexp", f64s({2}, {0, 0}), {0}), f64, {}, {ln2});
  expect_array(reduce("logsumexp", f64s({2, 2}, {1000, 1000, -1000, -1000}), {1}), f64, {2},
               {1000 + ln2, -1000 + ln2});
  expect_array(reduce("logsumexp", f64s({2, 2}, {-kInf, -kInf, kInf, 0}), {1}, true), f64, {2, 1},
               {-kInf, kInf});
  expect_array(reduce("logsumexp", f32s({2}, {100, 100}), {0}), f32, {}, {100 + ln2}, 1e-6);
}

TEST(ReduceValues, ArgmaxArgminFirstAmongTies) {
  Array x = f64s({2, 4}, {1, 3, 3, 2, 5, 0, 0, 5});
  expect_array(along("argmax", x, 1), i64, {2}, {1, 0});
  expect_array(along("argmin", x, 1), i64, {2}, {0, 1});
  expect_array(along("argmax", x, 0), i64, {4}, {1, 0, 0, 1});
  expect_array(apply("argmin", x, {{"axis", std::int64_t{0}}, {"keepdim", true}}), i64, {1, 4}, {0, 1, 1, 0});
  expect_array(along("argmax", f64s({3}, {1, NAN, 2}), 0), i64, {}, {1});
  expect_array(along("argmax", i64s({2, 1}, {4, 9}), 1), i64, {2}, {0, 0});
  expect_array(along("argmin", i64s({3}, {4, -9, -9}), 0), i64, {}, {1});
}

TEST(ReduceValues, SoftmaxAndLogSoftmax) {
  const double ln3 = std::log(3.0);
  expect_array(along("softmax", f64s({2}, {0, ln3}), 0), f64, {2}, {0.25, 0.75});
  expect_array(along("softmax", f64s({2}, {1000, 1000 + ln3}), 0), f64, {2}, {0.25, 0.75});
  expect_array(along("log_softmax", f64s({2}, {0, ln3}), 0), f64, {2}, {std::log(0.25), std::log(0.75)});
  expect_array(along("log_softmax", f64s({2}, {-1000, 0}), 0), f64, {2}, {-1000, 0});
  // Along axis 0 of [[0, 1], [ln3, 1]]: columns (0.25, 0.75) and (0.5, 0.5).
  expect_array(along("softmax", f64s({2, 2}, {0, 1, ln3, 1}), 0), f64, {2, 2}, {0.25, 0.5, 0.75, 0.5});
  expect_array(along("softmax", f64s({3}, {-kInf, 0, 0}), 0), f64, {3}, {0, 0.5, 0.5});
  expect_array(along("softmax", f64s({2}, {-kInf, -kInf}), 0), f64, {2}, {NAN, NAN});
  expect_array(along("softmax", f64s({2, 1}, {5, -7}), 1), f64, {2, 1}, {1, 1});
  expect_array(along("log_softmax", f64s({2, 1}, {5, -7}), 1), f64, {2, 1}, {0, 0});
  expect_array(along("softmax", f32s({2}, {-50, -50}), 0), f32, {2}, {0.5, 0.5}, 1e-7);
}

TEST(ReduceValues, SoftmaxWideAndMiddleAxes) {
  // Middle axis with a wide inner dimension (several tiles); every slice sums to 1.
  Array x = iota({3, 5, 300});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.data<double>()[i] = std::cos(x.data<double>()[i]);
  Array y = along("softmax", x, 1);
  Array l = along("log_softmax", x, 1);
  for (std::int64_t o = 0; o < 3; ++o)
    for (std::int64_t i = 0; i < 300; ++i) {
      double s = 0;
      for (std::int64_t r = 0; r < 5; ++r) {
        std::int64_t k = (o * 5 + r) * 300 + i;
        s += y.at(k);
        EXPECT_NEAR(std::log(y.at(k)), l.at(k), 1e-12);
      }
      EXPECT_NEAR(s, 1.0, 1e-12);
    }
}

TEST(ReduceValues, SoftmaxAndItsGradientAreTheSameOnOneThreadAndOnSeveral) {
  // Large enough to run on OpenMP threads when there are several; on one thread the
  // kernels open no OpenMP region at all (kernels::several_threads). Rows are
  // independent, so both give the same bits, and every row of the softmax sums to 1.
  for (auto [shape, axis] : {std::pair<Shape, std::int64_t>{{256, 160}, 1}, {{4, 40, 300}, 1}}) {
    Array x = iota(shape);
    for (std::int64_t i = 0; i < x.numel(); ++i) x.data<double>()[i] = std::sin(0.37 * x.data<double>()[i]);
    auto softmax_of = [&](Value v) { return ir::make_op("softmax", {v}, {{"axis", axis}}); };
    std::vector<Array> y, dx;
    const int threads = omp_get_max_threads();
    for (int t : {1, 2}) {
      omp_set_num_threads(t);
      y.push_back(along("softmax", x, axis));
      dx.push_back(grad_of_sum(x, [&](Value v) { return ir::make_op("mul", {softmax_of(v), v}, {}); }));
    }
    omp_set_num_threads(threads);
    ASSERT_EQ(y[0].nbytes(), y[1].nbytes());
    EXPECT_EQ(std::memcmp(y[0].raw(), y[1].raw(), y[0].nbytes()), 0) << to_string(x.type());
    EXPECT_EQ(std::memcmp(dx[0].raw(), dx[1].raw(), dx[0].nbytes()), 0) << to_string(x.type());
    const std::int64_t len = shape[static_cast<std::size_t>(axis)], inner = shape.back() == len ? 1 : shape.back();
    const std::int64_t outer = x.numel() / (len * inner);
    for (std::int64_t o = 0; o < outer; ++o)
      for (std::int64_t i = 0; i < inner; ++i) {
        double s = 0;
        for (std::int64_t r = 0; r < len; ++r) s += y[0].at((o * len + r) * inner + i);
        ASSERT_NEAR(s, 1.0, 1e-12) << "row " << o << ", column " << i;
      }
  }
}

TEST(ReduceValues, GradientsAtKnownPoints) {
  // Tied extrema share the cotangent evenly (as PyTorch amax/amin).
  Array x = f64s({2, 3}, {1, 3, 3, 2, 0, 2});
  expect_array(grad_of_sum(x, [](Value v) { return ir::reduce("reduce_max", v, {1}, false); }), f64, {2, 3},
               {0, 0.5, 0.5, 0.5, 0, 0.5});
  expect_array(grad_of_sum(x, [](Value v) { return ir::reduce("reduce_min", v, {0, 1}, true); }), f64, {2, 3},
               {0, 0, 0, 0, 1, 0});
  auto prod = [](Value v) { return ir::reduce("reduce_prod", v, {0}, false); };
  expect_array(grad_of_sum(f64s({3}, {2, 3, 4}), prod), f64, {3}, {12, 8, 6});
  expect_array(grad_of_sum(x, [](Value v) { return ir::reduce("reduce_mean", v, {0}, false); }), f64, {2, 3},
               {0.5, 0.5, 0.5, 0.5, 0.5, 0.5});
  // d var / dx = 2 (x - mean) / (N - 1): mean 2.5, N - 1 = 3.
  expect_array(grad_of_sum(f64s({4}, {1, 2, 3, 4}),
                           [](Value v) { return ir::make_op("var", {v}, {{"axes", I64List{0}}}); }),
               f64, {4}, {-1, -1.0 / 3, 1.0 / 3, 1});
  // d logsumexp / dx = softmax(x), also at large magnitude.
  expect_array(grad_of_sum(f64s({2, 2}, {1000, 1000, 0, std::log(3.0)}),
                           [](Value v) { return ir::reduce("logsumexp", v, {1}, false); }),
               f64, {2, 2}, {0.5, 0.5, 0.25, 0.75});
  // The rows of softmax sum to 1, so sum(softmax(x)) has gradient 0; sum(log_softmax(x))
  // has gradient 1 - n softmax(x).
  auto softmax1 = [](Value v) { return ir::make_op("softmax", {v}, {{"axis", std::int64_t{1}}}); };
  auto log_softmax1 = [](Value v) { return ir::make_op("log_softmax", {v}, {{"axis", std::int64_t{1}}}); };
  Array z = f64s({1, 2}, {0, std::log(3.0)});
  expect_array(grad_of_sum(z, softmax1), f64, {1, 2}, {0, 0});
  expect_array(grad_of_sum(z, log_softmax1), f64, {1, 2}, {0.5, -0.5});
}

TEST(ReduceValues, ShapeRules) {
  ir::Graph g;
  Value x = g.add_input("x", Type{f64, {2, 3}});
  Value b = g.add_input("b", Type{boolean, {2}});
  Value i = g.add_input("i", Type{i64, {2}});
  Value s = g.add_input("s", Type{f64, {}});
  Value e = g.add_input("e", Type{f64, {2, 0}});
  EXPECT_THROW(ir::reduce("reduce_sum", x, {1, 0}, false), ShapeError);  // not normalised
  EXPECT_THROW(ir::reduce("reduce_sum", x, {2}, false), ShapeError);
  EXPECT_THROW(ir::reduce("reduce_sum", b, {0}, false), ShapeError);
  EXPECT_THROW(ir::reduce("reduce_mean", i, {0}, false), ShapeError);
  EXPECT_THROW(ir::make_op("softmax", {s}, {{"axis", std::int64_t{0}}}), ShapeError);
  EXPECT_THROW(ir::make_op("argmax", {e}, {{"axis", std::int64_t{1}}}), ShapeError);
  EXPECT_THROW(ir::make_op("argmax", {x}, {{"axis", std::int64_t{-1}}}), ShapeError);
  EXPECT_EQ(ir::reduce("reduce_max", i, {0}, false).type(), (Type{i64, {}}));
  EXPECT_EQ(ir::make_op("argmax", {x}, {{"axis", std::int64_t{1}}, {"keepdim", true}}).type(),
            (Type{i64, {2, 1}}));
  EXPECT_EQ(ir::make_op("var", {x}, {{"axes", I64List{0}}}).type(), (Type{f64, {3}}));
}

}  // namespace
}  // namespace mg
