// explain_gradients (dsl/nn/explain.hpp): it updates nothing, its norms are the gradient's
// and the update's (checked against a step), and its diagnosis fires on the thresholds it
// states: a ReLU layer whose units are all dead, and a threshold moved past a healthy value.
#include <gtest/gtest.h>

#include <cmath>

#include "minigrad/minigrad.hpp"
#include "minigrad/nn.hpp"

namespace mg::nn {
namespace {

struct Tiny {
  Linear fc1{3, 4, true, f64}, fc2{4, 1, true, f64};
  Tensor operator()(const Tensor& x) const { return fc2(relu(fc1(x))); }
};

}  // namespace
}  // namespace mg::nn
BOOST_HANA_ADAPT_STRUCT(mg::nn::Tiny, fc1, fc2);

namespace mg::nn {
namespace {

TEST(ExplainGradients, NormsMatchAStepAndNothingIsUpdated) {
  Tiny model;
  Graph g;
  bind(model, g, 0);
  Tensor x = g.input("x", f64, {5, 3});
  Tensor y = g.input("y", f64, {5, 1});
  auto step = compile_train(g, mse_loss(model(x), y), model, SGD{.lr = 0.1});
  Array X(Type{f64, {5, 3}}), Y(Type{f64, {5, 1}});
  for (int i = 0; i < 15; ++i) X.data<double>()[i] = std::sin(i + 1.0);
  for (int i = 0; i < 5; ++i) Y.data<double>()[i] = std::cos(i + 1.0);
  const std::vector<Feed> batch{{"x", X}, {"y", Y}};
  const auto before = step.parameters();
  GradientReport r = explain_gradients(step, batch);
  EXPECT_EQ(step.steps_done(), 0);
  for (auto& [name, v] : step.parameters())
    for (std::int64_t i = 0; i < v.numel(); ++i) ASSERT_EQ(v.at(i), before.at(name).at(i)) << name;
  ASSERT_EQ(r.parameters.size(), 4u);
  // SGD without momentum: update = -lr * grad, so ||update|| = 0.1 ||grad||; the step agrees.
  step.run(batch);
  const auto after = step.parameters();
  for (auto& p : r.parameters) {
    EXPECT_NEAR(p.update_norm, 0.1 * p.grad_norm, 1e-12) << p.name;
    double moved = 0;
    for (std::int64_t i = 0; i < after.at(p.name).numel(); ++i)
      moved += std::pow(after.at(p.name).at(i) - before.at(p.name).at(i), 2);
    EXPECT_NEAR(std::sqrt(moved), p.update_norm, 1e-12) << p.name;
  }
  ASSERT_EQ(r.activations.size(), 1u);
  EXPECT_EQ(r.activations[0].op, "relu");
  EXPECT_EQ(r.activations[0].units, 4);
  EXPECT_NE(r.text().find("thresholds: exploding ||grad|| > 1000"), std::string::npos) << r.text();
  // A threshold above every parameter's update ratio: all "not learning".
  ExplainThresholds strict;
  strict.not_learning_ratio = 1e9;
  GradientReport s = explain_gradients(step, batch, strict);
  int not_learning = 0;
  for (auto& d : s.diagnosis) not_learning += d.rfind("not learning: ", 0) == 0;
  EXPECT_EQ(not_learning, 4);
}

TEST(ExplainGradients, DeadReluLayerIsDiagnosed) {
  Tiny model;
  Graph g;
  bind(model, g, 0);
  // Every fc1 output negative for any input in [0, 1]: weights <= 0, bias -1.
  Array w(Type{f64, {4, 3}}), b(Type{f64, {4}});
  for (int i = 0; i < 12; ++i) w.data<double>()[i] = -0.5;
  for (int i = 0; i < 4; ++i) b.data<double>()[i] = -1.0;
  model.fc1.weight.assign(w);
  model.fc1.bias.assign(b);
  Tensor x = g.input("x", f64, {6, 3});
  Tensor y = g.input("y", f64, {6, 1});
  auto step = compile_train(g, mse_loss(model(x), y), model, SGD{.lr = 0.1});
  Array X(Type{f64, {6, 3}}), Y(Type{f64, {6, 1}});
  for (int i = 0; i < 18; ++i) X.data<double>()[i] = (i % 5) / 4.0;
  for (int i = 0; i < 6; ++i) Y.data<double>()[i] = 1.0;
  GradientReport r = explain_gradients(step, {{"x", X}, {"y", Y}});
  ASSERT_EQ(r.activations.size(), 1u);
  EXPECT_EQ(r.activations[0].dead, 1.0);
  bool dead = false, fc1_vanishing = false;
  for (auto& d : r.diagnosis) {
    dead |= d.rfind("dead units: 100% of the ReLU units", 0) == 0;
    fc1_vanishing |= d.find("vanishing gradient: fc1.weight") != std::string::npos;
  }
  EXPECT_TRUE(dead) << r.text();
  EXPECT_TRUE(fc1_vanishing) << r.text();  // no gradient through dead units: exactly 0
}

}  // namespace
}  // namespace mg::nn
