// Known-value tests for the nn family (ir/ops/nn.cpp, nn_pool.cpp): hand-computed convs (identity and
// all-ones kernels, stride, dilation, groups), the im2col/GEMM, pointwise and chunked
// paths of conv2d and both its adjoints against naive loops on many random shapes
// (integer-valued f64, so the comparison is exact), pooling values with padding,
// count_include_pad, ties and NaN, shape-rule errors, empty dims, and a timing print.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <vector>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/nn.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

using ir::Conv2dParams;
using ir::Graph;
using ir::AvgPool2dParams;
using ir::MaxPool2dParams;
using ir::Value;

Array eval(Value y, const rt::Bindings& b) {
  std::vector<Value> outs{y};
  return rt::evaluate(outs, b).at(0);
}

Array f64s(Shape shape, std::vector<double> v) { return Array::from_vector(std::move(shape), v); }
Array iota_f64(Shape shape, double start = 0, double step = 1) {
  Array a(Type{f64, std::move(shape)});
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, start + step * static_cast<double>(i));
  return a;
}
Array random_ints(Shape shape, std::uint64_t seed) {  // integers in [-5, 5]: exact sums in f64
  std::mt19937_64 bits(seed);
  Array a(Type{f64, std::move(shape)});
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, static_cast<double>(bits() % 11) - 5.0);
  return a;
}

// ---- hand-computed convs -------------------------------------------------------------

struct Conv1 {  // one conv2d(x, w) node on f64 inputs of the given shapes
  Graph g;
  Value x, w, y;
  Conv1(Shape xs, Shape ws, const Conv2dParams& p) {
    x = g.add_input("x", Type{f64, std::move(xs)});
    w = g.add_input("w", Type{f64, std::move(ws)});
    y = ir::conv2d(x, w, p);
  }
  Array run(const Array& xv, const Array& wv) { return eval(y, {{"x", xv}, {"w", wv}}); }
};

TEST(ConvValues, IdentityKernelWithPaddingIsIdentity) {
  Conv1 c({1, 1, 3, 3}, {1, 1, 3, 3}, {.padding = {1, 1}});
  Array x = iota_f64({1, 1, 3, 3}, 1);
  Array r = c.run(x, f64s({1, 1, 3, 3}, {0, 0, 0, 0, 1, 0, 0, 0, 0}));
  EXPECT_EQ(r.shape(), (Shape{1, 1, 3, 3}));
  EXPECT_EQ(r.to_doubles(), x.to_doubles());
}

TEST(ConvValues, AllOnesKernelSumsNeighbourhoods) {
  Array x = iota_f64({1, 1, 3, 3}, 1);
  Array ones = Array::full(Type{f64, {1, 1, 3, 3}}, 1.0);
  Conv1 padded({1, 1, 3, 3}, {1, 1, 3, 3}, {.padding = {1, 1}});
  EXPECT_EQ(padded.run(x, ones).to_doubles(), (std::vector<double>{12, 21, 16, 27, 45, 33, 24, 39, 28}));
  Conv1 valid({1, 1, 3, 3}, {1, 1, 3, 3}, {});
  Array r = valid.run(x, ones);
  EXPECT_EQ(r.shape(), (Shape{1, 1, 1, 1}));
  EXPECT_EQ(r.to_doubles(), (std::vector<double>{45}));
}

