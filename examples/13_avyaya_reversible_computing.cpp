// Example 13 (AVYAYA): a deep reversible network on Fashion-MNIST. Linear 784 -> 2d, N
// reversible blocks y1 = x1 + f(x2), y2 = x2 + g(y1) (f, g: d -> h -> d tanh MLPs), linear
// head 2d -> 10; Adam, batch 128. The blocks run as ONE custom_vjp whose backward rebuilds
// every block's input from its output, so the training step keeps no per-block activation.
// Prints and checks: test accuracy; the memory plan's peak with and without reversibility,
// at depth N and 2N (the reversible training step's is the same at both); the reconstruction error of the inverse; that the reversible gradients
// equal ordinary backprop's; the recomputation's step-time overhead (printed, not checked).
//   13_avyaya_reversible_computing [--depth N] [--half d] [--hidden h] [--epochs E]
//                                  [--batches B (per epoch, 0: all)] [--seed S] [--data DIR]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>

#include <minigrad/frontier/avyaya.hpp>
#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "examples/main_guard.hpp"
#include "examples/progress.hpp"
#include "examples/train_loop.hpp"
#include "minigrad/runtime/io/batches.hpp"
#include "minigrad/runtime/io/idx.hpp"

namespace ex {

using namespace mg;
using Mlp = nn::Sequential<nn::Linear, nn::Tanh, nn::Linear>;
using RevNet = frontier::avyaya::ReversibleSequential<frontier::avyaya::ReversibleBlock<Mlp, Mlp>>;

struct RevClassifier {
  nn::Linear embed, head;
  RevNet body;
  bool reversible = true;  // false: the same network by ordinary backprop (for comparison)
  RevClassifier(int depth, std::int64_t d, std::int64_t h) : embed(784, 2 * d), head(2 * d, 10) {
    for (int i = 0; i < depth; ++i)
      body.blocks.emplace_back(Mlp(nn::Linear(d, h), nn::Tanh{}, nn::Linear(h, d)),
                               Mlp(nn::Linear(d, h), nn::Tanh{}, nn::Linear(h, d)));
  }
  Tensor operator()(const Tensor& x) const {
    Tensor e = embed(x);
    return head(reversible ? body(e) : body.ordinary(e));
  }
};

}  // namespace ex

BOOST_HANA_ADAPT_STRUCT(ex::RevClassifier, embed, body, head);

namespace ex {

constexpr std::int64_t kBatch = 128;

double mib(std::size_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); }

// The memory plan's peaks for `model`: of the gradients' own graph (gradients requested as
// outputs: activations and temporaries only) and of the whole compiled training step.
struct Peaks {
  std::size_t grads, step;
};
Peaks planned_peaks(RevClassifier model) {
  Graph g;
  nn::bind(model, g);
  Tensor x = g.input("x", f32, {kBatch, 784});
  Tensor y = g.input("y", i64, {kBatch});
  Tensor loss = nn::cross_entropy(model(x), y);
  std::vector<Tensor> wrt;
  for (nn::Parameter* p : nn::parameters(model)) wrt.push_back(p->tensor);
  const std::size_t grads = compile(g, grad(loss, wrt)).peak_bytes();
  auto step = nn::compile_train(g, loss, model, nn::Adam{.lr = 1e-3});
  return {grads, step.executable().peak_bytes()};
}

bool claim(bool ok, const char* what) {
  std::printf("  [%s] %s\n", ok ? "ok" : "FAILED", what);
  return ok;
}

