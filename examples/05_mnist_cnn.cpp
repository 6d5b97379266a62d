// Example 05: Fashion-MNIST with a small CNN — conv 1->8 3x3 pad 1, ReLU, maxpool 2,
// conv 8->16 3x3 pad 1, ReLU, maxpool 2, linear 784->10 — Adam lr 1e-3, batch 64,
// normalised inputs, 5 epochs by default.
//   05_mnist_cnn [--epochs N] [--seed S] [--out DIR] [--data DIR]
#include "examples/fashion.hpp"

struct Cnn {
  mg::nn::Conv2D conv1{1, 8, {3, 3}, {1, 1}, {1, 1}}, conv2{8, 16, {3, 3}, {1, 1}, {1, 1}};
  mg::nn::MaxPool2D pool{{2, 2}};
  mg::nn::Linear fc{784, 10};
  mg::Tensor operator()(const mg::Tensor& x) const {
    mg::Tensor h = pool(mg::relu(conv1(x)));
    h = pool(mg::relu(conv2(h)));
    return fc(mg::flatten(h, 1));
  }
};
BOOST_HANA_ADAPT_STRUCT(Cnn, conv1, conv2, pool, fc);

int main(int argc, char** argv) {
  Cnn model;
  return mg::examples::train_fashion_mnist(argc, argv, model, {.name = "cnn", .sample_shape = {1, 28, 28}, .batch = 64,
                                                               .lr = 1e-3, .default_epochs = 5});
}