TEST(ConvValues, StrideSkipsPositions) {
  Conv1 c({1, 1, 4, 4}, {1, 1, 1, 1}, {.stride = {2, 2}});
  Array r = c.run(iota_f64({1, 1, 4, 4}), f64s({1, 1, 1, 1}, {2}));
  EXPECT_EQ(r.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(r.to_doubles(), (std::vector<double>{0, 4, 16, 20}));
}

TEST(ConvValues, DilationSpreadsTheKernel) {
  Conv1 c({1, 1, 5, 5}, {1, 1, 2, 2}, {.dilation = {2, 2}});
  Array r = c.run(iota_f64({1, 1, 5, 5}), Array::full(Type{f64, {1, 1, 2, 2}}, 1.0));
  EXPECT_EQ(r.shape(), (Shape{1, 1, 3, 3}));  // x[i,j] + x[i,j+2] + x[i+2,j] + x[i+2,j+2]
  EXPECT_EQ(r.to_doubles(), (std::vector<double>{24, 28, 32, 44, 48, 52, 64, 68, 72}));
}

TEST(ConvValues, GroupsKeepChannelsApart) {
  Conv1 c({1, 2, 2, 2}, {2, 1, 1, 1}, {.groups = 2});
  Array r = c.run(iota_f64({1, 2, 2, 2}, 1), f64s({2, 1, 1, 1}, {10, 100}));
  EXPECT_EQ(r.to_doubles(), (std::vector<double>{10, 20, 30, 40, 500, 600, 700, 800}));
}

TEST(ConvValues, ChannelsAreSummed) {
  Conv1 c({1, 2, 1, 1}, {3, 2, 1, 1}, {});
  Array r = c.run(f64s({1, 2, 1, 1}, {1, 2}), f64s({3, 2, 1, 1}, {1, 1, 2, -1, 0, 3}));
  EXPECT_EQ(r.to_doubles(), (std::vector<double>{3, 0, 6}));
}

TEST(ConvValues, AsymmetricStridePaddingDilation) {
  // x 1x1x3x4 = 0..11, w 1x1x1x2 = [1, 10], stride [2, 1], padding [0, 1], dilation [1, 2]:
  // y[i, j] = x[2i, j-1] + 10 x[2i, j+1] (0 outside) -> Ho = 2, Wo = 4.
  Conv1 c({1, 1, 3, 4}, {1, 1, 1, 2}, {.stride = {2, 1}, .padding = {0, 1}, .dilation = {1, 2}});
  Array r = c.run(iota_f64({1, 1, 3, 4}), f64s({1, 1, 1, 2}, {1, 10}));
  EXPECT_EQ(r.shape(), (Shape{1, 1, 2, 4}));
  EXPECT_EQ(r.to_doubles(), (std::vector<double>{10, 20, 31, 2, 90, 108, 119, 10}));
}

// ---- against naive loops -------------------------------------------------------------

struct ConvCase {
  std::int64_t N, C, H, W, O, kh, kw;
  Conv2dParams p;
};

std::int64_t out_size(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t pad, std::int64_t d) {
  return (in + 2 * pad - d * (k - 1) - 1) / s + 1;
}

// Calls f(n, o, i, j, c, a, b, xi, wi) for every product term of the conv: x flat index xi,
// w flat index wi, y index (n, o, i, j).
template <class F>
void for_terms(const ConvCase& k, F f) {
  const std::int64_t G = k.p.groups, Cg = k.C / G, Og = k.O / G;
  const std::int64_t Ho = out_size(k.H, k.kh, k.p.stride[0], k.p.padding[0], k.p.dilation[0]);
  const std::int64_t Wo = out_size(k.W, k.kw, k.p.stride[1], k.p.padding[1], k.p.dilation[1]);
  for (std::int64_t n = 0; n < k.N; ++n)
    for (std::int64_t o = 0; o < k.O; ++o)
      for (std::int64_t i = 0; i < Ho; ++i)
        for (std::int64_t j = 0; j < Wo; ++j)
          for (std::int64_t c = 0; c < Cg; ++c)
            for (std::int64_t a = 0; a < k.kh; ++a)
              for (std::int64_t b = 0; b < k.kw; ++b) {
                const std::int64_t h = i * k.p.stride[0] - k.p.padding[0] + a * k.p.dilation[0];
                const std::int64_t w = j * k.p.stride[1] - k.p.padding[1] + b * k.p.dilation[1];
                if (h < 0 || h >= k.H || w < 0 || w >= k.W) continue;
                const std::int64_t ci = (o / Og) * Cg + c;
                f(((n * k.O + o) * Ho + i) * Wo + j, ((n * k.C + ci) * k.H + h) * k.W + w,
                  ((o * Cg + c) * k.kh + a) * k.kw + b);
              }
}

TEST(ConvValues, AllPathsMatchNaiveLoops) {
  const std::vector<ConvCase> cases = {
      {2, 3, 5, 5, 4, 3, 3, {.padding = {1, 1}}},
      {2, 2, 7, 7, 3, 2, 2, {.stride = {2, 2}, .dilation = {2, 2}}},
      {1, 3, 4, 4, 3, 2, 2, {.groups = 3}},
      {3, 4, 9, 7, 6, 3, 2, {.stride = {2, 1}, .padding = {1, 0}, .dilation = {1, 2}, .groups = 2}},
      {2, 4, 10, 10, 8, 1, 1, {.groups = 2}},                      // pointwise path
      {3, 5, 9, 8, 2, 1, 1, {}},                                   // pointwise, L >= 64
      {2, 4, 6, 6, 4, 1, 1, {.stride = {2, 2}}},                   // strided 1x1: general path
      {1, 1, 1, 1, 1, 1, 1, {}},
      {2, 6, 9, 9, 6, 3, 3, {.stride = {2, 2}, .padding = {2, 2}, .groups = 3}},
      {1, 2, 3, 3, 2, 3, 3, {.padding = {2, 2}, .dilation = {2, 2}}},
      {2, 3, 5, 5, 3, 5, 5, {}},                                   // kernel covers the image
      {2, 2, 4, 9, 3, 2, 4, {.stride = {1, 3}, .padding = {1, 2}}},
      {5, 16, 64, 64, 4, 3, 3, {.padding = {1, 1}}},               // several batch chunks
      {16, 8, 14, 14, 16, 3, 3, {.padding = {1, 1}}},              // OpenMP over samples
      {8, 4, 10, 10, 4, 3, 3, {.padding = {1, 1}, .groups = 2}},   // OpenMP over samples, groups
      {6, 8, 12, 12, 8, 1, 1, {}},                                 // OpenMP over samples, pointwise
      {64, 1, 28, 28, 8, 3, 3, {.padding = {1, 1}}},               // example 05's first conv
      // vmap's per-sample weight gradient: one sample, a group per sample; C99: blocks of
      // dot products with a k tail (196), register tiles with edge rows and columns.
      {1, 12, 14, 14, 60, 3, 3, {.padding = {1, 1}, .groups = 3}},
      // The interpreter's per-sample tiles past their padded edge panel (k = 288 > 256:
      // the edge columns row at a time); its input gradient's padded edge at k = 8.
      {2, 32, 10, 10, 8, 3, 3, {.padding = {1, 1}}},
  };
  // Every case also through the C99 backend, one module for all (exact: integer values).
  // Its paths: chunks of the batch, few-row unpacked GEMMs, weight gradients summed in
  // segments of the batch, packed GEMMs threading themselves (ir/ops/nn_conv_c99.cpp).
  Graph all;
  std::vector<ir::NodeId> all_outs;
  rt::Bindings all_in;
  std::vector<std::vector<double>> expected;
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const ConvCase& k = cases[ci];
    const std::int64_t Ho = out_size(k.H, k.kh, k.p.stride[0], k.p.padding[0], k.p.dilation[0]);
    const std::int64_t Wo = out_size(k.W, k.kw, k.p.stride[1], k.p.padding[1], k.p.dilation[1]);
    const Shape xs{k.N, k.C, k.H, k.W}, ws{k.O, k.C / k.p.groups, k.kh, k.kw}, ys{k.N, k.O, Ho, Wo};
    Array x = random_ints(xs, 10 + ci), w = random_ints(ws, 20 + ci), g = random_ints(ys, 30 + ci);
    std::vector<double> y(static_cast<std::size_t>(numel(ys))), dx(static_cast<std::size_t>(x.numel())),
        dw(static_cast<std::size_t>(w.numel()));
    const double* xv = x.data<double>();
    const double* wv = w.data<double>();
    const double* gv = g.data<double>();
    for_terms(k, [&](std::int64_t yi, std::int64_t xi, std::int64_t wi) {
      y[yi] += xv[xi] * wv[wi];
      dx[xi] += gv[yi] * wv[wi];
      dw[wi] += gv[yi] * xv[xi];
    });

    Graph gr;
    Value X = gr.add_input("x", Type{f64, xs}), Wt = gr.add_input("w", Type{f64, ws});
    Value Gy = gr.add_input("g", Type{f64, ys});
    std::vector<Value> outs{ir::conv2d(X, Wt, k.p), ir::conv2d_input_grad(Gy, Wt, k.p, {k.H, k.W}),
                            ir::conv2d_weight_grad(X, Gy, k.p, {k.kh, k.kw})};
    auto r = rt::evaluate(outs, {{"x", x}, {"w", w}, {"g", g}});
    EXPECT_EQ(r[0].shape(), ys) << "case " << ci;
    EXPECT_EQ(r[0].to_doubles(), y) << "conv2d, case " << ci;
    EXPECT_EQ(r[1].to_doubles(), dx) << "conv2d_input_grad, case " << ci;
    EXPECT_EQ(r[2].to_doubles(), dw) << "conv2d_weight_grad, case " << ci;

    // f32 agrees (integer values: exact in f32 too at these sizes)
    Graph g32;
    Value X32 = g32.add_input("x", Type{f32, xs}), W32 = g32.add_input("w", Type{f32, ws});
    Value G32 = g32.add_input("g", Type{f32, ys});
    const std::vector<Value> outs32{ir::conv2d(X32, W32, k.p), ir::conv2d_input_grad(G32, W32, k.p, {k.H, k.W}),
                                    ir::conv2d_weight_grad(X32, G32, k.p, {k.kh, k.kw})};
    auto r32 = rt::evaluate(outs32, {{"x", x.cast(f32)}, {"w", w.cast(f32)}, {"g", g.cast(f32)}});
    EXPECT_EQ(r32[0].to_doubles(), y) << "conv2d f32, case " << ci;
    EXPECT_EQ(r32[1].to_doubles(), dx) << "conv2d_input_grad f32, case " << ci;
    EXPECT_EQ(r32[2].to_doubles(), dw) << "conv2d_weight_grad f32, case " << ci;

    const std::string c = std::to_string(ci);
    Value Xa = all.add_input("x" + c, Type{f64, xs}), Wa = all.add_input("w" + c, Type{f64, ws});
    Value Ga = all.add_input("g" + c, Type{f64, ys});
    for (Value v : {ir::conv2d(Xa, Wa, k.p), ir::conv2d_input_grad(Ga, Wa, k.p, {k.H, k.W}),
                    ir::conv2d_weight_grad(Xa, Ga, k.p, {k.kh, k.kw})})
      all_outs.push_back(v.id);
    all_in["x" + c] = x, all_in["w" + c] = w, all_in["g" + c] = g;
    expected.push_back(y), expected.push_back(dx), expected.push_back(dw);
  }
  const rt::Executable exe = rt::compile(all, all_outs, {}, rt::Backend::c99);
  const std::vector<Array> got = exe.run(all_in);
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i].to_doubles(), expected[i]) << "C99, case " << i / 3 << ", output " << i % 3;
}

