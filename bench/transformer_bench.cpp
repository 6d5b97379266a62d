// Issue 16's workloads, ours and libtorch's side by side in one run (each measurement in a
// child process of its own, same thread count):
//   (a) attention forward+backward: MultiheadAttention(64, 4 heads), seq 256, batch 8
//   (b) PINN training step: 1-32-32-1 tanh, 256 collocation points, u' and u'' by grad of
//       grad w.r.t. the input, Adam (libtorch: autograd.grad with create_graph=True), f32
//   (c) miniGPT training step: examples/minigpt.hpp (ctx 64, 4 layers, 4 heads, d 128),
//       batch 16, AdamW, clipping
// Ours through the interpreter and the C99 JIT. Prints median ms and ours/libtorch.
//   transformer_bench [--iters N] [--warmup N] [--threads 1,2] [--only attention|PINN|miniGPT]
//                     [--executor interpreter|c99|none] [--no-peer] [--profile]
// --profile prints the interpreter's telemetry per op and per node (timings then include it);
// --executor (none: libtorch alone) and --no-peer narrow a run: `perf record` of one side,
// or `perf stat -e task-clock` at two --iters, whose difference is CPU time per step (on a
// busy machine, where wall time also counts the waits for a core).
#include <cblas.h>
#include <omp.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include <cstdlib>
#include <fstream>
#include <iostream>

#include <minigrad/ir/printer.hpp>

#include <minigrad/runtime/glassbox/telemetry.hpp>

#include "bench/child_process.hpp"
#include "bench/ir_dump.hpp"
#include "bench/timing.hpp"
#include "examples/minigpt.hpp"
#if MG_BENCH_TORCH
#include "bench/torch_transformer.hpp"
#endif

namespace {

using namespace mg;

bool g_profile = false;  // --profile: our interpreter's per-op telemetry after the timed runs
std::size_t g_profile_rows = 30;
void print_profile(const char* what, const rt::Executable& exe) {
  if (!g_profile) return;
  bench::dump_ir_for_profile(what, exe);
  std::cout << "== " << what << " (per op)\n" << rt::glassbox::telemetry_table(exe, false, 25)
            << "== " << what << " (per node)\n" << rt::glassbox::telemetry_table(exe, true, g_profile_rows) << std::flush;
}

struct Pinn32 {
  nn::Linear fc1{1, 32}, fc2{32, 32}, fc3{32, 1};
  Tensor operator()(const Tensor& t) const { return fc3(tanh(fc2(tanh(fc1(t))))); }
};

}  // namespace
BOOST_HANA_ADAPT_STRUCT(Pinn32, fc1, fc2, fc3);

namespace {

void set_threads(int n) {
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

Array randn(Type t, std::uint32_t seed, double scale = 1.0) {
  Array a = Array::zeros(t);
  std::mt19937 gen(seed);
  std::normal_distribution<double> normal;
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, scale * normal(gen));
  return a;
}

double our_attention(Backend backend, int threads, int warmup, int iters) {
  set_threads(threads);
  nn::MultiheadAttention mha(64, 4);
  Graph g;
  nn::bind(mha, g, 0);
  Tensor x = g.input("x", {256, 8, 64});
  Tensor loss = mha(x, x, x, {.need_weights = false}).output.sum();
  std::vector<Tensor> wrt{x};
  for (nn::Parameter* p : nn::parameters(mha)) wrt.push_back(p->tensor);
  std::vector<Tensor> outs{loss};
  for (Tensor& d : grad(loss, wrt)) outs.push_back(d);
  Executable exe = compile(g, outs, CompileOptions{.backend = backend, .profile = g_profile});
  for (nn::Parameter* p : nn::parameters(mha, /*include_buffers=*/true))
    exe.bind_live(p->name(), std::shared_ptr<const Array>(p->storage, &p->storage->value));
  const Array X = randn(Type{f32, {256, 8, 64}}, 1);
  double sink = 0;
  double ms = bench::median_ms([&] { sink += exe.run({{"x", X}})[1].at(0); }, warmup, iters);
  print_profile("attention", exe.runtime());
  return std::isfinite(sink) ? ms : -1;
}

double our_pinn(Backend backend, int threads, int warmup, int iters) {
  set_threads(threads);
  Pinn32 net;
  Graph g;
  nn::bind(net, g, 0);
  const double omega = 2.0, zeta = 0.15;
  Tensor t = g.input("t", {256, 1}), t0 = g.input("t0", {1, 1});
  Tensor u = net(t);
  Tensor du = grad(u.sum(), {t})[0];
  Tensor ddu = grad(du.sum(), {t})[0];
  Tensor u0 = net(t0);
  Tensor du0 = grad(u0.sum(), {t0})[0];
  Tensor r = (ddu + 2 * zeta * omega * du + omega * omega * u) / (omega * omega);
  Tensor loss = square(r).mean() + square(u0 - 1.0).sum() + square(du0).sum();
  auto step = nn::compile_train(g, loss, net, nn::Adam{.lr = 1e-3},
                                {.passes = "rewrite,fold,cse,fuse,dce", .backend = backend});
  Array T = Array::zeros(Type{f32, {256, 1}}), T0 = Array::zeros(Type{f32, {1, 1}});
  for (std::int64_t i = 0; i < 256; ++i) T.set(i, 4.0 * (static_cast<double>(i) + 0.5) / 256);
  double sink = 0;
  double ms = bench::median_ms([&] { sink += step.run({{"t", T}, {"t0", T0}}); }, warmup, iters);
  return std::isfinite(sink) ? ms : -1;
}

double our_minigpt(Backend backend, int threads, int warmup, int iters) {
  set_threads(threads);
  examples::GptConfig cfg;
  examples::Gpt model(cfg);
  Graph g;
  nn::bind(model, g, 0);
  Tensor x = g.input("x", i64, {16, cfg.ctx}), y = g.input("y", i64, {16, cfg.ctx});
  auto step = nn::compile_train(g, model.loss(x, y), model, nn::AdamW{.lr = 1e-3, .beta2 = 0.99, .weight_decay = 0.1},
                                {.clip_grad_norm = 1.0, .backend = backend,
                                 .profile = g_profile && backend == Backend::interpreter});
  Array X = Array::zeros(Type{i64, {16, cfg.ctx}}), Y = X.clone();
  std::mt19937 gen(3);
  for (std::int64_t i = 0; i < X.numel(); ++i) X.set(i, static_cast<double>(gen() % 96)), Y.set(i, static_cast<double>(gen() % 96));
  double sink = 0;
  double ms = bench::median_ms([&] { sink += step.run({{"x", X}, {"y", Y}}); }, warmup, iters);
  if (backend == Backend::interpreter) print_profile("miniGPT step", step.executable());
  return std::isfinite(sink) ? ms : -1;
}

struct Workload {
  const char* name;
  double (*ours)(Backend, int, int, int);
  bool c99;
  int iters_scale;  // divides --iters for the heavy workloads
#if MG_BENCH_TORCH
  double (*torch)(int, int, int);
#endif
};

}  // namespace

