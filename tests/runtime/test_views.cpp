// The interpreter reads transposes in place (runtime/view_plan.hpp): a permute whose
// every consumer is a GEMM (matmul, or a fused node's matmul prologue) never runs, and the
// GEMM reads its operand transposed. Results equal a reference computed element by
// element; a transpose some other op reads, or a transpose that is an output, still runs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/fuse.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "minigrad/runtime/memory_plan.hpp"

namespace mg::rt {
namespace {

Array random(DType dt, Shape s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Array a(Type{dt, std::move(s)});
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, u(rng));
  return a;
}

// C = op(A) @ op(B) element by element, A and B as given (op: transpose of the last two
// axes when the flag is set), batch over the leading axis of rank-3 operands.
std::vector<double> reference(const Array& a, bool ta, const Array& b, bool tb) {
  const int r = a.rank();
  const std::int64_t batch = r == 3 ? a.shape()[0] : 1;
  const std::int64_t ar = a.shape()[r - 2], ac = a.shape()[r - 1], br = b.shape()[r - 2], bc = b.shape()[r - 1];
  const std::int64_t m = ta ? ac : ar, k = ta ? ar : ac, n = tb ? br : bc;
  std::vector<double> c(static_cast<std::size_t>(batch * m * n), 0.0);
  for (std::int64_t q = 0; q < batch; ++q)
    for (std::int64_t i = 0; i < m; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (std::int64_t p = 0; p < k; ++p)
          s += a.at(q * ar * ac + (ta ? p * ac + i : i * ac + p)) * b.at(q * br * bc + (tb ? j * bc + p : p * bc + j));
        c[static_cast<std::size_t>((q * m + i) * n + j)] = s;
      }
  return c;
}

struct Case {
  DType dt;
  bool ta, tb;
  bool batched;
};

class TransposedGemm : public ::testing::TestWithParam<Case> {};

TEST_P(TransposedGemm, RunsWithoutTheTranspose) {
  const Case c = GetParam();
  const Shape lead = c.batched ? Shape{2} : Shape{};
  auto shape = [&](std::int64_t r, std::int64_t cols) {
    Shape s = lead;
    s.push_back(r);
    s.push_back(cols);
    return s;
  };
  const std::int64_t m = 5, k = 7, n = 3;
  ir::Graph g;
  ir::Value a = g.add_input("a", Type{c.dt, c.ta ? shape(k, m) : shape(m, k)});
  ir::Value b = g.add_input("b", Type{c.dt, c.tb ? shape(n, k) : shape(k, n)});
  ir::Value mm = ir::matmul(c.ta ? ir::transpose_last2(a) : a, c.tb ? ir::transpose_last2(b) : b);
  Executable exe = compile(g, {mm.id});
  EXPECT_EQ(exe.num_steps(), 1u);  // the matmul alone
  const Array av = random(c.dt, g.node(a.id).type.shape, 1), bv = random(c.dt, g.node(b.id).type.shape, 2);
  const Array out = exe.run({{"a", av}, {"b", bv}})[0];
  const std::vector<double> want = reference(av, c.ta, bv, c.tb);
  ASSERT_EQ(out.numel(), static_cast<std::int64_t>(want.size()));
  const double tol = c.dt == f32 ? 1e-5 : 1e-13;
  for (std::int64_t i = 0; i < out.numel(); ++i) EXPECT_NEAR(out.at(i), want[static_cast<std::size_t>(i)], tol) << i;
}

INSTANTIATE_TEST_SUITE_P(Views, TransposedGemm,
                         ::testing::Values(Case{f32, false, true, false}, Case{f32, true, false, false},
                                           Case{f64, true, true, false}, Case{f64, false, true, true},
                                           Case{f32, true, true, true}));

TEST(Views, TransposeOtherOpsReadIsMaterialised) {
  ir::Graph g;
  ir::Value w = g.add_input("w", Type{f64, {3, 4}});
  ir::Value x = g.add_input("x", Type{f64, {2, 4}});
  ir::Value wt = ir::transpose_last2(w);
  ir::Value y = ir::add(ir::matmul(x, wt), ir::matmul(x, wt));
  ir::Value z = ir::exp(wt);  // an elementwise reader: the transpose must exist
  Executable both = compile(g, {y.id, z.id});
  EXPECT_EQ(both.num_steps(), 5u);
  Executable gemm_only = compile(g, {y.id});
  EXPECT_EQ(gemm_only.num_steps(), 3u);  // two matmuls (CSE is not the interpreter's job) and add
  Executable out = compile(g, {wt.id, y.id});  // an output is always materialised
  EXPECT_EQ(out.num_steps(), 4u);
  const Array wv = random(f64, {3, 4}, 3), xv = random(f64, {2, 4}, 4);
  const auto r1 = both.run({{"w", wv}, {"x", xv}}), r2 = gemm_only.run({{"w", wv}, {"x", xv}});
  const auto r3 = out.run({{"w", wv}, {"x", xv}});
  const std::vector<double> want = reference(xv, false, wv, true);
  for (std::size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(r1[0].at(static_cast<std::int64_t>(i)), 2 * want[i], 1e-13);
    EXPECT_EQ(r2[0].at(static_cast<std::int64_t>(i)), r1[0].at(static_cast<std::int64_t>(i)));
    EXPECT_EQ(r3[1].at(static_cast<std::int64_t>(i)), r1[0].at(static_cast<std::int64_t>(i)));
  }
  for (std::int64_t i = 0; i < 12; ++i) EXPECT_EQ(r3[0].at(i), wv.at((i % 3) * 4 + i / 3));
}

TEST(Views, FusedMatmulPrologueReadsTheTransposeInPlace) {
  // relu(x @ w.T + bias) after fusion: one fused node, the transpose never runs.
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f32, {4, 6}});
  ir::Value w = g.add_input("w", Type{f32, {3, 6}});
  ir::Value bias = g.add_input("bias", Type{f32, {3}});
  ir::Value y = ir::unary("relu", ir::add(ir::matmul(x, ir::transpose_last2(w)), ir::broadcast_to(bias, {4, 3})));
  g.outputs = {y.id};
  auto fused = passes::fuse_elementwise(g);
  Executable exe = compile(*fused, fused->outputs);
  EXPECT_EQ(exe.num_steps(), 1u) << "the fused node alone";
  const Array xv = random(f32, {4, 6}, 5), wv = random(f32, {3, 6}, 6), bv = random(f32, {3}, 7);
  const Array out = exe.run({{"x", xv}, {"w", wv}, {"bias", bv}})[0];
  const std::vector<double> mm = reference(xv, false, wv, true);
  for (std::int64_t i = 0; i < 12; ++i)
    EXPECT_NEAR(out.at(i), std::max(0.0, mm[static_cast<std::size_t>(i)] + bv.at(i % 3)), 1e-5) << i;
}

