// The two Fashion-MNIST models of examples 04 and 05, shared with the benchmarks so the
// numbers in bench/ are always about the models the examples train.
#pragma once
#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

namespace mg::examples {

// Example 04: 784-128-10 with ReLU.
struct FashionMlp {
  nn::Linear fc1{784, 128}, fc2{128, 10};
  Tensor operator()(const Tensor& x) const { return fc2(relu(fc1(x))); }
};

// Example 05: conv 1->8 3x3 pad 1, ReLU, maxpool 2, conv 8->16 3x3 pad 1, ReLU,
// maxpool 2, linear 784->10.
struct FashionCnn {
  nn::Conv2D conv1{1, 8, {3, 3}, {1, 1}, {1, 1}}, conv2{8, 16, {3, 3}, {1, 1}, {1, 1}};
  nn::MaxPool2D pool{{2, 2}};
  nn::Linear fc{784, 10};
  Tensor operator()(const Tensor& x) const {
    Tensor h = pool(relu(conv1(x)));
    h = pool(relu(conv2(h)));
    return fc(flatten(h, 1));
  }
};

}  // namespace mg::examples

BOOST_HANA_ADAPT_STRUCT(mg::examples::FashionMlp, fc1, fc2);
BOOST_HANA_ADAPT_STRUCT(mg::examples::FashionCnn, conv1, conv2, pool, fc);
