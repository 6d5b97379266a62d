// The optimizer, measured: (1) the Fashion-MNIST training steps of examples 04 (MLP
// 784-128-10, batch 128, Adam) and 05 (the CNN, batch 64, Adam) compiled without passes
// and with the default pipeline — executed graph nodes, interpreter steps, planned peak
// bytes, median step ms; (2) pipeline time on synthetic graphs of 10k, 100k and 1M nodes
// (should grow about linearly; most synthetic nodes are dead, so a leading dce or rewrite,
// which keep only live nodes, shrink what fold and cse walk). Each size runs --repeat
// times and the fastest run is shown (wall and CPU ms): the machine may be shared, and a
// descheduled run says nothing about the passes. The last column is t(n)/t(n/10), the
// growth the issue bounds (<= 12 from 100k to 1M nodes), of the wall time and of the
// passes' own CPU time (on a shared machine the wall time also counts waits for a core).
// --pipeline SPEC times that pipeline alone on the synthetic graphs.
//   pass_pipeline [--iters N] [--warmup N] [--max-nodes N] [--threads N] [--repeat N] [--model mlp|cnn|all|none]
//                 [--pipeline SPEC]
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <cstring>
#include <ctime>
#include <random>
#include <string>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "examples/fashion_models.hpp"
#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/pass_manager.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace {

using Mlp = mg::examples::FashionMlp;
using Cnn = mg::examples::FashionCnn;

mg::Array random_f32(const mg::Shape& shape, std::uint32_t seed) {
  mg::Array a(mg::f32, shape);
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  for (float& v : a.span<float>()) v = normal(gen);
  return a;
}

