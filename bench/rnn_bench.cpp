// Loops stay loops (issue 14), measured: a tanh RNN training step (forward over T steps,
// loss mean(hs^2), gradient, SGD update of W, U, b; f32, batch 32, 16 -> 64) at T = 100
// and 1000, three ways side by side in one run:
//   scan      one `scan` node (and its reverse scan), C99 JIT and interpreter
//   unrolled  the same cell written T times, C99 JIT (interpreter where the JIT of the
//             unrolled graph is skipped: --jit-unrolled-max)
//   libtorch  a C++ loop over cells, autograd recording every step
// Compile = graph build + passes (fold,cse,hoist,fuse,dce) + C99 emission and cc (a fresh
// JIT cache per measurement, so nothing is reused). Step = median ms per training step.
// Each measurement runs in a child process, at the same thread count (--threads, 1).
//   rnn_bench [--iters N] [--threads N] [--jit-unrolled-max T]
#include <cblas.h>
#include <omp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>

#include <minigrad/minigrad.hpp>

#include "bench/child_process.hpp"
#include "bench/timing.hpp"
#include "minigrad/passes/pass_manager.hpp"
#if MG_BENCH_TORCH
#include "bench/torch_rnn.hpp"
#endif

namespace {

using mg::bench::in_child;

constexpr int B = 32, D = 16, H = 64;

struct Result {
  double compile_ms = -1, step_ms = -1;
};

mg::Array randn(mg::Shape s, std::uint64_t seed, double scale) {
  mg::Array a(mg::Type{mg::f32, s});
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    a.set(i, scale * (static_cast<double>(x % 2000001) / 1000000.0 - 1.0));
  }
  return a;
}

Result ours(int T, bool unrolled, mg::Backend backend, int iters) {
  const auto t0 = std::chrono::steady_clock::now();
  mg::Graph g;
  mg::Tensor xs = g.input("xs", mg::f32, {T, B, D}), h0 = g.input("h0", mg::f32, {B, H});
  mg::Tensor W = g.input("W", mg::f32, {H, H}), U = g.input("U", mg::f32, {D, H}), b = g.input("b", mg::f32, {H});
  auto cell = [&](const mg::Tensor& h, const mg::Tensor& x) { return mg::tanh(mg::matmul(h, W) + mg::matmul(x, U) + b); };
  mg::Tensor loss;
  if (unrolled) {
    mg::Tensor h = h0, sum = h0.sum() * 0.0f;
    for (int t = 0; t < T; ++t) {
      h = cell(h, mg::slice(xs, 0, t, t + 1).reshape({B, D}));
      sum = sum + (h * h).sum();
    }
    loss = sum * static_cast<float>(1.0 / (static_cast<double>(T) * B * H));
  } else {
    auto [hT, hs] = mg::scan([&](const mg::Tensor& h, const mg::Tensor& x) {
      mg::Tensor h2 = cell(h, x);
      return std::pair{h2, h2};
    }, h0, xs);
    loss = (hs * hs).mean();
  }
  auto [dW, dU, db] = mg::grad(loss, {W, U, b});
  std::vector<mg::Tensor> outs{loss, W - dW * 0.01f, U - dU * 0.01f, b - db * 0.01f};
  g.ir().outputs.clear();
  for (auto& t : outs) g.ir().outputs.push_back(t.value().id);
  auto opt = mg::passes::run_pipeline(g.ir(), "fold,cse,hoist,fuse,dce").graph;
  auto exe = mg::rt::compile(*opt, opt->outputs, {}, backend);
  Result r;
  r.compile_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  const mg::rt::Bindings feeds{{"xs", randn({T, B, D}, 1, 1.0)}, {"h0", randn({B, H}, 5, 0.0)},
                               {"W", randn({H, H}, 2, 0.1)},     {"U", randn({D, H}, 3, 0.1)},
                               {"b", randn({H}, 4, 0.1)}};
  double sink = 0;
  r.step_ms = mg::bench::median_ms([&] { sink += exe.run(feeds)[0].at(0); }, 1, iters);
  if (!(sink == sink)) throw std::runtime_error("diverged");
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int iters = 5, threads = 1, jit_unrolled_max = 100;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--threads")) threads = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--jit-unrolled-max")) jit_unrolled_max = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: rnn_bench [--iters N] [--threads N] [--jit-unrolled-max T]\n");
      return 2;
    }
  }
  const auto cache = std::filesystem::temp_directory_path() / ("mg_rnn_bench_" + std::to_string(getpid()));
  std::printf("tanh RNN training step, f32, batch %d, %d -> %d, %d thread(s); compile = build + passes + C99 JIT\n", B, D,
              H, threads);
  std::printf("%6s %-22s %12s %10s %16s %14s\n", "T", "variant", "compile ms", "step ms", "compile / scan", "step / torch");
  int run = 0;
  for (int T : {100, 1000}) {
    auto fresh = [&](auto&& f) {
      return in_child([&, dir = cache / std::to_string(run++)] {
        std::filesystem::create_directories(dir);
        std::filesystem::permissions(dir, std::filesystem::perms::owner_all, std::filesystem::perm_options::replace);
        setenv("MG_C99_CACHE", dir.c_str(), 1);
        omp_set_num_threads(threads);
        openblas_set_num_threads(threads);
        return f();
      }, Result{});
    };
    Result torch;
#if MG_BENCH_TORCH
    torch = fresh([&] { return Result{0, mg::bench::torch_rnn_step_ms(T, B, D, H, threads, 1, iters)}; });
#endif
    const Result scan = fresh([&] { return ours(T, false, mg::Backend::c99, iters); });
    const Result scan_interp = fresh([&] { return ours(T, false, mg::Backend::interpreter, iters); });
    const bool jit = T <= jit_unrolled_max;
    const Result unr = fresh([&] { return ours(T, true, jit ? mg::Backend::c99 : mg::Backend::interpreter, iters); });
    auto row = [&](const char* name, const Result& r) {
      char ct[32] = "-", st[32] = "-";
      if (r.compile_ms >= 0 && scan.compile_ms > 0) std::snprintf(ct, sizeof ct, "%.2f", r.compile_ms / scan.compile_ms);
      if (torch.step_ms > 0 && r.step_ms > 0) std::snprintf(st, sizeof st, "%.2f", r.step_ms / torch.step_ms);
      std::printf("%6d %-22s %12.1f %10.2f %16s %14s\n", T, name, r.compile_ms, r.step_ms, ct, st);
    };
    row("scan (C99 JIT)", scan);
    row("scan (interpreter)", scan_interp);
    row(jit ? "unrolled (C99 JIT)" : "unrolled (interpreter)", unr);
#if MG_BENCH_TORCH
    std::printf("%6d %-22s %12s %10.2f %16s %14s\n", T, "libtorch (C++ loop)", "-", torch.step_ms, "-", "1.00");
#else
    std::printf("%6d %-22s (built without libtorch-dev)\n", T, "libtorch");
#endif
  }
  std::filesystem::remove_all(cache);
  return 0;
}
