// The training-step workloads the benchmarks share: one step (forward, grad, Adam) of an
// example model (04's MLP, 05's CNN) on fixed random data, so train_step_bench (ours vs
// libtorch) and glassbox_overhead (checks off vs on) time the same thing.
#pragma once
#include <cstdint>
#include <memory>
#include <random>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

namespace mg::bench {

inline Array random_inputs(const Shape& shape, std::uint32_t seed) {
  Array a(f32, shape);
  std::mt19937 gen(seed);
  std::normal_distribution<float> normal;
  for (float& v : a.span<float>()) v = normal(gen);
  return a;
}

inline Array random_labels(std::int64_t n, std::uint32_t seed) {
  Array a(i64, {n});
  std::mt19937 gen(seed);
  for (std::int64_t& v : a.span<std::int64_t>()) v = static_cast<std::int64_t>(gen() % 10);
  return a;
}

// A model, its graph and its compiled step (which refer to each other: not movable), and
// a batch of `x_shape` inputs with labels in 0..9 (cross-entropy).
template <class Model>
struct TrainStepWorkload {
  Model model;
  Graph g;
  std::unique_ptr<nn::TrainStep> step;
  Array xs, ys;
  explicit TrainStepWorkload(const Shape& x_shape, const nn::TrainOptions& options = {}) {
    nn::bind(model, g, 0);
    Tensor x = g.input("x", f32, x_shape);
    Tensor y = g.input("y", i64, {x_shape[0]});
    step = std::make_unique<nn::TrainStep>(
        nn::compile_train(g, nn::cross_entropy(model(x), y), model, nn::Adam{.lr = 1e-3}, options));
    xs = random_inputs(x_shape, 1);
    ys = random_labels(x_shape[0], 2);
  }
  TrainStepWorkload(const TrainStepWorkload&) = delete;
  TrainStepWorkload& operator=(const TrainStepWorkload&) = delete;
  double run() { return step->run({{"x", xs}, {"y", ys}}); }  // the loss
};

}  // namespace mg::bench