TEST(ConvValues, EmptyBatchAndChannels) {
  {
    Graph g;
    Value x = g.add_input("x", Type{f64, {0, 3, 5, 5}}), w = g.add_input("w", Type{f64, {4, 3, 3, 3}});
    Value y = ir::conv2d(x, w, {.padding = {1, 1}});
    EXPECT_EQ(y.shape(), (Shape{0, 4, 5, 5}));
    Value dw = ir::conv2d_weight_grad(x, y, {.padding = {1, 1}}, {3, 3});
    Array r = eval(dw, {{"x", Array(Type{f64, {0, 3, 5, 5}})}, {"w", random_ints({4, 3, 3, 3}, 1)}});
    EXPECT_EQ(r.to_doubles(), std::vector<double>(108, 0.0));  // an empty sum
  }
  {
    Graph g;
    Value x = g.add_input("x", Type{f64, {2, 0, 4, 4}}), w = g.add_input("w", Type{f64, {3, 0, 3, 3}});
    Array r = eval(ir::conv2d(x, w, {}), {{"x", Array(Type{f64, {2, 0, 4, 4}})}, {"w", Array(Type{f64, {3, 0, 3, 3}})}});
    EXPECT_EQ(r.to_doubles(), std::vector<double>(2 * 3 * 2 * 2, 0.0));
  }
}

