// Example 02: linear regression y = 3x - 2 + noise, fitted with SGD through one compiled
// training step (forward, grad and update in a single graph).
#include <cmath>
#include <cstdio>
#include <random>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>
#include "examples/main_guard.hpp"

int main() try {
  using namespace mg;
  const std::int64_t n = 256;
  std::mt19937_64 rng(0);
  std::normal_distribution<double> noise(0.0, 0.1);
  Array X(Type{f64, {n, 1}}), Y(Type{f64, {n, 1}});
  for (std::int64_t i = 0; i < n; ++i) {
    double x = -2.0 + 4.0 * static_cast<double>(i) / static_cast<double>(n - 1);
    X.set(i, x);
    Y.set(i, 3.0 * x - 2.0 + noise(rng));
  }

  nn::Linear model(1, 1, true, f64);
  Graph g;
  nn::bind(model, g, 42);
  Tensor x = g.input("x", f64, {n, 1});
  Tensor y = g.input("y", f64, {n, 1});
  Tensor loss = nn::mse_loss(model(x), y);
  auto step = nn::compile_train(g, loss, model, nn::SGD{.lr = 0.1, .momentum = 0.9});

  for (int epoch = 0; epoch <= 100; ++epoch) {
    double l = step.run({{"x", X}, {"y", Y}});
    if (epoch % 20 == 0) std::printf("step %3d  mse %.5f\n", epoch, l);
  }
  double w = model.weight.value().at(0), b = model.bias.value().at(0);
  std::printf("fitted y = %.4f x %+.4f   (true: 3x - 2)\n", w, b);
  return std::fabs(w - 3) < 0.05 && std::fabs(b + 2) < 0.05 ? 0 : 1;
} MG_EXAMPLE_CATCH
