// Telemetry (runtime/glassbox/telemetry.hpp): the registry's FLOP counts (matmul and conv2d
// exact), per-op and per-node tables from a profiled run, the Chrome trace's events, and
// the memory plan's peak with the values live at it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/minigrad.hpp"
#include "minigrad/nn.hpp"
#include "minigrad/runtime/glassbox/telemetry.hpp"
#include "minigrad/runtime/memory_plan.hpp"

namespace mg::rt::glassbox {
namespace {

TEST(Telemetry, MatmulAndConvFlopsAreExact) {
  Graph g;
  Tensor a = g.input("a", f32, {5, 3, 7});
  Tensor b = g.input("b", f32, {5, 7, 2});
  Tensor m = matmul(a, b);
  EXPECT_EQ(node_cost(g.ir(), m.value().id).flops, 2 * 5 * 3 * 2 * 7);
  EXPECT_EQ(node_cost(g.ir(), m.value().id).bytes, 4 * (5 * 3 * 7 + 5 * 7 * 2 + 5 * 3 * 2));
  Tensor x = g.input("x", f32, {2, 3, 8, 8});
  Tensor w = g.input("w", f32, {4, 3, 3, 3});
  Tensor c = nn::conv2d(x, w, {1, 1}, {1, 1});  // [2, 4, 8, 8]: 3*3*3 multiply-adds each
  EXPECT_EQ(node_cost(g.ir(), c.value().id).flops, 2 * (2 * 4 * 8 * 8) * (3 * 3 * 3));
  Tensor e = exp(x);
  EXPECT_EQ(node_cost(g.ir(), e.value().id).flops, 2 * 3 * 8 * 8);
  Tensor r = reshape(x, {6, 64});
  EXPECT_EQ(node_cost(g.ir(), r.value().id).flops, 0);
  for (const ir::OpDef* op : ir::all_ops())  // every family op (tests may define ops of their own)
    if (op->name.rfind("test_", 0) != 0) EXPECT_TRUE(op->flops) << op->name << " has no FLOP count";
}

TEST(Telemetry, ProfiledRunTablesAndTrace) {
  Graph g;
  Tensor x = g.input("x", f32, {16, 32});
  Tensor w = g.input("w", f32, {32, 8});
  Tensor y = tanh(matmul(x, w)).sum();
  mg::Executable exe = compile(g, {y}, CompileOptions{.profile = true});
  const std::vector<Feed> feeds{{"x", Array(Type{f32, {16, 32}})}, {"w", Array(Type{f32, {32, 8}})}};
  for (int i = 0; i < 3; ++i) exe.run(feeds);
  const Profile* p = exe.runtime().profile();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->runs, 3u);
  const auto rows = telemetry_rows(exe.runtime().graph(), *p);
  ASSERT_EQ(rows.size(), 3u);  // matmul, tanh, reduce_sum
  double percent = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].calls, 3);
    percent += rows[i].percent;
    if (i) {
      EXPECT_GE(rows[i - 1].total_us, rows[i].total_us);  // sorted by time
    }
    if (rows[i].key == "matmul") EXPECT_EQ(rows[i].flops, 3 * 2 * 16 * 8 * 32);
  }
  EXPECT_NEAR(percent, 100.0, 1e-9);
  const std::string table = telemetry_table(exe.runtime());
  EXPECT_NE(table.find("matmul"), std::string::npos) << table;
  EXPECT_NE(table.find("total"), std::string::npos) << table;
  EXPECT_NE(telemetry_table(exe.runtime(), /*by_node=*/true).find("test_telemetry.cpp:"), std::string::npos);
  const auto trace = nlohmann::json::parse(chrome_trace_json(exe.runtime()));
  ASSERT_EQ(trace["traceEvents"].size(), 3u);  // the last run, node by node
  double last_end = 0;
  for (auto& e : trace["traceEvents"]) {
    EXPECT_EQ(e["ph"], "X");
    EXPECT_GE(e["ts"].get<double>(), last_end);  // in order, not overlapping
    last_end = e["ts"].get<double>() + e["dur"].get<double>();
  }
  EXPECT_EQ(trace["traceEvents"][0]["name"], "matmul");
  EXPECT_EQ(trace["traceEvents"][0]["args"]["flops"], 2 * 16 * 8 * 32);
  // Not profiled: a clear error.
  mg::Executable plain = compile(g, {y});
  EXPECT_THROW(telemetry_table(plain.runtime()), UserError);
}

TEST(Telemetry, MemoryPeakNamesTheValuesLiveAtIt) {
  ir::Graph g;
  ir::Value x = g.add_input("x", Type{f64, {1000}});
  ir::Value a = ir::exp(x);        // 8000 bytes, read by c
  ir::Value b = ir::sin(x);        // 8000
  ir::Value big = ir::broadcast_to(ir::reshape(b, {1, 1000}), {4, 1000});  // 32000: the peak
  ir::Value s = ir::reduce_sum(big, {0}, false);
  ir::Value c = ir::add(a, s);
  const MemoryPlan plan = plan_memory(g, {c.id});
  const MemoryPeak m = memory_peak(g, plan);
  EXPECT_EQ(m.peak_bytes, plan.peak_live_bytes);
  EXPECT_EQ(m.at, big.id);
  // a, b (read by reshape's view or copy) and big itself; the largest first.
  ASSERT_FALSE(m.live.empty());
  EXPECT_EQ(m.live[0], big.id);
  std::size_t sum = 0;
  for (ir::NodeId id : m.live) sum += g.node(id).type.nbytes();
  EXPECT_EQ(sum, m.peak_bytes);
  EXPECT_NE(std::find(m.live.begin(), m.live.end(), a.id), m.live.end());
  EXPECT_NE(format_memory_peak(g, m).find("memory plan peak: " + std::to_string(m.peak_bytes)), std::string::npos);
}

}  // namespace
}  // namespace mg::rt::glassbox