int main(int argc, char** argv) {
  int iters = 100, warmup = 10;
  std::vector<int> threads{1, 2};
  std::string only;  // a workload name's first word: attention, PINN, miniGPT
  std::string executor;  // empty: both
  bool peer = true;
  for (int i = 1; i < argc; i += 2) {
    if (!std::strcmp(argv[i], "--profile")) {
      g_profile = true;
      --i;
    } else if (!std::strcmp(argv[i], "--no-peer")) {
      peer = false;
      --i;
    } else if (!std::strcmp(argv[i], "--profile-rows") && i + 1 < argc) {
      g_profile = true;
      g_profile_rows = static_cast<std::size_t>(std::stoul(argv[i + 1]));
    } else if (i + 1 >= argc) {
      std::fprintf(stderr, "%s: %s needs a value\n", argv[0], argv[i]);
      return 2;
    } else if (!std::strcmp(argv[i], "--iters")) iters = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--only")) only = argv[i + 1];
    else if (!std::strcmp(argv[i], "--executor") &&
             (!std::strcmp(argv[i + 1], "interpreter") || !std::strcmp(argv[i + 1], "c99") || !std::strcmp(argv[i + 1], "none")))
      executor = argv[i + 1];
    else if (!std::strcmp(argv[i], "--threads")) {
      threads.clear();
      for (char c : std::string(argv[i + 1]))
        if (c >= '1' && c <= '9') threads.push_back(c - '0');
    } else {
      std::fprintf(stderr, "usage: %s [--iters N] [--warmup N] [--threads 1,2] [--only attention|PINN|miniGPT] [--executor interpreter|c99|none] [--no-peer] [--profile] [--profile-rows N]\n", argv[0]);
      return 2;
    }
  }
  const Workload workloads[] = {
#if MG_BENCH_TORCH
      {"attention fwd+bwd (MHA 64/4h, seq 256, b 8)", our_attention, true, 1, bench::torch_attention_ms},
      {"PINN step (256 pts, 2x32 tanh, u'')", our_pinn, true, 1, bench::torch_pinn_step_ms},
      {"miniGPT step (b 16, ctx 64, 4L 4H d128)", our_minigpt, true, 4, bench::torch_minigpt_step_ms},
#else
      {"attention fwd+bwd (MHA 64/4h, seq 256, b 8)", our_attention, true, 1},
      {"PINN step (256 pts, 2x32 tanh, u'')", our_pinn, true, 1},
      {"miniGPT step (b 16, ctx 64, 4L 4H d128)", our_minigpt, true, 4},
#endif
  };
#if !MG_BENCH_TORCH
  std::printf("libtorch not found at configure time: printing our side only (scripts/bench.sh installs it)\n");
#endif
  std::printf("median ms after warm-up; ratio = ours / libtorch (below 1: we are faster)\n\n");
  std::printf("%-44s %3s %10s %10s %10s %9s %9s\n", "workload", "thr", "ours", "ours C99", "libtorch", "ratio", "C99 ratio");
  for (const Workload& w : workloads) {
    if (!only.empty() && std::string(w.name).rfind(only, 0) != 0) continue;
    const int n = std::max(5, iters / w.iters_scale), wu = std::max(2, warmup / w.iters_scale);
    for (int t : threads) {
      const double ours =
          executor.empty() || executor == "interpreter" ? bench::in_child([&] { return w.ours(Backend::interpreter, t, wu, n); }) : -1;
      const double c99 =
          w.c99 && (executor.empty() || executor == "c99") ? bench::in_child([&] { return w.ours(Backend::c99, t, wu, n); }) : -1;
      double ref = -1;
#if MG_BENCH_TORCH
      if (peer) ref = bench::in_child([&] { return w.torch(t, wu, n); });
#endif
      auto cell = [](double v) { return v > 0 ? std::to_string(v).substr(0, 8) : std::string("-"); };
      auto ratio = [&](double v) { return v > 0 && ref > 0 ? std::to_string(v / ref).substr(0, 5) : std::string("-"); };
      std::printf("%-44s %3d %10s %10s %10s %9s %9s\n", w.name, t, cell(ours).c_str(), cell(c99).c_str(),
                  cell(ref).c_str(), ratio(ours).c_str(), ratio(c99).c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}
