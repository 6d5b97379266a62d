// Example 11: vmap and DP-SGD.
//  (1) Batched Jacobians: vmap(jacrev(f)) of a small MLP over 256 inputs as ONE graph,
//      against a loop of 256 single-input Jacobians; checks they agree, prints the speed-up.
//  (2) DP-SGD on Fashion-MNIST with example 04's MLP: Poisson-sampled batches (q = 256/60000,
//      padded to a static capacity with 0/1 weights), per-sample gradients by vmap(grad),
//      per-example clipping (C = 1), Gaussian noise (sigma = 1.1), SGD with momentum; test
//      accuracy and (epsilon, delta = 1e-5) per epoch from the RDP accountant. The whole
//      private step is one graph (--backend c99 runs it as compiled C).
//   11_vmap_and_dp_sgd [--epochs N] [--batches N] [--sigma S] [--clip C] [--lr LR] [--momentum M]
//                      [--seed S] [--data DIR] [--backend interpreter|c99]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "examples/fashion_models.hpp"
#include "examples/main_guard.hpp"
#include "examples/progress.hpp"
#include "minigrad/runtime/io/batches.hpp"
#include "minigrad/runtime/io/idx.hpp"
#include "minigrad/runtime/io/poisson_batches.hpp"

namespace ex11 {
struct SmallMlp {  // 16 -> 32 -> 8, tanh
  mg::nn::Linear fc1{16, 32}, fc2{32, 8};
  mg::Tensor operator()(const mg::Tensor& x) const { return fc2(mg::tanh(fc1(x))); }
};
}  // namespace ex11
BOOST_HANA_ADAPT_STRUCT(ex11::SmallMlp, fc1, fc2);

