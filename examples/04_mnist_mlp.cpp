// Example 04: Fashion-MNIST with an MLP 784-128-10 (ReLU), Adam lr 1e-3, batch 128,
// inputs normalised by the training set's mean and std, 10 epochs by default.
//   04_mnist_mlp [--epochs N] [--seed S] [--out DIR] [--data DIR]
#include "examples/fashion.hpp"
#include "examples/fashion_models.hpp"
#include "examples/main_guard.hpp"

int main(int argc, char** argv) try {
  mg::examples::FashionMlp model;
  return mg::examples::train_fashion_mnist(argc, argv, model, {.name = "mlp", .sample_shape = {784}, .batch = 128,
                                                               .lr = 1e-3, .default_epochs = 10});
} MG_EXAMPLE_CATCH