TEST(ConvValues, ShapeRulesRejectBadConvs) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {1, 4, 5, 5}});
  Value w = g.add_input("w", Type{f64, {6, 2, 3, 3}});
  Value w3 = g.add_input("w3", Type{f64, {6, 4, 7, 7}});
  Value x32 = g.add_input("x32", Type{f32, {1, 4, 5, 5}});
  Value x3 = g.add_input("x3", Type{f64, {4, 5, 5}});
  EXPECT_THROW(ir::conv2d(x, w, {}), ShapeError);                         // C/groups = 4 != 2
  EXPECT_NO_THROW(ir::conv2d(x, w, {.groups = 2}));
  EXPECT_THROW(ir::conv2d(x, w, {.groups = 3}), ShapeError);              // 4 % 3 != 0
  EXPECT_THROW(ir::conv2d(x, w, {.groups = 4}), ShapeError);              // 6 % 4 != 0
  EXPECT_THROW(ir::conv2d(x, w, {.groups = 0}), ShapeError);
  EXPECT_THROW(ir::conv2d(x, w3, {}), ShapeError);                        // kernel > input
  EXPECT_THROW(ir::conv2d(x, w, {.stride = {1}, .groups = 2}), ShapeError);
  EXPECT_THROW(ir::conv2d(x, w, {.stride = {0, 1}, .groups = 2}), ShapeError);
  EXPECT_THROW(ir::conv2d(x, w, {.padding = {-1, 0}, .groups = 2}), ShapeError);
  EXPECT_THROW(ir::conv2d(x, w, {.dilation = {1, 0}, .groups = 2}), ShapeError);
  EXPECT_THROW(ir::conv2d(x32, w, {.groups = 2}), ShapeError);            // dtypes differ
  EXPECT_THROW(ir::conv2d(x3, w, {.groups = 2}), ShapeError);             // rank 3
  Value y = ir::conv2d(x, w, {.groups = 2});                                // [1, 6, 3, 3]
  EXPECT_THROW(ir::conv2d_input_grad(y, w, {.groups = 2}, {9, 9}), ShapeError);
  EXPECT_NO_THROW(ir::conv2d_input_grad(y, w, {.groups = 2}, {5, 5}));
  EXPECT_THROW(ir::conv2d_weight_grad(x, y, {.groups = 2}, {2, 2}), ShapeError);
  EXPECT_NO_THROW(ir::conv2d_weight_grad(x, y, {.groups = 2}, {3, 3}));
}

