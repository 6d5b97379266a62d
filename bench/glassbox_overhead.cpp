// What the glass box costs: one training step (forward, grad, Adam) of example 04's MLP
// (batch 128) and example 05's CNN (batch 64), in the interpreter and the C99 backend,
// with numerics checks off, checks on, and (interpreter) per-node profiling on. Two steps
// with checks off (A and B, built alike) are timed too: B/A is the noise level, against
// which on/off is read. Runs alternate (A, B, checks, profile, ...) in one process, each
// kind leading the rotation in turn, so machine load hits all alike; prints medians and
// ratios (target for checks: under 1.5x).
// Off costs nothing by construction: the interpreter takes one untaken branch per node;
// the C99 source compiled without checks has no check code (printed below, and tested by
// tests/runtime/test_numerics_loops.cpp: it is the checked source minus its checks).
//   glassbox_overhead [--iters N] [--warmup N]
#include <malloc.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "bench/timing.hpp"
#include "bench/train_workloads.hpp"
#include "examples/fashion_models.hpp"

namespace {

enum Kind { off_a, off_b, checks, profile, kinds_max };

// Lines of the generated C source that check a value (0 when checks are off).
int check_lines(const std::string& path) {
  std::ifstream f(path);
  std::string line;
  int n = 0;
  while (std::getline(f, line)) n += line.find("mg_finite_") != std::string::npos;
  return n;
}

template <class Model>
void measure(const char* name, mg::Shape x_shape, mg::Backend backend, int warmup, int iters) {
  const int kinds = backend == mg::Backend::interpreter ? kinds_max : profile;  // C99 has no per-node profile
  std::vector<std::unique_ptr<mg::bench::TrainStepWorkload<Model>>> w;
  for (int k = 0; k < kinds; ++k)
    w.push_back(std::make_unique<mg::bench::TrainStepWorkload<Model>>(
        x_shape, mg::nn::TrainOptions{.backend = backend, .check_numerics = k == checks, .profile = k == profile}));
  std::vector<std::vector<double>> ms(static_cast<std::size_t>(kinds));
  for (int i = 0; i < warmup + iters; ++i)
    for (int j = 0; j < kinds; ++j) {
      const int k = (i + j) % kinds;  // each kind runs first, second, ... in turn
      const double t = mg::bench::median_ms([&] { w[static_cast<std::size_t>(k)]->run(); }, 0, 1);
      if (i >= warmup) ms[static_cast<std::size_t>(k)].push_back(t);
    }
  const double a = mg::bench::median(ms[off_a]), b = mg::bench::median(ms[off_b]), on = mg::bench::median(ms[checks]);
  std::printf("%-4s %-11s  off A %8.2f ms  off B %8.2f ms (B/A x%.3f: noise)   checks %8.2f ms (x%.2f)", name,
              backend == mg::Backend::interpreter ? "interpreter" : "c99", a, b, b / a, on, on / a);
  if (kinds == kinds_max) std::printf("   profile %8.2f ms (x%.2f)", mg::bench::median(ms[profile]), mg::bench::median(ms[profile]) / a);
  if (backend == mg::Backend::c99)
    std::printf("   [C source check lines: off %d, on %d]", check_lines(w[off_a]->step->executable().source_path()),
                check_lines(w[checks]->step->executable().source_path()));
  std::printf("\n");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  // Keep freed memory (as train_step_bench does): with glibc's defaults each step hands its
  // megabytes back to the OS and faults them in again, which swamps what is measured.
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  mallopt(M_TRIM_THRESHOLD, 256 << 20);
  mallopt(M_TOP_PAD, 64 << 20);
  int iters = 15, warmup = 3;
  for (int i = 1; i + 1 < argc; ++i) {
    if (!std::strcmp(argv[i], "--iters")) iters = std::stoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--warmup")) warmup = std::stoi(argv[++i]);
  }
  std::printf("glass-box overhead per training step (median of %d, alternating runs; target for checks: under 1.5x)\n",
              iters);
  measure<mg::examples::FashionMlp>("MLP", {128, 784}, mg::Backend::interpreter, warmup, iters);
  measure<mg::examples::FashionMlp>("MLP", {128, 784}, mg::Backend::c99, warmup, iters);
  measure<mg::examples::FashionCnn>("CNN", {64, 1, 28, 28}, mg::Backend::interpreter, warmup, iters);
  measure<mg::examples::FashionCnn>("CNN", {64, 1, 28, 28}, mg::Backend::c99, warmup, iters);
  return 0;
}
