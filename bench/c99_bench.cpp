// The C99 backend against the interpreter, libtorch and OpenBLAS, one process:
//   (a) MLP 784-128-10 forward, batch 1, 1 thread everywhere: median latency, C99 JIT (weights
//       bound, and frozen in) vs interpreter vs libtorch (torch::InferenceMode)
//   (b) the MLP training step (batch 128, Adam, one graph) at 1 and 2 threads: C99 JIT vs
//       interpreter vs libtorch
//   (c) f32 GEMM (the MLP's 128x784x128, square 256/512/1024) at 1 thread and all threads:
//       GFLOP/s of the standalone export's own GEMM (no BLAS; compiled -O3 -march=native
//       -fopenmp) vs OpenBLAS sgemm, calls alternating, each as a fraction of the machine's
//       FMA peak (bench/fma_peak.cpp, measured at the same thread count in the same run)
//       and of the FMA rate measured between the calls (a host that shares the cores lowers both)
//   (d) example 05's CNN training step (batch 64, Adam) at 1 and 2 threads: C99 JIT vs
//       interpreter vs libtorch
// The libtorch columns exist when libtorch-dev was found at configure time (bench/meson.build
// defines MG_BENCH_TORCH; scripts/bench.sh installs it).   c99_bench [--iters N] [--passes P] [--only abc] [--threads T]
#include <cblas.h>
#include <dlfcn.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "bench/fma_peak.hpp"
#include "bench/timing.hpp"
#include "bench/train_workloads.hpp"
#include "examples/fashion_models.hpp"
#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/runtime/c99/module.hpp"
#if MG_BENCH_TORCH
#include "bench/torch_models.hpp"
#endif

namespace {

struct Mlp {
  mg::nn::Linear fc1{784, 128}, fc2{128, 10};
  mg::Tensor operator()(const mg::Tensor& x) const { return fc2(mg::relu(fc1(x))); }
};

}  // namespace
BOOST_HANA_ADAPT_STRUCT(Mlp, fc1, fc2);
namespace {

using namespace mg;

void quiesce() { std::this_thread::sleep_for(std::chrono::milliseconds(300)); }

// OpenMP (our loops, the JIT's modules) and OpenBLAS (the interpreter's and the JIT's GEMMs).
void set_threads(int n) {
  omp_set_num_threads(n);
  openblas_set_num_threads(n);
}

Array randn(Shape s, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> n(0.f, 1.f);
  Array a(Type{f32, std::move(s)});
  for (auto& v : a.span<float>()) v = n(rng);
  return a;
}

// frozen: nn::compile_frozen (weights are constants, transposed once at compile time);
// otherwise the weights are bound inputs (nn::compile_with_parameters).
double forward_ms(Backend b, int iters, bool frozen = false) {
  Mlp model;
  Graph g;
  nn::bind(model, g, 0);
  Tensor x = g.input("x", f32, {1, 784});
  Executable exe = frozen ? nn::compile_frozen(g, {model(x)}, model, b)
                          : nn::compile_with_parameters(g, {model(x)}, nn::parameters(model, true), b);
  Array xv = randn({1, 784}, 1);
  return bench::median_ms([&] { exe.run({{"x", xv}}); }, 50, iters);
}

// The step's optimizer pipeline (--passes; default: the library's).
std::string g_passes{passes::kDefaultPipeline};

double train_ms(Backend b, int iters) {
  Mlp model;
  Graph g;
  nn::bind(model, g, 0);
  Tensor x = g.input("x", f32, {128, 784});
  Tensor y = g.input("y", i64, {128});
  auto step = nn::compile_train(g, nn::cross_entropy(model(x), y), model, nn::Adam{.lr = 1e-3}, {.passes = g_passes, .backend = b});
  Array xv = randn({128, 784}, 2), yv(Type{i64, {128}});
  for (std::int64_t i = 0; i < 128; ++i) yv.data<std::int64_t>()[i] = i % 10;
  return bench::median_ms([&] { step.run({{"x", xv}, {"y", yv}}); }, 5, iters);
}

// A standalone export (no BLAS, static arena) compiled -O3 -march=native -fopenmp as a
// shared object; returns its entry point.
void* standalone_entry(const ir::Graph& g, const std::vector<ir::NodeId>& outs, const std::string& name,
                       const std::filesystem::path& dir, rt::c99::Options o = {}) {
  o.name = name;
  const rt::c99::Module m = rt::c99::emit_module(g, outs, {}, o);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / (m.name + ".h")) << m.header;
  std::ofstream(dir / (m.name + ".c")) << m.source;
  const std::string so = (dir / (m.name + ".so")).string();
  const std::string cmd = "cc -std=c99 -O3 -march=native -fopenmp -fPIC -shared -I" + dir.string() + " " +
                          (dir / (m.name + ".c")).string() + " -o " + so + " -lm";
  if (std::system(cmd.c_str()) != 0) {
    std::fprintf(stderr, "failed: %s\n", cmd.c_str());
    std::exit(1);
  }
  void* h = dlopen(so.c_str(), RTLD_NOW);
  if (!h) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    std::exit(1);
  }
  return dlsym(h, (m.name + "_run").c_str());
}

