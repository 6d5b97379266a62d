// nn::LoRA: starts as its base layer (B = 0), computes base(x) + x A^T B^T alpha/r, trains
// only A and B (no gradient, no optimizer state for the frozen base), and merge() folds the
// adapter into the base weight without changing the layer's function.
#include <gtest/gtest.h>

#include <cmath>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "tests/ops/gradcheck.hpp"

namespace mg {
namespace {

Array ramp(Shape s, double a, double b) {
  Array x = Array::zeros(Type{f64, std::move(s)});
  for (std::int64_t i = 0; i < x.numel(); ++i) x.set(i, std::sin(a * static_cast<double>(i) + b));
  return x;
}

TEST(LoRA, StartsAsTheBaseLayerAndAddsTheScaledLowRankUpdate) {
  nn::LoRA l(5, 3, {.rank = 2, .alpha = 6}, true, f64);
  Graph g;
  nn::bind(l, g, 1);
  Tensor x = g.input("x", f64, {4, 5});
  auto exe = nn::compile_with_parameters(g, {l(x), l.base(x)}, l);
  Array X = ramp({4, 5}, 0.7, 0.1);
  auto r = exe.run({{"x", X}});
  for (std::int64_t i = 0; i < r[0].numel(); ++i) EXPECT_EQ(r[0].at(i), r[1].at(i));  // B = 0: exactly the base
  // With B set: y = x W^T + b + (x A^T B^T) * alpha / rank, by hand.
  l.lora_B.assign(ramp({3, 2}, 1.3, 0.4));
  r = exe.run({{"x", X}});
  const Array &W = l.base.weight.value(), &b = l.base.bias.value(), &A = l.lora_A.value(), &B = l.lora_B.value();
  for (std::int64_t n = 0; n < 4; ++n)
    for (std::int64_t o = 0; o < 3; ++o) {
      double y = b.at(o);
      for (std::int64_t i = 0; i < 5; ++i) y += X.at(n * 5 + i) * W.at(o * 5 + i);
      for (std::int64_t k = 0; k < 2; ++k) {
        double xa = 0;
        for (std::int64_t i = 0; i < 5; ++i) xa += X.at(n * 5 + i) * A.at(k * 5 + i);
        y += 3.0 * xa * B.at(o * 2 + k);
      }
      EXPECT_NEAR(r[0].at(n * 3 + o), y, 1e-12);
    }
}

}  // namespace
struct Adapted {
  nn::LoRA fc1{4, 6, {.rank = 2, .alpha = 4}, true, f64};
  nn::Linear fc2{6, 1, true, f64};
};
}  // namespace mg
BOOST_HANA_ADAPT_STRUCT(mg::Adapted, fc1, fc2);
namespace mg {
namespace {

TEST(LoRA, TrainsOnlyTheAdapterAndKeepsOptimizerStateOnlyForIt) {
  Adapted m;
  Graph g;
  nn::bind(m, g, 2);
  nn::freeze(m.fc2);  // freeze a plain layer too
  Tensor x = g.input("x", f64, {8, 4}), y = g.input("y", f64, {8, 1});
  Tensor loss = nn::mse_loss(m.fc2(tanh(m.fc1(x))), y);
  auto step = nn::compile_train(g, loss, m, nn::Adam{.lr = 0.05});
  std::vector<std::string> state;
  for (auto& [name, _] : step.state_dict())
    if (name.rfind("optim.", 0) == 0 && name != "optim.step") state.push_back(name);
  EXPECT_EQ(state, (std::vector<std::string>{"optim.fc1.lora_A.weight.exp_avg", "optim.fc1.lora_A.weight.exp_avg_sq",
                                             "optim.fc1.lora_B.weight.exp_avg", "optim.fc1.lora_B.weight.exp_avg_sq"}));
  Array W0 = m.fc1.base.weight.value().clone(), V0 = m.fc2.weight.value().clone();
  Array X = ramp({8, 4}, 0.9, 0.3), Y = ramp({8, 1}, 2.1, 0.5);
  double first = step.run({{"x", X}, {"y", Y}}), last = first;
  for (int i = 0; i < 30; ++i) last = step.run({{"x", X}, {"y", Y}});
  EXPECT_LT(last, first);
  for (std::int64_t i = 0; i < W0.numel(); ++i) EXPECT_EQ(m.fc1.base.weight.value().at(i), W0.at(i));
  for (std::int64_t i = 0; i < V0.numel(); ++i) EXPECT_EQ(m.fc2.weight.value().at(i), V0.at(i));
  EXPECT_NE(m.fc1.lora_B.value().at(0), 0.0);
}

TEST(LoRA, MergeKeepsTheFunctionAndTheLinearsParameterNames) {
  nn::LoRA l(5, 3, {.rank = 2, .alpha = 6}, true, f64);
  Graph g;
  nn::bind(l, g, 1);
  l.lora_B.assign(ramp({3, 2}, 1.3, 0.4));
  Tensor x = g.input("x", f64, {4, 5});
  Array X = ramp({4, 5}, 0.7, 0.1);
  Array before = nn::compile_with_parameters(g, {l(x)}, l).run({{"x", X}})[0];
  l.merge();
  std::vector<std::string> names;
  nn::for_each_parameter(l, [&](const std::string& n, nn::Parameter&) { names.push_back(n); });
  EXPECT_EQ(names, (std::vector<std::string>{"weight", "bias"}));
  nn::Linear plain(5, 3, true, f64);  // the merged weights load into the plain layer
  Graph g2;
  nn::bind(plain, g2);
  std::map<std::string, Array> sd{{"weight", l.base.weight.value()}, {"bias", l.base.bias.value()}};
  nn::load_parameters(nn::named_parameters(plain), sd, {}, "merged");
  Tensor x2 = g2.input("x", f64, {4, 5});
  Array after = nn::compile_with_parameters(g2, {plain(x2)}, plain).run({{"x", X}})[0];
  for (std::int64_t i = 0; i < before.numel(); ++i) EXPECT_NEAR(after.at(i), before.at(i), 1e-13);
  EXPECT_THROW(nn::LoRA(4, 4, {.rank = 5}), UserError);
}

// LoRA on MultiheadAttention (peft's lora.MultiheadAttention): B = 0 starts as the base
// module exactly; with trained-looking A and B, the adapted module equals a plain one
// whose weights are the merged ones, on the packed self-attention path, the separate
// q/k/v path and the KV-cache decode step; only A and B are trainable, and the gradient
// with respect to them passes finite differences.
TEST(LoRA, MultiheadAttentionAdaptersMergeIntoTorchsParameters) {
  const std::int64_t L = 4, S = 3, E = 6, H = 2;
  nn::MultiheadAttention mha(E, H, {.batch_first = true, .dtype = f64});
  mha.add_lora({.rank = 2, .alpha = 3});
  Graph g;
  nn::bind(mha, g, 5);
  std::vector<std::string> trainable;
  nn::for_each_parameter(mha, [&](const std::string& n, nn::Parameter& p) {
    if (p.trainable) trainable.push_back(n);
  });
  EXPECT_EQ(trainable, (std::vector<std::string>{"lora_A.weight", "lora_B.weight", "out_proj.lora_A.weight",
                                                 "out_proj.lora_B.weight"}));
  Tensor x = g.input("x", f64, {2, L, E}), kv = g.input("kv", f64, {2, S, E});
  Tensor self = mha(x, x, x, {.need_weights = false, .is_causal = true}).output;
  Tensor cross = mha(x, kv, kv, {.need_weights = false}).output;
  const Array X = ramp({2, L, E}, 0.8, 0.2), KV = ramp({2, S, E}, 1.7, 0.9);
  auto exe = nn::compile_with_parameters(g, {self, cross}, mha);
  const std::vector<Array> start = exe.run({{"x", X}, {"kv", KV}});

  nn::MultiheadAttention plain(E, H, {.batch_first = true, .dtype = f64});
  Graph gp;
  nn::bind(plain, gp);
  Tensor xp = gp.input("x", f64, {2, L, E}), kvp = gp.input("kv", f64, {2, S, E});
  auto plain_exe = nn::compile_with_parameters(
      gp, {plain(xp, xp, xp, {.need_weights = false, .is_causal = true}).output, plain(xp, kvp, kvp, {.need_weights = false}).output},
      plain);
  auto run_plain = [&] {
    std::map<std::string, Array> sd;
    nn::for_each_parameter(mha, [&](const std::string& n, nn::Parameter& p) { sd[n] = p.value(); });
    nn::load_parameters(nn::named_parameters(plain), sd, {.strict = false}, "adapted");
    return plain_exe.run({{"x", X}, {"kv", KV}});
  };
  std::vector<Array> base = run_plain();
  for (int k = 0; k < 2; ++k)
    for (std::int64_t i = 0; i < start[k].numel(); ++i) EXPECT_EQ(start[k].at(i), base[k].at(i));  // B = 0

  mha.lora_B.assign(ramp({3 * E, 2}, 1.1, 0.3));
  mha.out_lora_B.assign(ramp({E, 2}, 0.6, 1.2));
  const std::vector<Array> adapted = exe.run({{"x", X}, {"kv", KV}});
  EXPECT_GT(std::abs(adapted[0].at(0) - start[0].at(0)), 1e-3);
  // Gradients with respect to the adapters (second order through attention too).
  Tensor loss = (self * self).sum() + (cross * cross).sum();
  std::vector<ir::Value> inputs;
  std::vector<Array> values;
  nn::for_each_parameter(mha, [&](const std::string&, nn::Parameter& p) {
    inputs.push_back(p.tensor.value());
    values.push_back(p.value());
  });
  inputs.insert(inputs.end(), {x.value(), kv.value()});
  values.insert(values.end(), {X, KV});
  auto c = mg::testing::check_gradients(loss.value(), inputs, values, 2, 1e-6, 7);
  EXPECT_TRUE(c.ok) << c.report;
  {  // the KV-cache decode step takes the adapters too: position 0 with an empty cache (binds
     // the module to a new graph: after the checks that use g)
    Graph d;
    nn::bind(mha, d);
    Tensor xt = d.input("x", f64, {2, 1, E});
    auto st = mha.decode_step(xt, d.input("k", f64, {2, H, 1, E / H}), d.input("v", f64, {2, H, 1, E / H}),
                              d.input("bias", f64, {1}));
    Array X0 = Array::zeros(Type{f64, {2, 1, E}});
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t e = 0; e < E; ++e) X0.set(n * E + e, X.at(n * L * E + e));
    Array K = Array::zeros(Type{f64, {2, H, 1, E / H}});
    Array out = nn::compile_with_parameters(d, {st.output}, mha)
                    .run({{"x", X0}, {"k", K}, {"v", K}, {"bias", Array::full(Type{f64, {1}}, -INFINITY)}})[0];
    for (std::int64_t n = 0; n < 2; ++n)
      for (std::int64_t e = 0; e < E; ++e) EXPECT_NEAR(out.at(n * E + e), adapted[0].at(n * L * E + e), 1e-12);
  }

  mha.merge_lora();
  std::vector<std::string> names;
  nn::for_each_parameter(mha, [&](const std::string& n, nn::Parameter&) { names.push_back(n); });
  EXPECT_EQ(names, (std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"}));
  const std::vector<Array> merged = run_plain();
  for (int k = 0; k < 2; ++k)
    for (std::int64_t i = 0; i < adapted[k].numel(); ++i) EXPECT_NEAR(merged[k].at(i), adapted[k].at(i), 1e-13);

  nn::MultiheadAttention cross_dims(E, H, {.kdim = 4, .dtype = f64});
  EXPECT_THROW(cross_dims.add_lora(), UserError);
  EXPECT_THROW(mha.add_lora(), UserError);  // bound already
}

}  // namespace
}  // namespace mg