// ---- pooling -------------------------------------------------------------------------

TEST(PoolValues, MaxPoolPadsWithMinusInfinity) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {1, 1, 3, 3}});
  MaxPool2dParams p{.kernel_size = {3, 3}, .stride = {1, 1}, .padding = {1, 1}};
  Value gy = g.add_input("g", Type{f64, {1, 1, 3, 3}});
  std::vector<Value> outs{ir::max_pool2d(x, p), ir::max_pool2d_grad(x, gy, p), ir::max_pool2d_select(x, x, p)};
  auto r = rt::evaluate(outs, {{"x", iota_f64({1, 1, 3, 3}, -1, -1)}, {"g", Array::full(Type{f64, {1, 1, 3, 3}}, 1)}});
  EXPECT_EQ(r[0].to_doubles(), (std::vector<double>{-1, -1, -2, -1, -1, -2, -4, -4, -5}));
  EXPECT_EQ(r[1].to_doubles(), (std::vector<double>{4, 2, 0, 2, 1, 0, 0, 0, 0}));
  EXPECT_EQ(r[2].to_doubles(), r[0].to_doubles());  // select(x, x) = max_pool2d(x)
}

TEST(PoolValues, MaxPoolTiesPickTheFirstMaximum) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {1, 1, 1, 4}});
  Value gy = g.add_input("g", Type{f64, {1, 1, 1, 2}});
  Value d = g.add_input("d", Type{f64, {1, 1, 1, 4}});
  MaxPool2dParams p{.kernel_size = {1, 3}, .stride = {1, 1}};
  std::vector<Value> outs{ir::max_pool2d(x, p), ir::max_pool2d_grad(x, gy, p), ir::max_pool2d_select(x, d, p)};
  auto r = rt::evaluate(outs, {{"x", f64s({1, 1, 1, 4}, {1, 5, 5, 2})},
                               {"g", f64s({1, 1, 1, 2}, {1, 10})},
                               {"d", f64s({1, 1, 1, 4}, {100, 200, 300, 400})}});
  EXPECT_EQ(r[0].to_doubles(), (std::vector<double>{5, 5}));
  EXPECT_EQ(r[1].to_doubles(), (std::vector<double>{0, 11, 0, 0}));
  EXPECT_EQ(r[2].to_doubles(), (std::vector<double>{200, 200}));

  Graph g2;
  Value x2 = g2.add_input("x", Type{f64, {1, 1, 2, 2}});
  Value g2y = g2.add_input("g", Type{f64, {1, 1, 1, 1}});
  MaxPool2dParams p2{.kernel_size = {2, 2}, .stride = {2, 2}};
  Array dx = eval(ir::max_pool2d_grad(x2, g2y, p2), {{"x", Array::full(Type{f64, {1, 1, 2, 2}}, 7)},
                                                     {"g", f64s({1, 1, 1, 1}, {3})}});
  EXPECT_EQ(dx.to_doubles(), (std::vector<double>{3, 0, 0, 0}));
}