using GemmFn = int (*)(const float*, const float*, float*);
GemmFn standalone_gemm(std::int64_t m, std::int64_t k, std::int64_t n, const std::filesystem::path& dir) {
  ir::Graph g;
  ir::Value a = g.add_input("a", Type{f32, {m, k}}), b = g.add_input("b", Type{f32, {k, n}});
  ir::Value c = ir::make_op(g, ir::op("matmul"), {a, b});
  const std::string name = "gemm" + std::to_string(m) + "x" + std::to_string(k) + "x" + std::to_string(n);
  return reinterpret_cast<GemmFn>(standalone_entry(g, {c.id}, name, dir));
}

struct Alternating {
  double f_ms, g_ms;  // medians
  double fma_gflops;  // median of the FMA bursts between the calls
};
// Medians of f's and g's times, the calls alternating (f, g, f, g, ...) so that a load
// change on a shared machine hits both sides alike, with an FMA burst (fma_peak.hpp) on
// `threads` threads as long as f's last call before each pair: the rate the cores gave
// while the calls ran.
template <class F, class G>
Alternating alternating_medians(F&& f, G&& g, int threads, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) f(), g();
  std::vector<double> tf, tg, fma;
  const auto time = [](auto& fn) {
    const auto t0 = std::chrono::steady_clock::now();
    fn();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  for (int i = 0; i < iters; ++i) {
    fma.push_back(bench::fma_burst_gflops(threads, tf.empty() ? 2e-4 : tf.back() * 1e-3));
    tf.push_back(time(f)), tg.push_back(time(g));
  }
  return {bench::median(tf), bench::median(tg), bench::median(fma)};
}