namespace {

using namespace mg;
using ex11::SmallMlp;

template <class F>
double median_seconds(int reps, F&& f) {
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::nth_element(t.begin(), t.begin() + reps / 2, t.end());
  return t[static_cast<std::size_t>(reps / 2)];
}

// (1) vmap(jacrev) against a loop of single Jacobians.
void batched_jacobians() {
  const std::int64_t n = 256;
  SmallMlp model;
  Graph g;
  nn::bind(model, g, 1);
  Tensor X = g.input("X", f32, {n, 16});
  auto f = [&](const Tensor& x) { return model(x.unsqueeze(0)).reshape({8}); };
  Tensor J = vmap([&](const Tensor& x) { return jacrev(f(x), x); })(X);  // [256, 8, 16]
  Executable batched = nn::compile_with_parameters(g, {J}, model);
  Graph g1;
  nn::bind(model, g1, 1);
  Tensor x1 = g1.input("x", f32, {16});
  Executable single = nn::compile_with_parameters(g1, {jacrev(f(x1), x1)}, model);

  Array xs(f32, {n, 16});
  std::mt19937 gen(3);
  std::normal_distribution<float> normal;
  for (float& v : xs.span<float>()) v = normal(gen);
  std::vector<Array> rows;
  for (std::int64_t b = 0; b < n; ++b) {
    Array r(f32, {16});
    for (int i = 0; i < 16; ++i) r.set(i, xs.at(b * 16 + i));
    rows.push_back(r);
  }
  Array all;
  std::vector<Array> each(static_cast<std::size_t>(n));
  const double t_batched = median_seconds(21, [&] { all = batched.run({{"X", xs}})[0]; });
  const double t_loop = median_seconds(5, [&] {
    for (std::int64_t b = 0; b < n; ++b) each[static_cast<std::size_t>(b)] = single.run({{"x", rows[b]}})[0];
  });
  double worst = 0;
  for (std::int64_t b = 0; b < n; ++b)
    for (std::int64_t i = 0; i < 8 * 16; ++i)
      worst = std::max(worst, std::fabs(all.at(b * 128 + i) - each[static_cast<std::size_t>(b)].at(i)));
  if (!(worst < 1e-5)) throw UserError("vmap(jacrev) disagrees with the loop: max |diff| " + std::to_string(worst));
  std::printf("batched Jacobians of a 16-32-8 MLP, 256 inputs: vmap(jacrev) %.3f ms, loop of 256 jacrev %.3f ms: "
              "%.1fx faster (max |diff| %.2g)\n",
              1e3 * t_batched, 1e3 * t_loop, t_loop / t_batched, worst);
}

// (2) DP-SGD on Fashion-MNIST.
int dp_sgd(int argc, char** argv) {
  examples::Args args(argc, argv, {{"epochs", "5"}, {"batches", "0"}, {"sigma", "1.1"}, {"clip", "1.0"},
                                   {"lr", "0.1"}, {"momentum", "0.9"}, {"seed", "0"},
                                   {"data", "/usr/share/datasets/fashion-mnist"}, {"backend", "interpreter"}});
  const int epochs = static_cast<int>(args.integer("epochs"));
  const std::int64_t max_batches = args.integer("batches");
  const double sigma = std::stod(args.str("sigma")), clip = std::stod(args.str("clip"));
  const double lr = std::stod(args.str("lr")), momentum = std::stod(args.str("momentum"));
  const auto seed = static_cast<std::uint64_t>(args.integer("seed"));
  if (args.str("backend") != "interpreter" && args.str("backend") != "c99")
    throw UserError("--backend: expected interpreter or c99, got '" + args.str("backend") + "'");
  const Backend backend = args.str("backend") == "c99" ? Backend::c99 : Backend::interpreter;
  const double delta = 1e-5;

  io::FashionMnist data = io::load_fashion_mnist(args.str("data"));
  io::Normalizer norm = io::fit_normalizer(data.train_images);
  const std::int64_t n = data.train_images.shape()[0];
  const std::int64_t n_test = data.test_images.shape()[0];
  Array train_x = norm.apply(std::move(data.train_images)).reshaped({n, 784});  // in place
  Array test_x = norm.apply(std::move(data.test_images)).reshaped({n_test, 784});

  const double q = 256.0 / static_cast<double>(n);
  const std::int64_t capacity = io::poisson_capacity(n, q);  // P(a batch exceeds it) <= 1e-12
  io::PoissonBatchLoader loader(train_x, data.train_labels, {.q = q, .capacity = capacity, .seed = seed});

  examples::FashionMlp model;
  Graph g;
  nn::bind(model, g, seed);
  Tensor x = g.input("x", f32, {capacity, 784});
  Tensor y = g.input("y", i64, {capacity});
  Tensor w = g.input("w", f32, {capacity});  // 1: sampled, 0: padding
  auto step = nn::compile_train(
      g, [&](const std::vector<Tensor>& e) { return nn::cross_entropy(model(e[0].unsqueeze(0)), e[1].reshape({1})); },
      {x, y}, model, nn::SGD{.lr = lr, .momentum = momentum},
      {.backend = backend,
       .privacy = nn::Privacy{.noise_multiplier = sigma, .max_grad_norm = clip, .seed = seed, .weights = w,
                              .expected_batch_size = q * static_cast<double>(n)}});
  std::printf("DP-SGD, Fashion-MNIST MLP: q = %.5f (expected batch 256, capacity %lld), sigma %.2f, clip %.2f, "
              "SGD lr %.3g momentum %.2g, %s backend\n",
              q, static_cast<long long>(capacity), sigma, clip, lr, momentum, args.str("backend").c_str());

  nn::Evaluator<examples::FashionMlp> predict(
      model, [](const examples::FashionMlp& m, const Tensor& xb) { return argmax(m(xb), 1); }, backend);
  io::BatchLoader test(test_x, data.test_labels, {.batch_size = 1000, .shuffle = false, .drop_last = false});
  std::int64_t steps = 0;
  double acc = 0;
  privacy::PrivacySpent spent;
  for (int e = 0; e < epochs; ++e) {
    const std::int64_t per_epoch =
        max_batches > 0 ? std::min(max_batches, loader.steps_per_epoch()) : loader.steps_per_epoch();
    examples::Progress bar("epoch " + std::to_string(e + 1) + "/" + std::to_string(epochs), per_epoch, 256);
    double sum = 0;
    for (std::int64_t i = 0; i < per_epoch; ++i) {
      const io::PoissonBatch b = loader.batch(e * loader.steps_per_epoch() + i);
      sum += step.run({{"x", b.inputs}, {"y", b.targets}, {"w", b.weights}});
      bar.tick(sum / static_cast<double>(i + 1));
      ++steps;
    }
    bar.done();
    std::int64_t hits = 0;
    for (const io::Batch& b : test.epoch(0)) {
      Array guess = predict(b.inputs);
      for (std::int64_t i = 0; i < guess.numel(); ++i) hits += guess.at(i) == b.targets.at(i);
    }
    acc = static_cast<double>(hits) / static_cast<double>(test.num_samples());
    spent = privacy::epsilon(q, sigma, steps, delta);
    std::printf("epoch %d: test accuracy %.2f%%, epsilon %.3f (delta %g, best order %g, %lld steps)\n", e + 1,
                100 * acc, spent.epsilon, delta, spent.order, static_cast<long long>(steps));
    std::fflush(stdout);
  }
  std::printf("final: test accuracy %.2f%% at epsilon %.3f (delta %g)\n", 100 * acc, spent.epsilon, delta);
  return 0;
}

}  // namespace

int main(int argc, char** argv) try {
  batched_jacobians();
  return dp_sgd(argc, argv);
} MG_EXAMPLE_CATCH