int run(int argc, char** argv) {
  examples::Args args(argc, argv, {{"depth", "32"}, {"half", "32"}, {"hidden", "64"}, {"epochs", "3"},
                                   {"batches", "0"}, {"seed", "0"}, {"data", "/usr/share/datasets/fashion-mnist"}});
  const int depth = static_cast<int>(args.integer("depth"));
  const std::int64_t d = args.integer("half"), h = args.integer("hidden");
  const int epochs = static_cast<int>(args.integer("epochs"));
  const std::int64_t max_batches = args.integer("batches");
  const auto seed = static_cast<std::uint64_t>(args.integer("seed"));
  if (depth < 1 || d < 1 || h < 1 || epochs < 1) throw UserError("--depth, --half, --hidden and --epochs must be >= 1");

  io::FashionMnist data = io::load_fashion_mnist(args.str("data"));
  io::Normalizer norm = io::fit_normalizer(data.train_images);
  const Array train_x = norm.apply(std::move(data.train_images));  // in place
  const Array test_x = norm.apply(std::move(data.test_images));

  RevClassifier model(depth, d, h);
  Graph g;
  nn::bind(model, g, seed);
  std::printf("reversible network: 784 -> %lld, %d blocks of (f, g: %lld -> %lld -> %lld), -> 10; %lld parameters\n",
              static_cast<long long>(2 * d), depth, static_cast<long long>(d), static_cast<long long>(h),
              static_cast<long long>(d), static_cast<long long>(nn::count_parameters(model)));
  Tensor x = g.input("x", f32, {kBatch, 784});
  Tensor y = g.input("y", i64, {kBatch});
  auto step = nn::compile_train(g, nn::cross_entropy(model(x), y), model, nn::Adam{.lr = 1e-3});

  io::BatchLoader loader(train_x, data.train_labels, {.batch_size = kBatch, .shuffle = true, .drop_last = true, .seed = seed});
  const examples::TrainRun trained = examples::train_epochs(step, loader, epochs, max_batches, kBatch);
  const double train_s = trained.seconds;

  // Accuracy on all 10000 test images (the reversible forward: the same function).
  nn::Evaluator<RevClassifier> predict(model, [](const RevClassifier& m, const Tensor& xb) { return argmax(m(xb), 1); });
  const double acc = examples::test_accuracy(predict, test_x, data.test_labels, 1000);
  std::printf("\ntest accuracy %.2f%% after %lld batches (%.1f s training)\n", 100 * acc, static_cast<long long>(trained.batches),
              train_s);

  // Reconstruction: the trained blocks' inverse applied to their output, on 1000 test images.
  double rel_err = 0;
  {
    Graph gi;
    nn::bind(model, gi);
    Tensor xi = gi.input("x", f32, {1000, 784});
    Tensor e = model.embed(xi);
    Tensor back = model.body.inverse(model.body(e));
    io::BatchLoader first(test_x, data.test_labels, {.batch_size = 1000, .shuffle = false, .drop_last = false});
    auto r = nn::compile_with_parameters(gi, {e, back}, model).run({{"x", first.epoch(0).batch(0).inputs}});
    double err = 0, scale = 0;
    for (std::int64_t i = 0; i < r[0].numel(); ++i) {
      err = std::max(err, std::abs(r[0].at(i) - r[1].at(i)));
      scale = std::max(scale, std::abs(r[0].at(i)));
    }
    rel_err = err / scale;
    std::printf("reconstruction: max |inverse(blocks(x)) - x| / max |x| = %.2e (f32, %d blocks, 1000 test images)\n",
                rel_err, depth);
  }

  // The reversible backward's gradients against ordinary backprop's, on one training batch.
  double grad_diff = 0;
  {
    Graph gg;
    nn::bind(model, gg);
    Tensor xg = gg.input("x", f32, {kBatch, 784});
    Tensor yg = gg.input("y", i64, {kBatch});
    std::vector<Tensor> wrt;
    for (nn::Parameter* p : nn::parameters(model)) wrt.push_back(p->tensor);
    RevClassifier plain = model;  // a copy; only its forward's form differs
    plain.reversible = false;
    auto rev = grad(nn::cross_entropy(model(xg), yg), wrt);
    auto ord = grad(nn::cross_entropy(plain(xg), yg), wrt);
    std::vector<Tensor> outs = rev;
    outs.insert(outs.end(), ord.begin(), ord.end());
    const io::Batch b = loader.epoch(0).batch(0);
    auto r = nn::compile_with_parameters(gg, outs, model).run({{"x", b.inputs}, {"y", b.targets}});
    for (std::size_t i = 0; i < rev.size(); ++i) {
      double diff = 0, scale = 1e-30;
      for (std::int64_t j = 0; j < r[i].numel(); ++j) {
        diff = std::max(diff, std::abs(r[i].at(j) - r[rev.size() + i].at(j)));
        scale = std::max(scale, std::abs(r[rev.size() + i].at(j)));
      }
      grad_diff = std::max(grad_diff, diff / scale);
    }
    std::printf("gradients: reversible backward vs ordinary backprop, worst max|diff| / max|grad| over %zu tensors = %.2e\n",
                rev.size(), grad_diff);
  }

  // Memory, as planned (batch 128): reversible vs ordinary backprop, at depth N and 2N.
  RevClassifier ordinary = model, deeper(2 * depth, d, h), deeper_ordinary(2 * depth, d, h);
  ordinary.reversible = deeper_ordinary.reversible = false;
  const Peaks rn = planned_peaks(model), on = planned_peaks(ordinary);
  const Peaks r2 = planned_peaks(deeper), o2 = planned_peaks(deeper_ordinary);
  std::printf("\nplanned peak (MiB)       depth %-4d  depth %-4d\n", depth, 2 * depth);
  std::printf("  gradients, reversible  %10.2f  %10.2f\n", mib(rn.grads), mib(r2.grads));
  std::printf("  gradients, ordinary    %10.2f  %10.2f\n", mib(on.grads), mib(o2.grads));
  std::printf("  train step, reversible %10.2f  %10.2f\n", mib(rn.step), mib(r2.step));
  std::printf("  train step, ordinary   %10.2f  %10.2f\n", mib(on.step), mib(o2.step));
  std::printf("  (temporaries alive at once: activations and gradients; each Adam update runs right after its\n"
              "   gradient. Not counted: %.2f MiB of parameters at depth %d, and Adam's two moments as much)\n",
              mib(static_cast<std::size_t>(nn::count_parameters(model)) * 4), depth);

  // Step time, reversible vs ordinary, on copies (the trained model is not changed).
  double rev_ms = 0, ord_ms = 0;
  {
    auto time_steps = [&](RevClassifier m) {
      Graph gt;
      nn::bind(m, gt);
      Tensor xt = gt.input("x", f32, {kBatch, 784});
      Tensor yt = gt.input("y", i64, {kBatch});
      auto s = nn::compile_train(gt, nn::cross_entropy(m(xt), yt), m, nn::Adam{.lr = 1e-3});
      const io::Batch b = loader.epoch(1).batch(0);
      s.run({{"x", b.inputs}, {"y", b.targets}});
      const auto t = std::chrono::steady_clock::now();
      for (int i = 0; i < 10; ++i) s.run({{"x", b.inputs}, {"y", b.targets}});
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count() / 10;
    };
    rev_ms = time_steps(model);
    ord_ms = time_steps(ordinary);
    std::printf("\nstep time: reversible %.2f ms, ordinary %.2f ms, ratio %.2f (RevNet's recomputation; a loaded machine"
                " makes this noisy)\n", rev_ms, ord_ms, rev_ms / ord_ms);
  }

  std::printf("\nclaims:\n");
  bool ok = true;
  ok &= claim(acc > (trained.batches >= 1000 ? 0.83 : 0.75), "test accuracy above 83% (75% for a run under 1000 batches)");
  ok &= claim(rn.grads == r2.grads, "reversible: the backward's planned peak is the same at depth N and 2N");
  ok &= claim(o2.grads > on.grads + static_cast<std::size_t>(depth) * 2 * kBatch * d * 4,
              "ordinary backprop: it grows by more than the added blocks' inputs");
  ok &= claim(rn.step == r2.step, "reversible: the whole training step's planned peak is the same at depth N and 2N");
  ok &= claim(rn.step < on.step, "the reversible training step plans less memory than the ordinary one");
  ok &= claim(rel_err < 1e-5, "the inverse reconstructs the blocks' input to 1e-5 relative (f32)");
  ok &= claim(grad_diff < 1e-4, "the reversible gradients equal ordinary backprop's to 1e-4 relative (f32)");
  return ok ? 0 : 1;
}

}  // namespace ex

int main(int argc, char** argv) try {
  return ex::run(argc, argv);
} MG_EXAMPLE_CATCH
