// What the glass box costs: one training step (forward, grad, Adam) of example 04's MLP
// (batch 128) and example 05's CNN (batch 64), with numerics checks off and on, and with
// per-node profiling on, in the interpreter and the C99 backend. Runs alternate (off, on,
// off, on, ...) in one process so machine load hits both sides alike; prints medians and
// the ratio on/off (target for checks: under 1.5x); each kind leads the rotation in turn. Off is the default build's path: one
// untaken branch per node.
//   glassbox_overhead [--iters N] [--warmup N]
#include <malloc.h>

#include <cstdio>
#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <string>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "bench/timing.hpp"
#include "examples/fashion_models.hpp"

namespace {

mg::Array random_inputs(const mg::Shape& shape, std::uint32_t seed) {
  mg::Array a(mg::f32, shape);
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  for (float& v : a.span<float>()) v = normal(gen);
  return a;
}

mg::Array random_labels(std::int64_t n, std::uint32_t seed) {
  mg::Array a(mg::i64, {n});
  std::mt19937 gen(seed);
  for (std::int64_t& v : a.span<std::int64_t>()) v = static_cast<std::int64_t>(gen() % 10);
  return a;
}

// One model, graph and step per kind (off, checks on, profile on): a graph holds one step.
template <class Model>
struct Steps {
  struct One {
    Model model;
    mg::Graph g;
    std::unique_ptr<mg::nn::TrainStep> step;
  };
  std::vector<std::unique_ptr<One>> kinds;
  mg::Array xs, ys;
  Steps(mg::Shape x_shape, mg::Backend backend) {
    for (int k = 0; k < 3; ++k) {
      auto o = std::make_unique<One>();
      mg::nn::bind(o->model, o->g, 0);
      mg::Tensor x = o->g.input("x", mg::f32, x_shape);
      mg::Tensor y = o->g.input("y", mg::i64, {x_shape[0]});
      mg::Tensor loss = mg::nn::cross_entropy(o->model(x), y);
      o->step = std::make_unique<mg::nn::TrainStep>(mg::nn::compile_train(
          o->g, loss, o->model, mg::nn::Adam{.lr = 1e-3},
          {.backend = backend, .check_numerics = k == 1, .profile = k == 2}));
      kinds.push_back(std::move(o));
    }
    xs = random_inputs(x_shape, 1);
    ys = random_labels(x_shape[0], 2);
  }
};

template <class Model>
void measure(const char* name, mg::Shape x_shape, mg::Backend backend, int warmup, int iters) {
  Steps<Model> s(x_shape, backend);
  const int kinds = backend == mg::Backend::interpreter ? 3 : 2;  // C99 has no per-node profile
  std::vector<std::vector<double>> ms(kinds);
  for (int i = 0; i < warmup + iters; ++i)
    for (int j = 0; j < kinds; ++j) {
      const int k = (i + j) % kinds;  // each kind runs first, second, third in turn
      const double t = mg::bench::median_ms([&] { s.kinds[k]->step->run({{"x", s.xs}, {"y", s.ys}}); }, 0, 1);
      if (i >= warmup) ms[k].push_back(t);
    }
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  const double off = median(ms[0]), on = median(ms[1]);
  std::printf("%-4s %-11s  off %8.2f ms   checks %8.2f ms  (x%.2f)", name,
              backend == mg::Backend::interpreter ? "interpreter" : "c99", off, on, on / off);
  if (kinds == 3) std::printf("   profile %8.2f ms  (x%.2f)", median(ms[2]), median(ms[2]) / off);
  std::printf("\n");
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
  std::printf("glass-box overhead per training step (median of %d, alternating runs)\n", iters);
  measure<mg::examples::FashionMlp>("MLP", {128, 784}, mg::Backend::interpreter, warmup, iters);
  measure<mg::examples::FashionMlp>("MLP", {128, 784}, mg::Backend::c99, warmup, iters);
  measure<mg::examples::FashionCnn>("CNN", {64, 1, 28, 28}, mg::Backend::interpreter, warmup, iters);
  measure<mg::examples::FashionCnn>("CNN", {64, 1, 28, 28}, mg::Backend::c99, warmup, iters);
  return 0;
}