TEST(PoolValues, MaxPoolPropagatesNaN) {
  Graph g;
  Value x = g.add_input("x", Type{f32, {1, 1, 2, 2}});
  Array xv = Array::from<float>({1, 1, 2, 2}, {1, std::numeric_limits<float>::quiet_NaN(), 3, 2});
  Array r = eval(ir::max_pool2d(x, {.kernel_size = {2, 2}, .stride = {2, 2}}), {{"x", xv}});
  EXPECT_TRUE(std::isnan(r.at(0)));
}

// The 2x2 stride-2 fast path against a window-by-window reference of the sequential rule
// (first maximum in row-major order, a later NaN replacing an earlier one), on planes with
// many ties and some NaNs, odd sizes (a last row / column no window covers), rows short
// and long enough for the vector loops' main body and tail, f32 and f64: forward values,
// the argmax routing of the gradient and of select.
TEST(PoolValues, MaxPool2x2MatchesTheSequentialRule) {
  for (DType dt : {f32, f64})
    for (const Shape& xs : {Shape{2, 3, 5, 7}, Shape{2, 3, 9, 75}}) {
      const std::int64_t H = xs[2], W = xs[3], Ho = H / 2, Wo = W / 2, planes = xs[0] * xs[1];
      const Shape ys{xs[0], xs[1], Ho, Wo};
      Graph g;
      Value x = g.add_input("x", Type{dt, xs});
      Value gy = g.add_input("g", Type{dt, ys});
      Value d = g.add_input("d", Type{dt, xs});
      MaxPool2dParams p{.kernel_size = {2, 2}, .stride = {2, 2}};
      Array xv(Type{dt, xs}), gv(Type{dt, ys}), dv(Type{dt, xs});
      std::mt19937 rng(7);
      for (std::int64_t i = 0; i < xv.numel(); ++i) {
        const auto v = rng() % 16;  // 0..2: ties everywhere; 15: a NaN now and then
        xv.set(i, v == 15 ? std::nan("") : static_cast<double>(v % 3));
        dv.set(i, static_cast<double>(i));
      }
      for (std::int64_t i = 0; i < gv.numel(); ++i) gv.set(i, static_cast<double>(i + 1));
      std::vector<Value> outs{ir::max_pool2d(x, p), ir::max_pool2d_grad(x, gy, p), ir::max_pool2d_select(x, d, p)};
      auto r = rt::evaluate(outs, {{"x", xv}, {"g", gv}, {"d", dv}});
      std::vector<double> dx(static_cast<std::size_t>(xv.numel()), 0.0);
      for (std::int64_t pl = 0; pl < planes; ++pl)
        for (std::int64_t i = 0; i < Ho; ++i)
          for (std::int64_t j = 0; j < Wo; ++j) {
            std::int64_t best = pl * H * W + 2 * i * W + 2 * j;
            for (std::int64_t h = 2 * i; h < 2 * i + 2; ++h)
              for (std::int64_t w = 2 * j; w < 2 * j + 2; ++w) {
                const std::int64_t at = pl * H * W + h * W + w;
                if (xv.at(at) > xv.at(best) || std::isnan(xv.at(at))) best = at;
              }
            const std::int64_t o = (pl * Ho + i) * Wo + j;
            if (std::isnan(xv.at(best))) EXPECT_TRUE(std::isnan(r[0].at(o))) << o;
            else EXPECT_EQ(r[0].at(o), xv.at(best)) << o;
            EXPECT_EQ(r[2].at(o), dv.at(best)) << o;
            dx[static_cast<std::size_t>(best)] += gv.at(o);
          }
      EXPECT_EQ(r[1].to_doubles(), dx) << to_string(xs);
    }
}

