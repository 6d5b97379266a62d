// Shared driver of the Fashion-MNIST examples (04 MLP, 05 CNN): loads and normalises
// the data, builds ONE training-step graph (forward + grad + Adam), trains with a
// progress bar, evaluates on the test set, saves the weights as SafeTensors and writes
// the training step's IR and DOT. The model decides only its input shape.
#pragma once
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "examples/progress.hpp"
#include "examples/train_loop.hpp"
#include "minigrad/ir/dot.hpp"
#include "minigrad/runtime/io/batches.hpp"
#include "minigrad/runtime/io/idx.hpp"
#include "minigrad/runtime/io/safetensors.hpp"
#include "minigrad/runtime/io/render.hpp"

namespace mg::examples {

struct FashionRecipe {
  std::string name;         // output file stem, e.g. "mlp"
  Shape sample_shape;       // {784} or {1, 28, 28}
  std::int64_t batch = 128;
  double lr = 1e-3;
  int default_epochs = 10;
};

template <class Model>
int train_fashion_mnist(int argc, char** argv, Model& model, const FashionRecipe& recipe) {
  Args args(argc, argv, {{"epochs", std::to_string(recipe.default_epochs)}, {"seed", "0"},
                         {"out", "out/" + recipe.name}, {"data", "/usr/share/datasets/fashion-mnist"},
                         {"batches", "0"},  // batches per epoch, 0: all (smoke tests use a few)
                         {"backend", "interpreter"}});  // or c99: the step runs as compiled C
  const int epochs = static_cast<int>(args.integer("epochs"));
  const std::int64_t max_batches = args.integer("batches");
  const auto seed = static_cast<std::uint64_t>(args.integer("seed"));
  const std::filesystem::path out = args.str("out");
  if (args.str("backend") != "interpreter" && args.str("backend") != "c99")
    throw UserError("--backend: expected interpreter or c99, got '" + args.str("backend") + "'");
  const Backend backend = args.str("backend") == "c99" ? Backend::c99 : Backend::interpreter;
  std::filesystem::create_directories(out);

  io::FashionMnist data = io::load_fashion_mnist(args.str("data"));
  io::Normalizer norm = io::fit_normalizer(data.train_images);  // training-set mean and std
  auto shaped = [&](Array&& images) {  // normalised in place: no second copy of the set
    Shape s{images.shape()[0]};
    s.insert(s.end(), recipe.sample_shape.begin(), recipe.sample_shape.end());
    return norm.apply(std::move(images)).reshaped(s);
  };
  Array train_x = shaped(std::move(data.train_images)), test_x = shaped(std::move(data.test_images));

  const std::int64_t eval_batch = 768;  // 13 full batches and one of 16
  auto batch_shape = [&](std::int64_t n) {
    Shape s{n};
    s.insert(s.end(), recipe.sample_shape.begin(), recipe.sample_shape.end());
    return s;
  };
  Graph g;
  nn::bind(model, g, seed);
  Tensor x = g.input("x", f32, batch_shape(recipe.batch));
  Tensor y = g.input("y", i64, {recipe.batch});
  Tensor loss = nn::cross_entropy(model(x), y);
  auto step = nn::compile_train(g, loss, model, nn::Adam{.lr = recipe.lr}, {.backend = backend});

  std::ofstream(out / "train_step.mgir") << step.ir_text();
  const std::string dot = ir::to_dot(g.ir(), step.roots());
  std::ofstream(out / "train_step.dot") << dot;
  io::render(dot, (out / "train_step.svg").string());
  // The same step with one box per module and role (forward, backward, update).
  ir::DotOptions collapsed;
  collapsed.collapse = true;
  const std::string overview = ir::to_dot(g.ir(), step.roots(), collapsed);
  std::ofstream(out / "train_step_overview.dot") << overview;
  io::render(overview, (out / "train_step_overview.svg").string());

  io::BatchLoader loader(train_x, data.train_labels,
                         {.batch_size = recipe.batch, .shuffle = true, .drop_last = true, .seed = seed});
  const TrainRun trained = train_epochs(step, loader, epochs, max_batches, recipe.batch);
  const double train_s = trained.seconds;

  // The evaluator compiles once per batch shape and runs the trained weights in eval mode.
  nn::Evaluator<Model> predict(model, [](const Model& m, const Tensor& xb) { return argmax(m(xb), 1); }, backend);
  const double acc = test_accuracy(predict, test_x, data.test_labels, eval_batch);

  const std::string weights = (out / (recipe.name + ".safetensors")).string();
  io::save_safetensors(weights, step.parameters(), {{"model", recipe.name}, {"epochs", std::to_string(epochs)}});
  std::printf("test accuracy %.2f%%  (%s backend, %d epochs, seed %llu, %.1f s training, %.0f samples/s)\n", 100 * acc,
              args.str("backend").c_str(), epochs,
              static_cast<unsigned long long>(seed), train_s,
              static_cast<double>(trained.batches * recipe.batch) / train_s);
  std::printf("wrote %s and %s/train_step.{mgir,dot,svg} (+ _overview.{dot,svg})\n", weights.c_str(), out.c_str());
  return 0;
}

}  // namespace mg::examples
