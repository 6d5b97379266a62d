// Example 05: Fashion-MNIST with a small CNN — conv 1->8 3x3 pad 1, ReLU, maxpool 2,
// conv 8->16 3x3 pad 1, ReLU, maxpool 2, linear 784->10 — Adam lr 1e-3, batch 64,
// normalised inputs, 5 epochs by default.
//   05_mnist_cnn [--epochs N] [--seed S] [--out DIR] [--data DIR]
#include "examples/fashion.hpp"
#include "examples/fashion_models.hpp"
#include "examples/main_guard.hpp"

int main(int argc, char** argv) try {
  mg::examples::FashionCnn model;
  return mg::examples::train_fashion_mnist(argc, argv, model, {.name = "cnn", .sample_shape = {1, 28, 28}, .batch = 64,
                                                               .lr = 1e-3, .default_epochs = 5});
} MG_EXAMPLE_CATCH
