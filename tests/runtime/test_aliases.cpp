// The interpreter aliases what only retypes its operand (Traits::reinterprets: reshape,
// squeeze; a permute moving size-1 axes; runtime/view_plan.hpp, plan_aliases): no kernel runs, no buffer
// is taken, and the operand's buffer lives until the alias's last reader, even when the
// operand's own readers are long done. Outputs are still copies of their own.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "minigrad/runtime/memory_plan.hpp"

namespace mg::rt {
namespace {

Array random(Shape s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Array a(Type{f64, std::move(s)});
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, u(rng));
  return a;
}

TEST(Aliases, AReshapeTakesNoBufferAndKeepsItsOperandAlive) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {4, 6}});
  ir::Value a = ir::exp(x);
  ir::Value r = ir::reshape(a, {2, 12});  // a's only reader: a's buffer must outlive r's readers
  ir::Value b = ir::neg(x);               // same size as a: would take a's buffer were it freed
  ir::Value c = ir::exp(b);
  ir::Value y = ir::add(ir::reshape(c, {2, 12}), r);
  Executable exe = compile(g, {y.id});
  const MemoryPlan& p = exe.memory_plan();
  EXPECT_EQ(p.slot_of[r.id], MemoryPlan::kNoSlot);
  EXPECT_NE(p.slot_of[a.id], p.slot_of[b.id]);
  EXPECT_NE(p.slot_of[a.id], p.slot_of[c.id]);
  EXPECT_EQ(p.peak_live_bytes, 3u * 24u * 8u);  // a, b, c; no reshape copies
  for (std::uint64_t seed : {1, 2}) {  // twice: the second run reuses the buffers
    const Array xv = random({4, 6}, seed);
    const Array out = exe.run({{"x", xv}})[0];
    ASSERT_EQ(to_string(out.type()), "f64[2,12]");
    for (std::int64_t i = 0; i < 24; ++i) EXPECT_DOUBLE_EQ(out.at(i), std::exp(-xv.at(i)) + std::exp(xv.at(i)));
  }
}

TEST(Aliases, ChainsInputsAndSizeOnePermutesAlias) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {4, 6}});
  ir::Value w = g.add_input("w", Type{f64, {6, 1}});
  ir::Value xr = ir::reshape(ir::reshape(x, {24}), {4, 1, 6});  // an input's buffer, twice retyped
  ir::Value xp = ir::permute(xr, {1, 0, 2});                      // [1, 4, 6]: same bytes
  ir::Value y = ir::matmul(ir::reshape(xp, {4, 6}), w);
  Executable exe = compile(g, {y.id});
  for (ir::NodeId id : exe.memory_plan().steps)
    if (id != y.id) EXPECT_EQ(exe.memory_plan().slot_of[id], MemoryPlan::kNoSlot) << g.node(id).op->name;
  EXPECT_EQ(exe.memory_plan().peak_live_bytes, 0u);
  const Array xv = random({4, 6}, 3), wv = random({6, 1}, 4);
  const Array out = exe.run({{"x", xv}, {"w", wv}})[0];
  for (std::int64_t i = 0; i < 4; ++i) {
    double s = 0;
    for (std::int64_t k = 0; k < 6; ++k) s += xv.at(i * 6 + k) * wv.at(k);
    EXPECT_NEAR(out.at(i), s, 1e-14);
  }
}

TEST(Aliases, APermuteOfLongAxesAndOutputsAreCopies) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {2, 3}});
  ir::Value e = ir::exp(x);
  ir::Value t = ir::permute(e, {1, 0});  // reorders elements: runs
  ir::Value r = ir::reshape(e, {3, 2});  // an output: its own buffer, not e's
  ir::Value y = ir::add(t, r);
  Executable exe = compile(g, {y.id, r.id});
  EXPECT_NE(exe.memory_plan().slot_of[t.id], MemoryPlan::kNoSlot);
  const Array x1 = random({2, 3}, 5), x2 = random({2, 3}, 6);
  const auto first = exe.run({{"x", x1}});
  const auto second = exe.run({{"x", x2}});
  for (std::int64_t i = 0; i < 6; ++i) {
    EXPECT_DOUBLE_EQ(first[1].at(i), std::exp(x1.at(i)));  // not overwritten by the second run
    EXPECT_DOUBLE_EQ(second[1].at(i), std::exp(x2.at(i)));
    const std::int64_t row = i / 2, col = i % 2;  // y[row, col] = e[col, row] + e.flat[i]
    EXPECT_DOUBLE_EQ(second[0].at(i), std::exp(x2.at(col * 3 + row)) + std::exp(x2.at(i)));
  }
}

}  // namespace
}  // namespace mg::rt