TEST(PoolValues, MaxPoolStridedWindowsPerPlane) {
  Graph g;
  Value x = g.add_input("x", Type{f32, {1, 2, 4, 4}});
  Array r = eval(ir::max_pool2d(x, {.kernel_size = {2, 2}, .stride = {2, 2}}), {{"x", iota_f64({1, 2, 4, 4}).cast(f32)}});
  EXPECT_EQ(r.dtype(), f32);
  EXPECT_EQ(r.shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(r.to_doubles(), (std::vector<double>{5, 7, 13, 15, 21, 23, 29, 31}));
}

TEST(PoolValues, AvgPoolCountIncludePad) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {1, 1, 3, 3}});
  AvgPool2dParams p{.kernel_size = {3, 3}, .stride = {1, 1}, .padding = {1, 1}};
  AvgPool2dParams q = p;
  q.count_include_pad = false;
  Value gy = g.add_input("g", Type{f64, {1, 1, 3, 3}});
  std::vector<Value> outs{ir::avg_pool2d(x, p), ir::avg_pool2d(x, q), ir::avg_pool2d_grad(gy, p, {3, 3}),
                          ir::avg_pool2d_grad(gy, q, {3, 3})};
  auto r = rt::evaluate(outs, {{"x", iota_f64({1, 1, 3, 3}, 1)}, {"g", Array::full(Type{f64, {1, 1, 3, 3}}, 1)}});
  std::vector<double> incl{12, 21, 16, 27, 45, 33, 24, 39, 28};
  for (auto& v : incl) v /= 9;
  EXPECT_EQ(r[0].to_doubles(), incl);
  EXPECT_EQ(r[1].to_doubles(), (std::vector<double>{3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7}));
  std::vector<double> dx_incl{4, 6, 4, 6, 9, 6, 4, 6, 4};
  for (auto& v : dx_incl) v /= 9;
  for (std::int64_t i = 0; i < 9; ++i) EXPECT_DOUBLE_EQ(r[2].at(i), dx_incl[i]) << i;
  // excluding padding: corner windows divide by 4, edges by 6, the centre by 9
  const double c = 1.0 / 4, e = 1.0 / 6, m = 1.0 / 9;
  std::vector<double> dx_excl{c + 2 * e + m,     2 * c + 3 * e + m, c + 2 * e + m,
                              2 * c + 3 * e + m, 4 * c + 4 * e + m, 2 * c + 3 * e + m,
                              c + 2 * e + m,     2 * c + 3 * e + m, c + 2 * e + m};
  for (std::int64_t i = 0; i < 9; ++i) EXPECT_NEAR(r[3].at(i), dx_excl[i], 1e-15) << i;
}

// <pool(x), g> = <x, pool_grad(g)> and <max_pool2d_grad(x, g), d> = <g, select(x, d)>,
// on random data, across strides and paddings (parallel path included).
TEST(PoolValues, GradientOpsAreAdjoints) {
  struct Case {
    Shape x;
    MaxPool2dParams p;
  };
  const std::vector<Case> cases = {
      {{2, 3, 7, 6}, {.kernel_size = {2, 2}, .stride = {2, 2}}},
      {{1, 2, 9, 8}, {.kernel_size = {3, 2}, .stride = {2, 1}, .padding = {1, 1}}},
      {{64, 8, 28, 28}, {.kernel_size = {2, 2}, .stride = {2, 2}}},
  };
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& k = cases[ci];
    for (bool include_pad : {true, false}) {
      Graph g;
      Value x = g.add_input("x", Type{f64, k.x});
      const AvgPool2dParams ap{.kernel_size = k.p.kernel_size, .stride = k.p.stride, .padding = k.p.padding,
                               .count_include_pad = include_pad};
      Value y = ir::avg_pool2d(x, ap);
      Value gy = g.add_input("g", y.type());
      Value d = g.add_input("d", Type{f64, k.x});
      std::vector<Value> outs{y, ir::avg_pool2d_grad(gy, ap, {k.x[2], k.x[3]}),
                              ir::max_pool2d_grad(x, gy, k.p), ir::max_pool2d_select(x, d, k.p)};
      Array xv = random_ints(k.x, 1 + ci), gv = random_ints(y.shape(), 2 + ci), dv = random_ints(k.x, 3 + ci);
      for (std::int64_t i = 0; i < xv.numel(); ++i) xv.set(i, xv.at(i) + 1e-3 * static_cast<double>(i % 97));
      auto r = rt::evaluate(outs, {{"x", xv}, {"g", gv}, {"d", dv}});
      auto dot = [](const Array& a, const Array& b) {
        double s = 0;
        for (std::int64_t i = 0; i < a.numel(); ++i) s += a.at(i) * b.at(i);
        return s;
      };
      EXPECT_NEAR(dot(r[0], gv), dot(xv, r[1]), 1e-9 * (1 + std::fabs(dot(r[0], gv)))) << ci;
      EXPECT_EQ(dot(r[2], dv), dot(gv, r[3])) << ci;
    }
  }
}