// Both steps (without passes, with `pipeline`) are built and run alternately, step by
// step, so a busy machine slows both alike; medians of each.
template <class Model>
void train_step_rows(const char* name, mg::Shape x_shape, const std::string& pipeline, int warmup, int iters) {
  struct Built {
    Model model;
    mg::Graph g;
    std::optional<mg::nn::TrainStep> step;
    std::vector<double> ms;
  };
  const mg::Array xs = random_f32(x_shape, 1);
  mg::Array ys(mg::i64, {x_shape[0]});
  for (std::int64_t i = 0; i < x_shape[0]; ++i) ys.span<std::int64_t>()[static_cast<std::size_t>(i)] = i % 10;
  Built runs[2];
  for (int k = 0; k < 2; ++k) {
    Built& b = runs[k];
    mg::nn::bind(b.model, b.g, 0);
    mg::Tensor x = b.g.input("x", mg::f32, x_shape);
    mg::Tensor y = b.g.input("y", mg::i64, {x_shape[0]});
    b.step.emplace(mg::nn::compile_train(b.g, mg::nn::cross_entropy(b.model(x), y), b.model, mg::nn::Adam{.lr = 1e-3},
                                         {.passes = k ? pipeline : std::string()}));
  }
  double sink = 0;
  for (int i = 0; i < warmup + iters; ++i)
    for (Built& b : runs) {
      const auto t0 = std::chrono::steady_clock::now();
      sink += b.step->run({{"x", xs}, {"y", ys}});
      if (i >= warmup) b.ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  for (int k = 0; k < 2; ++k) {
    Built& b = runs[k];
    std::nth_element(b.ms.begin(), b.ms.begin() + iters / 2, b.ms.end());
    double pass_ms = 0;
    for (auto& st : b.step->pass_stats()) pass_ms += st.ms;
    const auto& exe = b.step->executable();
    std::printf("%-28s %-18s %7zu %8zu %10.1f %9.3f %9.2f %s\n", name, k ? pipeline.c_str() : "(none)",
                b.step->executed_graph().size(), exe.num_steps(), static_cast<double>(exe.peak_bytes()) / 1024.0,
                b.ms[static_cast<std::size_t>(iters / 2)], pass_ms, std::isfinite(sink) ? "" : "(diverged!)");
  }
  std::fflush(stdout);
}

// A synthetic graph of about `n` nodes: elementwise chains over a sliding window of
// recent values, bias broadcasts, scalar scalings (`full`), constant subexpressions and
// duplicates, matmuls now and then; the last values and every 997th are outputs.
std::unique_ptr<mg::ir::Graph> synthetic(std::size_t n, std::uint64_t seed) {
  namespace ir = mg::ir;
  auto g = std::make_unique<ir::Graph>();
  std::mt19937_64 rng(seed);
  const mg::Shape s{8, 16};
  std::vector<ir::Value> recent;
  for (int i = 0; i < 8; ++i) recent.push_back(g->add_input("x" + std::to_string(i), mg::Type{mg::f32, s}));
  ir::Value b = g->add_input("b", mg::Type{mg::f32, {16}});
  ir::Value w = g->add_input("w", mg::Type{mg::f32, {16, 16}});
  const char* unary[] = {"neg", "tanh", "sigmoid", "relu", "exp", "square"};
  const char* binary[] = {"add", "sub", "mul", "maximum"};
  auto pick = [&](std::size_t k) { return static_cast<std::size_t>(rng() % k); };
  auto any = [&] { return recent[recent.size() - 1 - pick(std::min<std::size_t>(recent.size(), 32))]; };
  while (g->size() < n) {
    ir::Value v;
    switch (pick(10)) {
      case 0: case 1: case 2: v = ir::unary(unary[pick(6)], any()); break;
      case 3: case 4: case 5: v = ir::binary(binary[pick(4)], any(), any()); break;
      case 6: v = ir::add(any(), ir::broadcast_to(b, s)); break;
      case 7: v = ir::scale(any(), 0.5); break;
      case 8: v = ir::mul(any(), ir::exp(ir::full(*g, mg::Type{mg::f32, s}, 0.1))); break;
      case 9: v = pick(4) ? ir::add(any(), any()) : ir::matmul(any(), w); break;
    }
    recent.push_back(v);
    if (recent.size() % 997 == 0) g->outputs.push_back(v.id);
  }
  for (std::size_t i = 0; i < 16; ++i) g->outputs.push_back(recent[recent.size() - 1 - i].id);
  return g;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 50, warmup = 5;
  std::size_t max_nodes = 1000000;
  int threads = 1, repeat = 3;
  std::string model = "all", only_pipeline;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--max-nodes")) max_nodes = std::stoul(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--repeat")) repeat = std::max(1, std::stoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--model")) model = argv[i + 1];
    else if (!std::strcmp(argv[i], "--pipeline")) only_pipeline = argv[i + 1];
    else {
      std::fprintf(stderr, "usage: %s [--iters N] [--warmup N] [--max-nodes N] [--threads N] [--repeat N] [--model mlp|cnn|all|none] [--pipeline SPEC]\n", argv[0]);
      return 2;
    }
  }
  omp_set_num_threads(threads);
  openblas_set_num_threads(threads);
  const std::string def(mg::passes::kDefaultPipeline);
  std::printf("== training steps (median of %d after %d warm-up)\n", iters, warmup);
  std::printf("threads: %d (OpenMP and OpenBLAS)\n", threads);
  std::printf("%-28s %-18s %7s %8s %10s %9s %9s\n", "step", "passes", "nodes", "op steps", "peak KiB", "step ms",
              "passes ms");
  if (model == "mlp" || model == "all") train_step_rows<Mlp>("MLP 784-128-10 b128 Adam", {128, 784}, def, warmup, iters);
  if (model == "cnn" || model == "all") train_step_rows<Cnn>("CNN ex05 b64 Adam", {64, 1, 28, 28}, def, warmup, iters);

  std::printf("\n== pipeline time on synthetic graphs (fastest of %d runs)\n", repeat);
  std::printf("ms: wall clock in the passes; cpu ms: the passes' thread CPU time (what the passes cost when\n"
              "other processes share the cores); growth: t(n)/t(n/10) of each, the bound is <= 12\n");
  std::vector<std::string> pipelines{def, "dce," + def, "rewrite," + def};
  if (!only_pipeline.empty()) pipelines = {only_pipeline};
  for (const std::string& pipeline : pipelines) {
    std::printf("pipeline %s\n%10s %10s %10s %10s %9s %8s %8s   per pass (cpu ms)\n", pipeline.c_str(), "nodes", "after",
                "ms", "cpu ms", "us/node", "growth", "cpu gr.");
    double previous = 0, previous_cpu = 0;
    for (std::size_t n : {std::size_t{10000}, std::size_t{100000}, std::size_t{1000000}}) {
      if (n > max_nodes) break;
      auto g = synthetic(n, 42);
      double best = 0, best_cpu = 0;
      std::size_t after = 0;
      std::string per;
      for (int rep = 0; rep < repeat; ++rep) {
        mg::passes::PipelineResult r = mg::passes::run_pipeline(*g, pipeline, {.verify = false});
        double total = 0, cpu = 0;
        std::string line;
        for (auto& s : r.stats) {
          total += s.ms;
          cpu += s.cpu_ms;
          char buf[96];
          std::snprintf(buf, sizeof buf, " %s %.1f (%zu->%zu)", s.name.c_str(), s.cpu_ms, s.nodes_before, s.nodes_after);
          line += buf;
        }
        if (rep == 0 || total < best) best = total, after = r.graph->size();
        if (rep == 0 || cpu < best_cpu) best_cpu = cpu, per = std::move(line);
      }
      char growth[16] = "", growth_cpu[16] = "";
      if (previous > 0) std::snprintf(growth, sizeof growth, "%.1f", best / previous);
      if (previous_cpu > 0) std::snprintf(growth_cpu, sizeof growth_cpu, "%.1f", best_cpu / previous_cpu);
      std::printf("%10zu %10zu %10.1f %10.1f %9.3f %8s %8s  %s\n", g->size(), after, best, best_cpu,
                  1000.0 * best / static_cast<double>(g->size()), growth, growth_cpu, per.c_str());
      std::fflush(stdout);
      previous = best;
      previous_cpu = best_cpu;
    }
  }
  return 0;
}