// The backward of x @ w.T multiplies by (w.T).T: the matmul VJP takes w itself, not a
// transpose of the transpose, so w.T stays a view both GEMMs read in place (a copy of it
// would live from the forward to the backward of every Linear in a training step).
TEST(Views, TheBackwardOfALinearReadsTheWeightItself) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {4, 6}});
  ir::Value w = g.add_input("w", Type{f64, {3, 6}});
  ir::Value wt = ir::transpose_last2(w);
  ir::Value loss = ir::reduce_sum(ir::tanh(ir::matmul(x, wt)), {0, 1}, false);
  const std::vector<ir::Value> wrt{x, w};
  const std::vector<ir::Value> d = passes::grad(loss, wrt);
  const ir::OpDef* permute = &ir::op("permute");
  for (ir::NodeId id = 0; id < g.size(); ++id) {
    const ir::Node& n = g.node(id);
    if (n.op == permute) {
      EXPECT_NE(g.node(n.inputs[0]).op, permute) << "node " << id << " transposes a transpose";
    }
  }
  Executable exe = compile(g, {d[0].id});
  const Array xv = random(f64, {4, 6}, 8), wv = random(f64, {3, 6}, 9);
  const Array dx = exe.run({{"x", xv}, {"w", wv}})[0];
  const std::vector<double> y = reference(xv, false, wv, true);  // x @ w.T, [4, 3]
  for (std::int64_t i = 0; i < 4; ++i)
    for (std::int64_t j = 0; j < 6; ++j) {
      double want = 0;  // sum_k (1 - tanh(y[i, k])^2) w[k, j]
      for (std::int64_t k = 0; k < 3; ++k) {
        const double t = std::tanh(y[static_cast<std::size_t>(i * 3 + k)]);
        want += (1 - t * t) * wv.at(k * 6 + j);
      }
      EXPECT_NEAR(dx.at(i * 6 + j), want, 1e-13) << i << " " << j;
    }
  // The transpose never runs: its one reader, the forward GEMM, reads it in place.
  for (ir::NodeId id : exe.memory_plan().steps) EXPECT_NE(g.node(id).op, permute) << "node " << id;
}

}  // namespace
}  // namespace mg::rt