TEST(PoolValues, ShapeRulesRejectBadPools) {
  Graph g;
  Value x = g.add_input("x", Type{f64, {1, 2, 4, 4}});
  EXPECT_THROW(ir::max_pool2d(x, {.kernel_size = {2}, .stride = {2, 2}}), ShapeError);
  EXPECT_THROW(ir::max_pool2d(x, {.kernel_size = {2, 2}, .stride = {0, 2}}), ShapeError);
  EXPECT_THROW(ir::max_pool2d(x, {.kernel_size = {2, 2}, .stride = {2, 2}, .padding = {2, 0}}), ShapeError);
  EXPECT_THROW(ir::avg_pool2d(x, {.kernel_size = {5, 5}, .stride = {1, 1}}), ShapeError);
  EXPECT_THROW(ir::max_pool2d_grad(x, x, {.kernel_size = {2, 2}, .stride = {2, 2}}), ShapeError);
  Value i = g.add_input("i", Type{i64, {1, 2, 4, 4}});
  EXPECT_THROW(ir::max_pool2d(i, {.kernel_size = {2, 2}, .stride = {2, 2}}), ShapeError);
}

// ---- timing (printed, not asserted) --------------------------------------------------

TEST(ConvTiming, PrintsMnistCnnConvTimes) {
  struct Layer {
    const char* name;
    Shape x, w;
  };
  for (const Layer& l : {Layer{"conv 1->8 3x3 pad 1 on [64,1,28,28]", {64, 1, 28, 28}, {8, 1, 3, 3}},
                         Layer{"conv 8->16 3x3 pad 1 on [64,8,14,14]", {64, 8, 14, 14}, {16, 8, 3, 3}}}) {
    Graph g;
    Value x = g.add_input("x", Type{f32, l.x}), w = g.add_input("w", Type{f32, l.w});
    Conv2dParams p{.padding = {1, 1}};
    Value y = ir::conv2d(x, w, p);
    Value gy = g.add_input("g", y.type());
    const Array xv = random_ints(l.x, 1).cast(f32), wv = random_ints(l.w, 2).cast(f32);
    const Array gv = random_ints(y.shape(), 3).cast(f32);
    const rt::Bindings b{{"x", xv}, {"w", wv}, {"g", gv}};
    std::printf("%s:", l.name);
    for (auto [what, v] : {std::pair{"forward", y},
                           std::pair{"input_grad", ir::conv2d_input_grad(gy, w, p, {l.x[2], l.x[3]})},
                           std::pair{"weight_grad", ir::conv2d_weight_grad(x, gy, p, {l.w[2], l.w[3]})}}) {
      std::vector<Value> outs{v};
      auto exe = rt::compile(std::span<const Value>(outs));
      std::vector<double> ms;
      for (int rep = 0; rep < 30; ++rep) {
        auto t0 = std::chrono::steady_clock::now();
        exe.run(b);
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      std::sort(ms.begin(), ms.end());
      std::printf("  %s %.3f ms", what, ms[ms.size() / 2]);
    }
    std::printf("  (median of 30)\n");
  }
}

}  // namespace
}  // namespace mg
