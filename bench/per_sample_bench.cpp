// Per-sample gradients, batch 64, of example 04's MLP and example 05's CNN, side by side in
// one run: ours as ONE graph vmap(grad(loss)) (interpreter and C99 JIT, after the default
// pass pipeline) against functorch's vmap(grad) (python3-torch 1.13, run as a child
// process: bench/functorch_per_sample.py) and against a libtorch loop of single-example
// backward passes. Same thread count for all; medians in ms and the ratios ours/peer.
//   per_sample_bench [--iters N] [--warmup N] [--threads N] [--profile]
// --profile: no table; the interpreter's per-node times of the CNN (README "Telemetry").
// --min: the fastest of the runs instead of the median (A/B checks on a busy machine).
#include <cblas.h>
#include <omp.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>
#include <minigrad/passes/pass_manager.hpp>
#include <minigrad/runtime/glassbox/telemetry.hpp>

#include "bench/child_process.hpp"
#include "bench/timing.hpp"
#include "examples/fashion_models.hpp"
#if MG_BENCH_TORCH
#include "bench/torch_per_sample.hpp"
#endif

#ifndef MG_SOURCE_ROOT
#define MG_SOURCE_ROOT "."
#endif

namespace {

using mg::bench::in_child;

constexpr std::int64_t kBatch = 64;

void set_threads(int n) {
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

// functorch's median, or -1 when python3/functorch is missing.
double functorch_ms(const char* model, int threads, int warmup, int iters) {
  const std::string cmd = "OMP_NUM_THREADS=" + std::to_string(threads) + " /usr/bin/python3 " MG_SOURCE_ROOT
                          "/bench/functorch_per_sample.py --model " + model + " --threads " + std::to_string(threads) +
                          " --iters " + std::to_string(iters) + " --warmup " + std::to_string(warmup) +
                          " --batch " + std::to_string(kBatch) + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return -1;
  double ms = -1;
  if (std::fscanf(p, "%lf", &ms) != 1) ms = -1;
  return pclose(p) == 0 ? ms : -1;
}

bool g_profile = false;
bool g_min = false;  // --min: the fastest run instead of the median (A/B checks on a busy machine)

template <class Model>
double ours_ms(mg::Shape sample, mg::Backend backend, int threads, int warmup, int iters) {
  set_threads(threads);
  Model model;
  mg::Graph g;
  mg::nn::bind(model, g, 0);
  mg::Shape xs_shape = sample;
  xs_shape.insert(xs_shape.begin(), kBatch);
  mg::Tensor X = g.input("x", mg::f32, xs_shape);
  mg::Tensor Y = g.input("y", mg::i64, {kBatch});
  std::vector<mg::Tensor> params;
  for (mg::nn::Parameter* p : mg::nn::parameters(model)) params.push_back(p->tensor);
  auto per_sample = mg::vmap(
      [&](const std::vector<mg::Tensor>& a) {
        return mg::grad(mg::nn::cross_entropy(model(a[0].unsqueeze(0)), a[1].reshape({1})), params);
      },
      {0, 0});
  std::vector<mg::Tensor> G = per_sample({X, Y});
  // The default optimizer pipeline, as a training step gets it.
  std::vector<mg::ir::NodeId> ids;
  for (auto& t : G) ids.push_back(t.value().id);
  g.ir().outputs = ids;
  auto opt = mg::passes::run_pipeline(g.ir(), mg::passes::kDefaultPipeline).graph;
  mg::rt::Executable exe = mg::rt::compile(*opt, opt->outputs, {}, backend, {.profile = g_profile});
  mg::rt::Bindings b;
  for (mg::nn::Parameter* p : mg::nn::parameters(model)) b[p->name()] = p->value();
  mg::Array x(mg::f32, xs_shape);
  std::mt19937 gen(1);
  std::normal_distribution<float> normal;
  for (float& v : x.span<float>()) v = normal(gen);
  mg::Array y(mg::i64, {kBatch});
  for (std::int64_t& v : y.span<std::int64_t>()) v = static_cast<std::int64_t>(gen() % 10);
  b["x"] = x;
  b["y"] = y;
  double sink = 0;
  double ms = 0;
  if (g_min) {
    ms = 1e300;
    for (int i = 0; i < warmup + iters; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      sink += exe.run(b)[0].at(0);
      ms = std::min(ms, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
  } else {
    ms = mg::bench::median_ms([&] { sink += exe.run(b)[0].at(0); }, warmup, iters);
  }
  if (!std::isfinite(sink)) throw std::runtime_error("per-sample gradients are not finite");
  if (g_profile && backend == mg::Backend::interpreter)
    std::printf("%s", mg::rt::glassbox::telemetry_table(exe, /*by_node=*/true, /*limit=*/40).c_str());
  if (g_profile && backend == mg::Backend::c99) std::printf("C99 source: %s\n", exe.source_path().c_str());
  return ms;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 50, warmup = 5;
  std::vector<int> thread_counts{1, 2};
  for (int i = 1; i < argc; i += 2) {
    if (!std::strcmp(argv[i], "--profile") || !std::strcmp(argv[i], "--min")) {
      (argv[i][2] == 'p' ? g_profile : g_min) = true;
      --i;
      continue;
    }
    if (i + 1 >= argc) break;
    if (!std::strcmp(argv[i], "--iters")) iters = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) thread_counts = {std::stoi(argv[i + 1])};
    else {
      std::fprintf(stderr, "usage: %s [--iters N] [--warmup N] [--threads N] [--profile] [--min]\n", argv[0]);
      return 2;
    }
  }
  using mg::examples::FashionCnn;
  using mg::examples::FashionMlp;
  if (g_profile) {
    for (int t : thread_counts) {
      std::printf("CNN per-sample gradients, interpreter, %d thread(s): %.3f ms\n", t,
                  ours_ms<FashionCnn>({1, 28, 28}, mg::Backend::interpreter, t, warmup, iters));
      std::printf("CNN per-sample gradients, C99, %d thread(s): %.3f ms\n", t,
                  ours_ms<FashionCnn>({1, 28, 28}, mg::Backend::c99, t, warmup, iters));
    }
    return 0;
  }
  struct Row {
    const char* name;
    const char* py;
    double (*ours)(mg::Backend, int, int, int);
    double (*loop)(int, int, int, int);
  };
  const Row rows[] = {
      {"MLP 784-128-10", "mlp",
       [](mg::Backend be, int t, int w, int i) { return ours_ms<FashionMlp>({784}, be, t, w, i); },
#if MG_BENCH_TORCH
       mg::bench::torch_mlp_per_sample_loop_ms},
#else
       nullptr},
#endif
      {"CNN (example 05)", "cnn",
       [](mg::Backend be, int t, int w, int i) { return ours_ms<FashionCnn>({1, 28, 28}, be, t, w, i); },
#if MG_BENCH_TORCH
       mg::bench::torch_cnn_per_sample_loop_ms},
#else
       nullptr},
#endif
  };
  std::printf("per-sample gradients, batch %lld, f32; median of %d after %d warm-up (ms)\n\n",
              static_cast<long long>(kBatch), iters, warmup);
  std::printf("%-18s %3s %9s %9s %10s %10s %11s %11s %11s\n", "model", "thr", "ours", "ours C99", "functorch",
              "torch loop", "ours/func", "C99/func", "ours/loop");
  for (const Row& r : rows) {
    for (int t : thread_counts) {
      const double ours = in_child([&] { return r.ours(mg::Backend::interpreter, t, warmup, iters); });
      const double c99 = in_child([&] { return r.ours(mg::Backend::c99, t, warmup, iters); });
      const double func = functorch_ms(r.py, t, warmup, iters);
      const double loop = r.loop ? in_child([&] { return r.loop(static_cast<int>(kBatch), t, warmup, iters); }) : -1;
      auto cell = [](double v) { return v > 0 ? std::to_string(v).substr(0, 8) : std::string("-"); };
      auto ratio = [](double a, double b) { return b > 0 ? std::to_string(a / b).substr(0, 5) : std::string("-"); };
      std::printf("%-18s %3d %9s %9s %10s %10s %11s %11s %11s\n", r.name, t, cell(ours).c_str(), cell(c99).c_str(),
                  cell(func).c_str(), cell(loop).c_str(), ratio(ours, func).c_str(), ratio(c99, func).c_str(),
                  ratio(ours, loop).c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}
