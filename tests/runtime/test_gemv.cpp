// One-row matmuls (ir/ops/gemv.hpp: batch-1 inference) in both executors against a plain
// f64 triple loop: both layouts of B (rows of B, and B read as a transposed view), batched,
// with k and n that leave lane, row-block and column tails (and a whole 784x128 layer).
// The two executors share the loop nest, so agreeing with each other proves nothing here.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg {
namespace {

Array randn(Type t, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> n(0.0, 1.0);
  Array a(t);
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, n(rng));
  return a;
}

struct GemvCase {
  std::int64_t batch, n, k;
  bool transposed;  // B = permute(W [batch, n, k]) rather than an input [batch, k, n]
};

class Gemv : public ::testing::TestWithParam<std::tuple<DType, rt::Backend>> {};

TEST_P(Gemv, MatchesAPlainLoop) {
  const auto [dt, backend] = GetParam();
  for (const GemvCase c : {GemvCase{1, 1, 1, false}, {1, 7, 37, true}, {1, 7, 37, false}, {2, 8, 16, true},
                           {2, 9, 17, false}, {1, 130, 33, false}, {1, 130, 33, true}, {1, 128, 784, true},
                           {1, 10, 128, true}, {3, 17, 5, false}}) {
    SCOPED_TRACE("batch " + std::to_string(c.batch) + " n " + std::to_string(c.n) + " k " + std::to_string(c.k) +
                 (c.transposed ? " B = W^T" : " B"));
    ir::Graph g;
    const Type xt{dt, {c.batch, 1, c.k}};
    const Type wt{dt, c.transposed ? Shape{c.batch, c.n, c.k} : Shape{c.batch, c.k, c.n}};
    ir::Value x = g.add_input("x", xt), w = g.add_input("w", wt);
    ir::Value b = c.transposed ? ir::make_op(g, ir::op("permute"), {w}, {{"perm", std::vector<std::int64_t>{0, 2, 1}}}) : w;
    ir::Value y = ir::make_op(g, ir::op("matmul"), {x, b});
    const Array xv = randn(xt, 1), wv = randn(wt, 2);
    const Array got = rt::compile(g, {y.id}, {}, backend).run({{"x", xv}, {"w", wv}})[0];
    ASSERT_EQ(got.type(), (Type{dt, {c.batch, 1, c.n}}));
    const double eps = dt == f32 ? FLT_EPSILON : DBL_EPSILON;
    for (std::int64_t q = 0; q < c.batch; ++q)
      for (std::int64_t j = 0; j < c.n; ++j) {
        double want = 0, mag = 0;
        for (std::int64_t p = 0; p < c.k; ++p) {
          const double wpj = c.transposed ? wv.at((q * c.n + j) * c.k + p) : wv.at((q * c.k + p) * c.n + j);
          want += xv.at(q * c.k + p) * wpj;
          mag += std::abs(xv.at(q * c.k + p) * wpj);
        }
        // Any summation order is within k ulp of the magnitudes' sum.
        ASSERT_NEAR(got.at(q * c.n + j), want, 2 * static_cast<double>(c.k) * eps * mag + 1e-300) << "j " << j;
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Executors, Gemv,
                         ::testing::Combine(::testing::Values(f32, f64),
                                            ::testing::Values(rt::Backend::interpreter, rt::Backend::c99)));

}  // namespace
}  // namespace mg
