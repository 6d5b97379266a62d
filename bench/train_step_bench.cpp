// One command, side by side in one run: our compiled training step (forward, grad
// and Adam update as ONE graph) versus the same model in libtorch, for
//   (a) MLP 784-128-10, batch 128, Adam    (example 04's recipe)
//   (b) the CNN of example 05, batch 64, Adam
// at 1 and 2 threads for both. Prints median ms per step and the ratio ours/libtorch
// (below 1: we are faster); each measurement runs in a child process of its own.
//   train_step_bench [--iters N] [--warmup N] [--only mlp|cnn] [--threads 1|2] [--no-peer] [--profile [rows]]
// --only/--threads/--no-peer narrow the run (e.g. for `perf record` of our side alone).
// --profile: our interpreter's telemetry (per op and per node) of the 1-thread steps, or
// with --threads N of the N-thread steps, after their timed runs (the timings then include
// the telemetry's clock reads).
#include <cblas.h>
#include <omp.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <string>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>
#include <minigrad/ir/printer.hpp>
#include <minigrad/runtime/glassbox/telemetry.hpp>

#include "bench/child_process.hpp"
#include "bench/ir_dump.hpp"
#include "bench/timing.hpp"
#include "bench/train_workloads.hpp"
#include "examples/fashion_models.hpp"
#if MG_BENCH_TORCH
#include "bench/torch_models.hpp"
#endif

namespace {

using mg::bench::in_child;

bool g_profile = false;
int g_profile_threads = 1;  // the thread count whose steps --profile reports
std::size_t g_profile_rows = 30;

using Mlp = mg::examples::FashionMlp;
using Cnn = mg::examples::FashionCnn;

void set_threads(int n) {
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

template <class Model>
double our_step_ms(mg::Shape x_shape, int threads, int warmup, int iters) {
  set_threads(threads);
  const bool profile = g_profile && threads == g_profile_threads;
  mg::bench::TrainStepWorkload<Model> w(x_shape, {.profile = profile});
  double sink = 0;
  const double ms = mg::bench::median_ms([&] { sink += w.run(); }, warmup, iters);
  if (!std::isfinite(sink)) throw std::runtime_error("our benchmark diverged");
  if (profile) {
    namespace gb = mg::rt::glassbox;
    mg::bench::dump_ir_for_profile("step-" + std::to_string(x_shape.size()) + "d", w.step->executable());
    std::cout << gb::telemetry_table(w.step->executable(), false, 25)
              << gb::telemetry_table(w.step->executable(), true, g_profile_rows) << std::flush;
  }
  return ms;
}

struct Workload {
  const char* name;
  double (*ours)(int threads, int warmup, int iters);
  double (*torch)(int threads, int warmup, int iters);
};

double our_mlp(int t, int w, int i) { return our_step_ms<Mlp>({128, 784}, t, w, i); }
double our_cnn(int t, int w, int i) { return our_step_ms<Cnn>({64, 1, 28, 28}, t, w, i); }

}  // namespace

int main(int argc, char** argv) {
  int iters = 200, warmup = 20, only_threads = 0;
  std::string only;  // "mlp", "cnn" or both
  bool peer = true;
  for (int i = 1; i < argc; i += 2) {
    if (!std::strcmp(argv[i], "--profile")) {
      g_profile = true;
      if (i + 1 < argc && std::isdigit(static_cast<unsigned char>(argv[i + 1][0]))) g_profile_rows = std::stoul(argv[i + 1]);
      else --i;
    } else if (!std::strcmp(argv[i], "--no-peer")) {
      peer = false;
      --i;
    } else if (i + 1 < argc && !std::strcmp(argv[i], "--only")) only = argv[i + 1];
    else if (i + 1 < argc && !std::strcmp(argv[i], "--threads")) only_threads = std::stoi(argv[i + 1]);
    else if (i + 1 < argc && !std::strcmp(argv[i], "--iters")) iters = std::stoi(argv[i + 1]);
    else if (i + 1 < argc && !std::strcmp(argv[i], "--warmup")) warmup = std::stoi(argv[i + 1]);
    else {
      std::fprintf(stderr,
                   "usage: %s [--iters N] [--warmup N] [--only mlp|cnn] [--threads 1|2] [--no-peer] [--profile [rows]]\n",
                   argv[0]);
      return 2;
    }
  }
  if (only_threads) g_profile_threads = only_threads;
#if MG_BENCH_TORCH
  const Workload workloads[] = {{"MLP 784-128-10, batch 128, Adam step", our_mlp, mg::bench::torch_mlp_step_ms},
                                {"CNN (example 05), batch 64, Adam step", our_cnn, mg::bench::torch_cnn_step_ms}};
#else
  const Workload workloads[] = {{"MLP 784-128-10, batch 128, Adam step", our_mlp, nullptr},
                                {"CNN (example 05), batch 64, Adam step", our_cnn, nullptr}};
  std::printf("libtorch not found at configure time: printing our side only (scripts/bench.sh installs it)\n");
#endif
  std::printf("median of %d steps after %d warm-up steps\n\n", iters, warmup);
  std::printf("%-40s %7s %12s %14s %16s\n", "workload", "threads", "ours ms", "libtorch ms", "ours/libtorch");
  for (const Workload& w : workloads) {
    if (!only.empty() && std::string(w.name).find(only == "mlp" ? "MLP" : "CNN") != 0) continue;
    for (int threads : {1, 2}) {
      if (only_threads && threads != only_threads) continue;
      const double ours = in_child([&] { return w.ours(threads, warmup, iters); });
      if (w.torch && peer) {
        const double ref = in_child([&] { return w.torch(threads, warmup, iters); });
        std::printf("%-40s %7d %12.3f %14.3f %16.2f\n", w.name, threads, ours, ref, ours / ref);
      } else {
        std::printf("%-40s %7d %12.3f %14s %16s\n", w.name, threads, ours, "-", "-");
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
