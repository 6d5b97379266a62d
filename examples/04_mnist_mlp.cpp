// Example 04: Fashion-MNIST with an MLP 784-128-10 (ReLU), Adam lr 1e-3, batch 128,
// inputs normalised by the training set's mean and std, 10 epochs by default.
// One compiled graph per training step (forward + grad + Adam update); a progress bar
// with loss and throughput; final test accuracy and wall time; weights saved as
// SafeTensors; the training-step IR and DOT written next to them.
//   01..: 04_mnist_mlp [--epochs N] [--seed S] [--out DIR] [--data DIR]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "examples/progress.hpp"
#include "ir/dot.hpp"
#include "runtime/io/batches.hpp"
#include "runtime/io/idx.hpp"
#include "runtime/io/safetensors.hpp"

struct Mlp {
  mg::nn::Linear fc1{784, 128}, fc2{128, 10};
  mg::Tensor operator()(const mg::Tensor& x) const { return fc2(mg::relu(fc1(x))); }
};
BOOST_HANA_ADAPT_STRUCT(Mlp, fc1, fc2);

int main(int argc, char** argv) {
  using namespace mg;
  examples::Args args(argc, argv, {{"epochs", "10"}, {"seed", "0"}, {"out", "out/04_mnist_mlp"},
                                   {"data", "/usr/share/datasets/fashion-mnist"}});
  const int epochs = args.integer("epochs");
  const auto seed = static_cast<std::uint64_t>(args.integer("seed"));
  const std::filesystem::path out = args.str("out");
  std::filesystem::create_directories(out);

  io::FashionMnist data = io::load_fashion_mnist(args.str("data"));
  io::Normalizer norm = io::fit_normalizer(data.train_images);
  Array train_x = norm.apply(data.train_images), test_x = norm.apply(data.test_images);

  const std::int64_t batch = 128, eval_batch = 1000;
  Mlp model;
  Graph g;
  nn::bind(model, g, seed);
  Tensor x = g.input("x", f32, {batch, 784});
  Tensor y = g.input("y", i64, {batch});
  Tensor loss = nn::cross_entropy(model(x), y);
  auto step = nn::compile_train(g, loss, model, nn::Adam{.lr = 1e-3});

  Tensor xe = g.input("x_eval", f32, {eval_batch, 784});
  Tensor ye = g.input("y_eval", i64, {eval_batch});
  Tensor correct = cast(argmax(model(xe), 1) == ye, f32).sum();

  std::ofstream(out / "train_step.mgir") << step.ir_text();
  std::ofstream(out / "train_step.dot") << ir::to_dot(g.ir(), step.roots());

  io::BatchLoader loader(train_x, data.train_labels, {.batch_size = batch, .shuffle = true, .drop_last = true, .seed = seed});
  const auto t0 = std::chrono::steady_clock::now();
  for (int e = 0; e < epochs; ++e) {
    examples::Progress bar("epoch " + std::to_string(e + 1) + "/" + std::to_string(epochs), loader.num_batches(), batch);
    double sum = 0;
    for (const io::Batch& b : loader.epoch(e)) {
      sum += step.run({{"x", b.inputs}, {"y", b.targets}});
      bar.tick(sum / static_cast<double>(b.index + 1));
    }
    bar.done();
  }
  const double train_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  Executable eval = nn::compile_with_parameters(g, {correct}, model);
  io::BatchLoader test(test_x, data.test_labels, {.batch_size = eval_batch, .shuffle = false});
  double hits = 0;
  for (const io::Batch& b : test.epoch(0)) hits += eval.run({{"x_eval", b.inputs}, {"y_eval", b.targets}})[0].at(0);
  const double acc = hits / static_cast<double>(test.num_samples());

  io::save_safetensors((out / "mlp.safetensors").string(), step.parameters(), {{"model", "mlp-784-128-10"}});
  std::printf("test accuracy %.2f%%  (%d epochs, %.1f s training, %.0f samples/s)\n", 100 * acc, epochs, train_s,
              static_cast<double>(epochs) * static_cast<double>(loader.num_batches() * batch) / train_s);
  std::printf("wrote %s/{mlp.safetensors, train_step.mgir, train_step.dot}\n", out.c_str());
  return 0;
}
