// The interpreter: memory plan (exact peak bytes, buffer reuse), input validation,
// repeated runs, outputs that are inputs or constants, large parallel loops, regions.
#include <gtest/gtest.h>

#include <cmath>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/runtime/interpreter.hpp"
#include "minigrad/runtime/memory_plan.hpp"

namespace mg::rt {
namespace {

TEST(MemoryPlan, ChainReusesTwoBuffers) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {1000}});
  ir::Value v = x;
  for (int i = 0; i < 10; ++i) v = ir::exp(v);
  std::vector<ir::Value> outs{v};
  Executable exe = compile(outs);
  // Each step's result is placed before its input is released: two buffers of 8000
  // bytes are live at the worst point; the final output is not pooled.
  EXPECT_EQ(exe.peak_bytes(), 16000u);
  EXPECT_EQ(exe.num_steps(), 10u);
  MemoryPlan p = plan_memory(g, {v.id});
  EXPECT_EQ(p.slot_bytes.size(), 2u);
}

TEST(MemoryPlan, DiamondKeepsSharedValueAlive) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f32, {256}});
  ir::Value a = ir::exp(x);      // 1 KiB, read twice
  ir::Value b = ir::sin(a);
  ir::Value c = ir::cos(a);
  ir::Value d = ir::add(b, c);   // output
  MemoryPlan p = plan_memory(g, {d.id});
  EXPECT_EQ(p.peak_live_bytes, 3u * 1024u);  // a, b, c live together before d
}

TEST(Interpreter, RunsTwiceWithFreshOutputs) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {3}});
  ir::Value y = ir::scale(ir::exp(x), 2.0);
  std::vector<ir::Value> outs{y, x};
  Executable exe = compile(outs);
  Array in = Array::from<double>({3}, {0, 1, 2});
  auto r1 = exe.run({{"x", in}});
  r1[0].set(0, -1);  // callers own their outputs
  r1[1].set(0, -1);  // an input returned as output is a copy
  auto r2 = exe.run({{"x", in}});
  EXPECT_DOUBLE_EQ(r2[0].at(0), 2.0);
  EXPECT_DOUBLE_EQ(r2[1].at(0), 0.0);
  EXPECT_DOUBLE_EQ(in.at(0), 0.0);
  EXPECT_NEAR(r2[0].at(2), 2 * std::exp(2.0), 1e-12);
}

// A run writes an output into last run's buffer only once the caller has let go of it.
TEST(Interpreter, ReusesAnOutputBufferOnlyWhenReleased) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f32, {4}});
  ir::Value y = ir::exp(x);
  std::vector<ir::Value> outs{y, y};
  Executable exe = compile(outs);
  const Array zeros = Array::from<float>({4}, {0, 0, 0, 0}), ones = Array::from<float>({4}, {1, 1, 1, 1});
  auto held = exe.run({{"x", zeros}});
  const void* first = held[0].raw();
  EXPECT_EQ(held[1].raw(), first);  // one node, one value
  auto next = exe.run({{"x", ones}});
  EXPECT_NE(next[0].raw(), first);  // held: a new buffer
  EXPECT_FLOAT_EQ(held[0].at(0), 1.0f);
  EXPECT_FLOAT_EQ(next[0].at(3), std::exp(1.0f));
  const void* second = next[0].raw();
  next.clear();  // let go
  auto again = exe.run({{"x", zeros}});
  EXPECT_EQ(again[0].raw(), second);  // reused
  EXPECT_FLOAT_EQ(again[1].at(2), 1.0f);
  EXPECT_FLOAT_EQ(held[0].at(3), 1.0f);
}

TEST(Interpreter, ValidatesInputs) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {3}});
  std::vector<ir::Value> outs{ir::exp(x)};
  Executable exe = compile(outs);
  try {
    exe.run({{"x", Array::zeros(Type{f32, {3}})}});
    FAIL();
  } catch (const UserError& e) {
    std::string m = e.what();
    EXPECT_NE(m.find("input 'x'"), std::string::npos) << m;
    EXPECT_NE(m.find("f64[3]"), std::string::npos) << m;
    EXPECT_NE(m.find("f32[3]"), std::string::npos) << m;
  }
  EXPECT_THROW(exe.run({}), UserError);                                            // missing
  EXPECT_THROW(exe.run({{"x", Array::zeros(Type{f64, {4}})}}), UserError);         // shape
  EXPECT_THROW(exe.run({{"x", Array::zeros(Type{f64, {3}})}, {"y", Array()}}), UserError);  // unknown
}

TEST(Interpreter, LargeArraysTakeTheParallelPath) {
  ir::Graph g;
  const std::int64_t n = 1 << 20;
  ir::Value x = g.add_input("x", Type{f32, {n}});
  std::vector<ir::Value> outs{ir::mul(ir::sin(x), ir::sin(x))};
  Array in(Type{f32, {n}});
  for (std::int64_t i = 0; i < n; ++i) in.data<float>()[i] = static_cast<float>(i % 1000) * 0.001f;
  auto r = evaluate(outs, {{"x", in}});
  for (std::int64_t i = 0; i < n; i += 4099) {
    float s = std::sin(static_cast<float>(i % 1000) * 0.001f);
    EXPECT_NEAR(r[0].data<float>()[i], s * s, 1e-6f) << i;
  }
}

