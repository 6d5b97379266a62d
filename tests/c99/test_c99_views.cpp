// The C99 emitter's views and GEMM paths agree with the interpreter: a permute read by a
// matmul (a Linear's weight.T, the backward pass's x.T; rank 3 with batch dims too) and a
// broadcast read by a matmul or an elementwise loop are read in place (no copy loop is
// emitted), through every GEMM path: the packed, threaded one (several KC slices, a
// k that is no multiple of anything, edge tiles), the few-rows one (dot products with
// lane tails, and rows of B), f32 and f64; i64's loop reads strided operands too. Tolerances as tests/c99/test_c99_ops.cpp:
// f64 1e-12 and f32 16 ulp, relative to the array's scale.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <random>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/passes/fuse.hpp"
#include "minigrad/runtime/c99/module.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "tests/values.hpp"

namespace mg {
namespace {

using mg::testing::randn;

struct Case {
  ir::Graph g;
  rt::Bindings in;
  std::uint64_t seed = 1;
  ir::Value input(const std::string& name, Type t) {
    in[name] = randn(t, seed++);
    return g.add_input(name, t);
  }
};

void expect_agree(Case& c, DType dt) {
  const auto want = rt::compile(c.g, c.g.outputs).run(c.in);
  const auto got = rt::compile(c.g, c.g.outputs, {}, rt::Backend::c99).run(c.in);
  ASSERT_EQ(want.size(), got.size());
  const double tol = dt == f64 ? 1e-12 : dt == f32 ? 16 * FLT_EPSILON : 0.0;  // i64: exact
  for (std::size_t o = 0; o < want.size(); ++o) {
    double scale = 0;
    for (std::int64_t i = 0; i < want[o].numel(); ++i) scale = std::max(scale, std::abs(want[o].at(i)));
    for (std::int64_t i = 0; i < want[o].numel(); ++i)
      ASSERT_LE(std::abs(got[o].at(i) - want[o].at(i)), tol * std::max(scale, 1e-300))
          << "output " << o << " element " << i << " (" << to_string(want[o].type()) << ")";
  }
  // The views were read in place: no copy loop for any permute or broadcast.
  rt::c99::Options o;
  o.standalone = false;
  const std::string src = rt::c99::emit_module(c.g, c.g.outputs, {}, o).source;
  EXPECT_EQ(src.find("= permute("), std::string::npos) << src;
  EXPECT_EQ(src.find("= broadcast_to("), std::string::npos) << src;
}

class C99Views : public ::testing::TestWithParam<DType> {};

TEST_P(C99Views, TransposedOperandsThroughThePackedGemm) {
  const DType dt = GetParam();
  Case c;
  // m, n, k large enough for threads (m*n*k >= 2^18) and k > KC with a ragged last slice.
  ir::Value x = c.input("x", Type{dt, {67, 300}}), w = c.input("w", Type{dt, {45, 300}});
  ir::Value xt = c.input("xt", Type{dt, {300, 67}}), v = c.input("v", Type{dt, {300, 45}});
  c.g.outputs = {ir::matmul(x, ir::transpose_last2(w)).id,                          // B transposed
                 ir::matmul(ir::transpose_last2(xt), v).id,                         // A transposed
                 ir::matmul(ir::transpose_last2(xt), ir::transpose_last2(w)).id};   // both
  expect_agree(c, dt);
}

TEST_P(C99Views, BatchedPermutesAndBroadcastOperands) {
  const DType dt = GetParam();
  Case c;
  ir::Value a = c.input("a", Type{dt, {3, 20, 30}}), b = c.input("b", Type{dt, {3, 40, 30}});
  ir::Value p = ir::permute(b, {0, 2, 1});  // [3,30,40]
  ir::Value row = c.input("row", Type{dt, {1, 30}});
  ir::Value w = c.input("w", Type{dt, {30, 9}});
  c.g.outputs = {ir::matmul(a, p).id,
                 // every row of A the same row: zero row stride
                 ir::matmul(ir::broadcast_to(row, {20, 30}), w).id};
  expect_agree(c, dt);
}

TEST_P(C99Views, FewRowsDotProductsAndRows) {
  const DType dt = GetParam();
  Case c;
  // m = 1 and 3; k = 37 (lane tail), n = 7 (a column tail after blocks of 4), n = 130
  // (rows of B: a partial register block).
  ir::Value x1 = c.input("x1", Type{dt, {1, 37}}), w1 = c.input("w1", Type{dt, {7, 37}});
  ir::Value x3 = c.input("x3", Type{dt, {3, 37}}), w3 = c.input("w3", Type{dt, {37, 130}});
  ir::Value xs = c.input("xs", Type{dt, {37, 3}});
  c.g.outputs = {ir::matmul(x1, ir::transpose_last2(w1)).id, ir::matmul(x3, ir::transpose_last2(w1)).id,
                 ir::matmul(x3, w3).id, ir::matmul(ir::transpose_last2(xs), w3).id};
  expect_agree(c, dt);
}

TEST_P(C99Views, BroadcastsReadInPlaceByElementwiseLoops) {
  const DType dt = GetParam();
  Case c;
  ir::Value x = c.input("x", Type{dt, {20, 40}}), bias = c.input("bias", Type{dt, {40}});
  ir::Value s = c.input("s", Type{dt, {}});
  ir::Value y = ir::add(x, ir::broadcast_to(bias, {20, 40}));
  ir::Value z = ir::mul(ir::unary("tanh", y), ir::broadcast_to(s, {20, 40}));
  c.g.outputs = {y.id, z.id};
  expect_agree(c, dt);
}

// Loops written as rows of the last axis (io, ii): a row statistic [B, T, 1], a bias [C]
// and a [T, C] table broadcast over [B, T, C], unfused (views) and fused (broadcasts in
// the body), against the interpreter on the unfused graph.
TEST_P(C99Views, RowsOfTheLastAxis) {
  const DType dt = GetParam();
  Case c;
  const Shape s{3, 5, 24};
  ir::Value x = c.input("x", Type{dt, s}), stat = c.input("stat", Type{dt, {3, 5, 1}});
  ir::Value bias = c.input("bias", Type{dt, {24}}), table = c.input("table", Type{dt, {5, 24}});
  ir::Value y = ir::mul(ir::sub(x, ir::broadcast_to(stat, s)), ir::broadcast_to(bias, s));
  ir::Value z = ir::add(ir::unary("tanh", y), ir::broadcast_to(table, s));
  c.g.outputs = {y.id, z.id};
  expect_agree(c, dt);
  rt::c99::Options o;
  o.standalone = false;
  EXPECT_NE(rt::c99::emit_module(c.g, c.g.outputs, {}, o).source.find("const int64_t i = io * 24 + ii;"), std::string::npos);

  auto f = passes::fuse_elementwise(c.g);
  const auto want = rt::compile(c.g, c.g.outputs).run(c.in);
  const auto got = rt::compile(*f, f->outputs, {}, rt::Backend::c99).run(c.in);
  const double tol = dt == f64 ? 1e-12 : 16 * FLT_EPSILON;
  for (std::size_t k = 0; k < want.size(); ++k)
    for (std::int64_t i = 0; i < want[k].numel(); ++i)
      ASSERT_NEAR(got[k].at(i), want[k].at(i), tol * (1 + std::abs(want[k].at(i)))) << "fused output " << k << " [" << i << "]";
  EXPECT_NE(rt::c99::emit_module(*f, f->outputs, {}, o).source.find("const int64_t i = io * 24 + ii;"), std::string::npos);
}

TEST(C99ViewsI64, TransposedIntegerOperands) {
  Case c;
  ir::Value x = c.input("x", Type{i64, {9, 13}}), w = c.input("w", Type{i64, {5, 13}});
  ir::Value xt = c.input("xt", Type{i64, {13, 9}});
  c.g.outputs = {ir::matmul(x, ir::transpose_last2(w)).id,
                 ir::matmul(ir::transpose_last2(xt), ir::transpose_last2(w)).id};
  expect_agree(c, i64);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, C99Views, ::testing::Values(f32, f64),
                         [](const auto& info) { return std::string(name_of(info.param)); });

}  // namespace
}  // namespace mg