// (a) without the Executable API: the standalone export of the forward graph (weights
// embedded) called through its C entry, as a board's firmware would.
double forward_direct_ms(int iters, const std::filesystem::path& dir) {
  Mlp model;
  Graph g;
  nn::bind(model, g, 0);
  Tensor x = g.input("x", f32, {1, 784});
  Tensor y = model(x);
  rt::c99::Options o;
  for (nn::Parameter* p : nn::parameters(model, true)) o.weights.emplace(p->name(), p->value());
  using Fn = int (*)(const float*, float*);
  auto fn = reinterpret_cast<Fn>(standalone_entry(g.ir(), {y.value().id}, "mlp_fwd", dir, o));
  Array xv = randn({1, 784}, 1), out(Type{f32, {1, 10}});
  return bench::median_ms([&] { fn(xv.data<float>(), out.data<float>()); }, 50, iters);
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 200;
  std::string only = "abcd";  // --only: which parts run (e.g. "a", "bc")
  std::vector<int> train_threads{1, 2};  // --threads: (b) at this thread count only
  for (int i = 1; i + 1 < argc; ++i)
    if (std::string(argv[i]) == "--iters") iters = std::atoi(argv[i + 1]);
    else if (std::string(argv[i]) == "--passes") g_passes = argv[i + 1];
    else if (std::string(argv[i]) == "--only") only = argv[i + 1];
    else if (std::string(argv[i]) == "--threads") train_threads = {std::atoi(argv[i + 1])};

  const int max_threads = omp_get_max_threads();
  const auto dir = std::filesystem::temp_directory_path() / ("mg_c99_bench_" + std::to_string(::getpid()));
  const auto part = [&](char c) { return only.find(c) != std::string::npos; };
  if (part('a')) {
    std::printf("(a) MLP 784-128-10 forward, batch 1, 1 thread everywhere (median of %d)\n", iters);
    set_threads(1);
    const double fi = forward_ms(Backend::interpreter, iters), fc = forward_ms(Backend::c99, iters);
    const double ff = forward_ms(Backend::c99, iters, /*frozen=*/true);
    std::printf("    interpreter %8.4f ms   c99 %8.4f ms   c99/interpreter %.3f\n", fi, fc, fc / fi);
    std::printf("    c99 frozen (nn::compile_frozen) %8.4f ms\n", ff);
#if MG_BENCH_TORCH
    const double ft = bench::torch_mlp_forward_ms(1, 50, iters);
    std::printf("    libtorch (InferenceMode, 1 thread) %8.4f ms   c99/libtorch %.3f   c99 frozen/libtorch %.3f   "
                "interpreter/libtorch %.3f\n", ft, fc / ft, ff / ft, fi / ft);
#else
    std::printf("    libtorch: not found at configure time (scripts/bench.sh installs libtorch-dev)\n");
#endif
    const double fd = forward_direct_ms(iters, dir);
    std::printf("    standalone export called directly (weights embedded, no BLAS) %8.4f ms\n", fd);

  }
  if (part('b')) {
    const int titers = std::max(10, iters / 10);
    std::printf("(b) MLP training step, batch 128, Adam, passes \"%s\" (median of %d)\n", g_passes.c_str(), titers);
    for (int threads : train_threads) {
      set_threads(threads);
      // Each side starts on a quiet machine: OpenBLAS's idle threads spin (sched_yield) for
      // tens of ms after a call and would steal the cores from the next side's threads.
      quiesce();
      const double tc = train_ms(Backend::c99, titers);
      quiesce();
      const double ti = train_ms(Backend::interpreter, titers);
      std::printf("    %d thread%s: interpreter %8.3f ms   c99 %8.3f ms   c99/interpreter %.3f\n", threads,
                  threads == 1 ? " " : "s", ti, tc, tc / ti);
#if MG_BENCH_TORCH
      quiesce();
      const double tt = bench::torch_mlp_step_ms(threads, 5, titers);
      std::printf("               libtorch    %8.3f ms   c99/libtorch %.3f   interpreter/libtorch %.3f\n", tt, tc / tt,
                  ti / tt);
#endif
    }
  }
  set_threads(max_threads);

  if (part('c')) {
    std::vector<int> gemm_threads{1};
    if (max_threads > 1) gemm_threads.push_back(max_threads);
    std::printf("(c) f32 GEMM, the standalone export's (no BLAS) vs OpenBLAS sgemm, calls alternating (medians)\n");
    struct Shape3 {
      std::int64_t m, k, n;
    };
    for (int threads : gemm_threads) {
      set_threads(threads);
      quiesce();
      const double peak = bench::fma_peak_gflops(threads);
      std::printf("    %d thread%s: FMA peak (%s, measured: the best of 200 bursts) %7.1f GFLOP/s; \"FMA now\": the "
                  "median burst between the calls\n",
                  threads, threads == 1 ? "" : "s", bench::fma_peak_isa(), peak);
      for (Shape3 sh : {Shape3{128, 784, 128}, Shape3{256, 256, 256}, Shape3{512, 512, 512}, Shape3{1024, 1024, 1024}}) {
        GemmFn ours = standalone_gemm(sh.m, sh.k, sh.n, dir);
        Array a = randn({sh.m, sh.k}, 3), b = randn({sh.k, sh.n}, 4), c(Type{f32, {sh.m, sh.n}}), d(Type{f32, {sh.m, sh.n}});
        const double flop = 2.0 * double(sh.m) * double(sh.k) * double(sh.n);
        const int reps = std::clamp(static_cast<int>(2e10 / flop), 21, 401);
        const int m = static_cast<int>(sh.m), k = static_cast<int>(sh.k), n = static_cast<int>(sh.n);
        quiesce();
        const auto [ms_ours, ms_blas, fma_now] = alternating_medians(
            [&] { ours(a.data<float>(), b.data<float>(), c.data<float>()); },
            [&] {
              cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.f, a.data<float>(), k, b.data<float>(), n,
                          0.f, d.data<float>(), n);
            },
            threads, 3, reps);
        double err = 0;
        for (std::int64_t i = 0; i < sh.m * sh.n; ++i)
          err = std::max(err, std::abs(double(c.data<float>()[i]) - d.data<float>()[i]));
        const double g_ours = flop / ms_ours * 1e-6, g_blas = flop / ms_blas * 1e-6;
        std::printf("    %4lldx%4lldx%4lld  ours %6.1f GFLOP/s (%3.0f%% of peak, %3.0f%% of FMA now)   OpenBLAS %6.1f "
                    "(%3.0f%%, %3.0f%%)   ours/OpenBLAS %.2f   (max |diff| %.2g)\n",
                    static_cast<long long>(sh.m), static_cast<long long>(sh.k), static_cast<long long>(sh.n), g_ours,
                    100 * g_ours / peak, 100 * g_ours / fma_now, g_blas, 100 * g_blas / peak, 100 * g_blas / fma_now,
                    ms_blas / ms_ours, err);
      }
    }
    set_threads(max_threads);
  }
  if (part('d')) {
    const int titers = std::max(10, iters / 4);
    std::printf("(d) CNN (example 05) training step, batch 64, Adam (median of %d)\n", titers);
    const auto cnn_ms = [&](Backend b) {
      bench::TrainStepWorkload<examples::FashionCnn> w({64, 1, 28, 28}, {.passes = g_passes, .backend = b});
      return bench::median_ms([&] { w.run(); }, 5, titers);
    };
    for (int threads : train_threads) {
      set_threads(threads);
      quiesce();
      const double tc = cnn_ms(Backend::c99);
      quiesce();
      const double ti = cnn_ms(Backend::interpreter);
      std::printf("    %d thread%s: interpreter %8.3f ms   c99 %8.3f ms   c99/interpreter %.3f\n", threads,
                  threads == 1 ? " " : "s", ti, tc, tc / ti);
#if MG_BENCH_TORCH
      quiesce();
      const double tt = bench::torch_cnn_step_ms(threads, 5, titers);
      std::printf("               libtorch    %8.3f ms   c99/libtorch %.3f   interpreter/libtorch %.3f\n", tt, tc / tt,
                  ti / tt);
#endif
    }
    set_threads(max_threads);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