TEST(Interpreter, RunsRegions) {
  // A test-only op that applies its region (a subgraph) to its input: the interpreter
  // must hand kernels a way to run subgraphs (DESIGN invariant 7).
  static const ir::OpDef& apply = []() -> const ir::OpDef& {
    ir::op("exp");
    ir::OpDef& d = ir::define_op("test_apply_region");
    d.doc = "applies region 0 to the input (test only)";
    d.infer = [](std::span<const Type> in, const Attrs&) { return in[0]; };
    d.kernel = [](const ir::KernelArgs& k) {
      std::vector<Array> args{*k.in[0]};
      std::vector<Array> r = (*k.run_region)(0, args);
      std::memcpy(k.out.raw(), r.at(0).raw(), k.out.nbytes());
    };
    d.check_regions = [](const ir::Node& n, std::span<const Type>) {  // it owns one region
      if (n.regions.size() != 1) throw ir::TypeRuleError{"expects one region"};
    };
    d.not_differentiable = "test op";
    return d;
  }();
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {2}});
  ir::Value y = ir::make_op(apply, {x});
  auto body = std::make_unique<ir::Graph>();
  ir::Value a = body->add_input("a", Type{f64, {2}});
  body->outputs = {ir::add_scalar(ir::square(a), 1.0).id};
  g.mutable_node(y.id).regions.push_back(std::move(body));
  std::vector<ir::Value> outs{y};
  auto r = evaluate(outs, {{"x", Array::from<double>({2}, {2, 3})}});
  EXPECT_DOUBLE_EQ(r[0].at(0), 5.0);
  EXPECT_DOUBLE_EQ(r[0].at(1), 10.0);
}

}  // namespace
}  // namespace mg::rt

namespace mg::rt {
namespace {

TEST(State, UpdatesPersistAcrossRuns) {
  // acc' = acc + x; t' = t + 1; the output reads the old acc.
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {2}});
  ir::Value acc = g.add_input("acc", Type{f64, {2}});
  ir::Value t = g.add_input("t", Type{i64, {}});
  ir::Value acc_next = ir::add(acc, x);
  ir::Value t_next = ir::add(t, ir::full_like(t, 1));
  ir::Value out = ir::scale(acc, 10.0);
  Executable exe = compile(g, {out.id}, {{acc.id, acc_next.id}, {t.id, t_next.id}});
  EXPECT_EQ(exe.state_names(), (std::vector<std::string>{"acc", "t"}));
  EXPECT_THROW(exe.run({{"x", Array::from<double>({2}, {1, 2})}}), UserError);  // state never set
  exe.set_state("acc", Array::zeros(Type{f64, {2}}));
  exe.set_state("t", Array::scalar(i64, 0));
  EXPECT_THROW(exe.set_state("t", Array::scalar(f64, 0)), UserError);  // wrong type
  EXPECT_THROW(exe.set_state("nope", Array::scalar(f64, 0)), UserError);
  for (int i = 0; i < 3; ++i) {
    auto r = exe.run({{"x", Array::from<double>({2}, {1, 2})}});
    EXPECT_DOUBLE_EQ(r[0].at(1), 10.0 * 2 * i);
  }
  EXPECT_DOUBLE_EQ(exe.state("acc").at(0), 3.0);
  EXPECT_EQ(exe.state("t").at(0), 3.0);
  EXPECT_THROW(exe.run({{"x", Array::from<double>({2}, {1, 2})}, {"t", Array::scalar(i64, 0)}}), UserError);
}

TEST(State, RunByPositionMatchesRunByName) {
  ir::Graph g;
  ir::Value acc = g.add_input("acc", Type{f64, {2}});
  ir::Value x = g.add_input("x", Type{f64, {2}});
  ir::Value unused = g.add_input("unused", Type{f64, {5}});
  (void)unused;
  ir::Value out = ir::mul(acc, x);
  Executable exe = compile(g, {out.id}, {{acc.id, ir::add(acc, x).id}});
  exe.set_state("acc", Array::from<double>({2}, {1, 1}));
  const Array xv = Array::from<double>({2}, {2, 3});
  const Array* given[] = {nullptr, &xv, nullptr};  // state and the unneeded input: null
  EXPECT_DOUBLE_EQ(exe.run_by_position(given)[0].at(1), 3.0);
  EXPECT_DOUBLE_EQ(exe.run({{"x", xv}})[0].at(1), 4.0 * 3.0);  // acc was updated to [3,4]
  const Array* missing[] = {nullptr, nullptr, nullptr};
  EXPECT_THROW(exe.run_by_position(missing), UserError);
  const Array* state_given[] = {&xv, &xv, nullptr};
  EXPECT_THROW(exe.run_by_position(state_given), UserError);
  const Array* too_few[] = {nullptr, &xv};
  EXPECT_THROW(exe.run_by_position(too_few), UserError);
  const Array wrong = Array::zeros(Type{f32, {2}});
  const Array* wrong_type[] = {nullptr, &wrong, nullptr};
  EXPECT_THROW(exe.run_by_position(wrong_type), UserError);
}

TEST(State, TypeOfUpdateMustMatch) {
  ir::Graph g;
  ir::Value s = g.add_input("s", Type{f64, {2}});
  ir::Value bad = ir::reduce_sum(s, {0}, false);
  EXPECT_THROW(compile(g, {bad.id}, {{s.id, bad.id}}), UserError);
}

}  // namespace
}  // namespace mg::rt
