// Example 03: a 2-8-1 MLP learns XOR with Adam and binary cross-entropy on logits.
#include <cstdio>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>
#include "examples/main_guard.hpp"

struct XorMlp {
  mg::nn::Linear fc1{2, 8}, fc2{8, 1};
  mg::Tensor operator()(const mg::Tensor& x) const { return fc2(mg::tanh(fc1(x))); }
};
BOOST_HANA_ADAPT_STRUCT(XorMlp, fc1, fc2);

int main() try {
  using namespace mg;
  XorMlp model;
  Graph g;
  nn::bind(model, g, 3);
  Tensor x = g.input("x", f32, {4, 2});
  Tensor y = g.input("y", f32, {4, 1});
  Tensor logits = model(x);
  Tensor loss = nn::binary_cross_entropy_with_logits(logits, y);
  auto step = nn::compile_train(g, loss, model, nn::Adam{.lr = 0.05}, {.extra_outputs = {sigmoid(logits)}});

  Array X = Array::from<float>({4, 2}, {0, 0, 0, 1, 1, 0, 1, 1});
  Array Y = Array::from<float>({4, 1}, {0, 1, 1, 0});
  std::vector<Array> out;
  for (int i = 0; i < 300; ++i) {
    out = step.run_all({{"x", X}, {"y", Y}});
    if (i % 50 == 0) std::printf("step %3d  loss %.4f\n", i, out[0].at(0));
  }
  bool solved = true;
  for (int i = 0; i < 4; ++i) {
    double p = out[1].at(i);
    std::printf("%g xor %g -> %.3f\n", X.at(2 * i), X.at(2 * i + 1), p);
    solved = solved && ((p > 0.5) == (Y.at(i) > 0.5));
  }
  std::printf(solved ? "XOR solved\n" : "XOR NOT solved\n");
  return solved ? 0 : 1;
} MG_EXAMPLE_CATCH
