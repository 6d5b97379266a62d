// nn modules: parameter reflection with Hana (dotted names), PyTorch-style default
// initialisation, layer forward values, and losses (known values + gradient checks).
#include <gtest/gtest.h>

#include <cmath>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "tests/ops/gradcheck.hpp"

namespace mg {

struct Block {
  nn::Linear fc1{4, 3}, fc2{3, 2, /*bias=*/false};
  Tensor operator()(const Tensor& x) const { return fc2(relu(fc1(x))); }
};
struct Net {
  Block encoder;
  nn::Sequential<nn::Linear, nn::ReLU, nn::Linear> head{nn::Linear(2, 5), nn::ReLU{}, nn::Linear(5, 1)};
  nn::LayerNorm norm{{4}};
};
struct BnNet {
  nn::Linear fc{3, 2, true, f64};
  nn::BatchNorm1D bn{2, 1e-5, 0.1, f64};
};
struct DropNet {
  nn::Linear fc{4, 4, true, f64};
  nn::Dropout drop{0.5};
};
struct FcLn {
  nn::Linear fc{2, 2, true, f64};
  nn::LayerNorm ln{{2}, 1e-5, true, f64};
};

}  // namespace mg

BOOST_HANA_ADAPT_STRUCT(mg::Block, fc1, fc2);
BOOST_HANA_ADAPT_STRUCT(mg::Net, encoder, head, norm);
BOOST_HANA_ADAPT_STRUCT(mg::FcLn, fc, ln);
BOOST_HANA_ADAPT_STRUCT(mg::BnNet, fc, bn);
BOOST_HANA_ADAPT_STRUCT(mg::DropNet, fc, drop);

namespace mg {
namespace {

Array vec(Shape s, std::vector<double> v) { return Array::from_vector(std::move(s), v); }

TEST(Modules, ParametersAreNamedByReflection) {
  Net net;
  std::vector<std::string> names;
  nn::for_each_parameter(net, [&](const std::string& n, nn::Parameter&) { names.push_back(n); });
  EXPECT_EQ(names, (std::vector<std::string>{"encoder.fc1.weight", "encoder.fc1.bias", "encoder.fc2.weight",
                                             "head.0.weight", "head.0.bias", "head.2.weight", "head.2.bias",
                                             "norm.weight", "norm.bias"}));
  EXPECT_EQ(nn::count_parameters(net), 4 * 3 + 3 + 3 * 2 + 2 * 5 + 5 + 5 + 1 + 4 + 4);
}

TEST(Modules, BindCreatesNamedInputsWithSeededInit) {
  Net a, b, c;
  Graph ga, gb, gc;
  nn::bind(a, ga, 7);
  nn::bind(b, gb, 7);
  nn::bind(c, gc, 8);
  EXPECT_TRUE(ga.ir().input("encoder.fc1.weight").valid());
  EXPECT_EQ(a.encoder.fc1.weight.tensor.shape(), (Shape{3, 4}));  // PyTorch layout [out, in]
  auto va = a.encoder.fc1.weight.value().to_doubles(), vb = b.encoder.fc1.weight.value().to_doubles();
  auto vc = c.encoder.fc1.weight.value().to_doubles();
  EXPECT_EQ(va, vb);
  EXPECT_NE(va, vc);
  const double bound = 1.0 / std::sqrt(4.0);  // U(-1/sqrt(fan_in), 1/sqrt(fan_in))
  for (double v : va) EXPECT_LE(std::fabs(v), bound);
  EXPECT_EQ(a.norm.weight.value().to_doubles(), (std::vector<double>{1, 1, 1, 1}));
}

TEST(Modules, LinearAndLayerNormForward) {
  FcLn m;
  Graph g;
  nn::bind(m, g);
  m.fc.weight.assign(vec({2, 2}, {1, 2, 3, 4}));
  m.fc.bias.assign(vec({2}, {0.5, -0.5}));
  Tensor x = g.input("x", f64, {1, 2});
  Tensor y = m.fc(x);
  Tensor z = m.ln(y);
  Executable exe = nn::compile_with_parameters(g, {y, z}, m);
  auto out = exe.run({{"x", vec({1, 2}, {1, 1})}});
  EXPECT_DOUBLE_EQ(out[0].at(0), 3.5);  // 1+2+0.5
  EXPECT_DOUBLE_EQ(out[0].at(1), 6.5);  // 3+4-0.5
  const double s = std::sqrt(2.25 + 1e-5);
  EXPECT_NEAR(out[1].at(0), -1.5 / s, 1e-12);
  EXPECT_NEAR(out[1].at(1), 1.5 / s, 1e-12);
}

TEST(Modules, UnboundModuleIsAClearError) {
  nn::Linear fc(2, 2);
  Graph g;
  Tensor x = g.input("x", f32, {1, 2});
  EXPECT_THROW(fc(x), UserError);
}

// ---- losses ----

TEST(Losses, CrossEntropyMatchesItsDefinition) {
  Graph g;
  Tensor logits = g.input("logits", f64, {3, 4});
  Tensor target = g.input("target", i64, {3});
  Tensor mean = nn::cross_entropy(logits, target);
  Tensor smooth = nn::cross_entropy(logits, target, {.label_smoothing = 0.1});
  Tensor ignore = nn::cross_entropy(logits, target, {.ignore_index = 2});
  Tensor sum = nn::cross_entropy(logits, target, {.reduction = nn::Reduction::sum});
  std::vector<double> L = {1, 2, 3, 4, -1, 0, 1, 0.5, 2, 2, -2, 0};
  std::vector<std::int64_t> T = {3, 0, 2};
  auto out = compile(g, {mean, smooth, ignore, sum})
                 .run({{"logits", vec({3, 4}, L)}, {"target", Array::from_vector<std::int64_t>({3}, T)}});
  double total = 0, total_smooth = 0, kept = 0;
  for (int i = 0; i < 3; ++i) {
    double m = -1e300, z = 0;
    for (int c2 = 0; c2 < 4; ++c2) m = std::max(m, L[i * 4 + c2]);
    for (int c2 = 0; c2 < 4; ++c2) z += std::exp(L[i * 4 + c2] - m);
    double lse = m + std::log(z), nll = lse - L[i * 4 + T[i]], uniform = 0;
    for (int c2 = 0; c2 < 4; ++c2) uniform += (lse - L[i * 4 + c2]) / 4;
    total += nll;
    total_smooth += 0.9 * nll + 0.1 * uniform;
    if (T[i] != 2) kept += nll;
  }
  EXPECT_NEAR(out[0].at(0), total / 3, 1e-12);
  EXPECT_NEAR(out[1].at(0), total_smooth / 3, 1e-12);
  EXPECT_NEAR(out[2].at(0), kept / 2, 1e-12);  // mean over the non-ignored targets
  EXPECT_NEAR(out[3].at(0), total, 1e-12);
}

TEST(Losses, RegressionLossesMatchTheirDefinitions) {
  Graph g;
  Tensor a = g.input("a", f64, {4});
  Tensor b = g.input("b", f64, {4});
  Tensor var = g.input("var", f64, {4});
  std::vector<Tensor> losses = {nn::mse_loss(a, b), nn::l1_loss(a, b, nn::Reduction::sum), nn::huber_loss(a, b, 1.0),
                                nn::smooth_l1_loss(a, b, 0.5), nn::gaussian_nll_loss(a, b, var, true)};
  std::vector<double> A = {0.1, 2.0, -1.0, 0.5}, B = {0.0, 0.0, 0.5, 0.5}, V = {1.0, 0.5, 2.0, 1e-9};
  auto out = compile(g, losses).run({{"a", vec({4}, A)}, {"b", vec({4}, B)}, {"var", vec({4}, V)}});
  double mse = 0, l1 = 0, huber = 0, sl1 = 0, gnll = 0;
  for (int i = 0; i < 4; ++i) {
    double d = std::fabs(A[i] - B[i]), v = std::max(V[i], 1e-6);
    mse += d * d / 4;
    l1 += d;
    huber += (d <= 1 ? 0.5 * d * d : d - 0.5) / 4;
    sl1 += (d < 0.5 ? 0.5 * d * d / 0.5 : d - 0.25) / 4;
    gnll += 0.5 * (std::log(v) + d * d / v + std::log(2 * M_PI)) / 4;
  }
  EXPECT_NEAR(out[0].at(0), mse, 1e-12);
  EXPECT_NEAR(out[1].at(0), l1, 1e-12);
  EXPECT_NEAR(out[2].at(0), huber, 1e-12);
  EXPECT_NEAR(out[3].at(0), sl1, 1e-12);
  EXPECT_NEAR(out[4].at(0), gnll, 1e-9);
}

TEST(Losses, BinaryCrossEntropyBothForms) {
  Graph g;
  Tensor x = g.input("x", f64, {3});
  Tensor y = g.input("y", f64, {3});
  Tensor with_logits = nn::binary_cross_entropy_with_logits(x, y);
  Tensor probs = nn::binary_cross_entropy(sigmoid(x), y);
  // x = 30 exercises the stable form; on probabilities 1 - sigmoid(30) has lost its
  // digits, so that form is compared on a second, moderate input only.
  auto out = compile(g, {with_logits, probs}).run({{"x", vec({3}, {-2, 0.5, 30})}, {"y", vec({3}, {0, 1, 0.25})}});
  auto out2 = compile(g, {with_logits, probs}).run({{"x", vec({3}, {-2, 0.5, 3})}, {"y", vec({3}, {0, 1, 0.25})}});
  auto want = [](double x3) {
    double w = 0;
    for (auto [xi, yi] : {std::pair{-2.0, 0.0}, {0.5, 1.0}, {x3, 0.25}}) {
      double log_p = -std::log1p(std::exp(-xi)), log_1mp = -xi - std::log1p(std::exp(-xi));
      w += -(yi * log_p + (1 - yi) * log_1mp) / 3;
    }
    return w;
  };
  EXPECT_NEAR(out[0].at(0), want(30), 1e-12);
  EXPECT_NEAR(out2[0].at(0), want(3), 1e-12);
  EXPECT_NEAR(out2[1].at(0), want(3), 1e-12);
}

TEST(Losses, GradientsMatchFiniteDifferences) {
  using Build = std::function<Tensor(const Tensor&, const Tensor&)>;
  std::vector<std::pair<const char*, Build>> cases = {
      {"mse", [](const Tensor& a, const Tensor& b) { return nn::mse_loss(a, b); }},
      {"l1", [](const Tensor& a, const Tensor& b) { return nn::l1_loss(a, b); }},
      {"huber", [](const Tensor& a, const Tensor& b) { return nn::huber_loss(a, b, 0.7); }},
      {"smooth_l1", [](const Tensor& a, const Tensor& b) { return nn::smooth_l1_loss(a, b, 0.7); }},
      {"bce_logits", [](const Tensor& a, const Tensor& b) { return nn::binary_cross_entropy_with_logits(a, sigmoid(b)); }},
      {"bce", [](const Tensor& a, const Tensor& b) { return nn::binary_cross_entropy(sigmoid(a), sigmoid(b)); }},
      {"gaussian_nll", [](const Tensor& a, const Tensor& b) { return nn::gaussian_nll_loss(a, b, exp(b) + 0.1); }},
  };
  for (auto& [name, build] : cases) {
    Graph g;
    Tensor a = g.input("a", f64, {2, 3});
    Tensor b = g.input("b", f64, {2, 3});
    Tensor loss = build(a, b);
    std::vector<ir::Value> inputs{a.value(), b.value()};
    std::vector<Array> values{testing::sample(a.type(), ir::Domain::any, 5), testing::sample(b.type(), ir::Domain::any, 6)};
    auto r = testing::check_gradients(loss.value(), inputs, values, 2, 1e-6, 9);
    EXPECT_TRUE(r.ok) << name << ":\n" << r.report;
  }
  Graph g;
  Tensor logits = g.input("logits", f64, {3, 5});
  Tensor target = g.input("target", i64, {3});
  Tensor loss = nn::cross_entropy(logits, target, {.label_smoothing = 0.2, .ignore_index = 4});
  std::vector<ir::Value> inputs{logits.value(), target.value()};
  std::vector<Array> values{testing::sample(logits.type(), ir::Domain::any, 3),
                            Array::from<std::int64_t>({3}, {1, 4, 0})};
  auto r = testing::check_gradients(loss.value(), inputs, values, 2, 1e-6, 10);
  EXPECT_TRUE(r.ok) << "cross_entropy:\n" << r.report;
}

TEST(Losses, ShapeErrorsNameTheLoss) {
  Graph g;
  Tensor logits = g.input("logits", f32, {3, 4});
  Tensor bad = g.input("bad", f32, {3});
  EXPECT_THROW(nn::cross_entropy(logits, bad), ShapeError);
  EXPECT_THROW(nn::mse_loss(logits, bad), ShapeError);
}

}  // namespace
}  // namespace mg

namespace mg {
namespace {

TEST(ConvModules, Conv2DAddsBiasPerChannelAndPools) {
  nn::Conv2D conv(1, 2, {2, 2}, {1, 1}, {0, 0}, {1, 1}, 1, true, f64);
  Graph g;
  nn::bind(conv, g);
  conv.weight.assign(Array::from<double>({2, 1, 2, 2}, {1, 0, 0, 1, 0, 0, 0, 0}));  // trace, zero
  conv.bias.assign(Array::from<double>({2}, {0.5, -1}));
  Tensor x = g.input("x", f64, {1, 1, 3, 3});
  Tensor y = conv(x);
  Tensor p = nn::max_pool2d(y, {.kernel_size = {2, 2}});
  Tensor a = nn::avg_pool2d(y, {.kernel_size = {2, 2}});
  EXPECT_EQ(y.shape(), (Shape{1, 2, 2, 2}));
  EXPECT_EQ(p.shape(), (Shape{1, 2, 1, 1}));
  Executable exe = nn::compile_with_parameters(g, {y, p, a}, conv);
  auto out = exe.run({{"x", Array::from<double>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9})}});
  EXPECT_EQ(out[0].to_doubles(), (std::vector<double>{6.5, 8.5, 12.5, 14.5, -1, -1, -1, -1}));
  EXPECT_EQ(out[1].to_doubles(), (std::vector<double>{14.5, -1}));
  EXPECT_EQ(out[2].to_doubles(), (std::vector<double>{10.5, -1}));
}

TEST(ConvModules, SmallCnnLossGradientsMatchFiniteDifferences) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 2, 5, 5});
  Tensor w = g.input("w", f64, {3, 2, 3, 3});
  Tensor b = g.input("b", f64, {3});
  Tensor h = relu(nn::conv2d(x, w, {2, 2}, {1, 1}) + b.reshape({1, 3, 1, 1}));
  Tensor loss = square(nn::avg_pool2d(h, {.kernel_size = {3, 3}, .stride = {1, 1}, .padding = {1, 1}})).sum();
  std::vector<ir::Value> inputs{x.value(), w.value(), b.value()};
  std::vector<Array> values{testing::sample(x.type(), ir::Domain::any, 1), testing::sample(w.type(), ir::Domain::any, 2),
                            testing::sample(b.type(), ir::Domain::any, 3)};
  auto r = testing::check_gradients(loss.value(), inputs, values, 2, 1e-6, 4);
  EXPECT_TRUE(r.ok) << r.report;
}

TEST(PoolModules, OptionsAndLayersUsePyTorchNames) {
  Graph g;
  Tensor x = g.input("x", f64, {2, 3, 7, 6});
  EXPECT_EQ(nn::max_pool2d(x, {.kernel_size = {2, 2}}).shape(), (Shape{2, 3, 3, 3}));
  EXPECT_EQ(nn::max_pool2d(x, {.kernel_size = {2, 2}, .ceil_mode = true}).shape(), (Shape{2, 3, 4, 3}));
  EXPECT_EQ(nn::max_pool2d(x, {.kernel_size = {3, 3}, .stride = {1, 1}, .dilation = {2, 2}}).shape(),
            (Shape{2, 3, 3, 2}));
  Tensor a = nn::avg_pool2d(x, {.kernel_size = {3, 3}, .stride = {2, 2}, .padding = {1, 1}, .ceil_mode = true,
                                .count_include_pad = false, .divisor_override = 5});
  EXPECT_EQ(a.shape(), (Shape{2, 3, 4, 4}));
  EXPECT_EQ(a.value().node().attrs.i64("divisor_override"), 5);
  nn::MaxPool2D pool{{.kernel_size = {3, 3}, .stride = {2, 2}, .ceil_mode = true}};
  EXPECT_EQ(pool(x).shape(), (Shape{2, 3, 3, 3}));
  nn::AvgPool2D avg{{.kernel_size = {2, 2}, .divisor_override = 2}};
  EXPECT_EQ(avg(x).shape(), (Shape{2, 3, 3, 3}));
  std::string m;
  try {
    nn::avg_pool2d(x, {.kernel_size = {2, 2}, .divisor_override = 0});
  } catch (const UserError& e) {
    m = e.what();
  }
  EXPECT_NE(m.find("divisor_override not 0"), std::string::npos) << m;
  EXPECT_NE(m.find("test_modules.cpp"), std::string::npos) << m;  // the user's line
}

TEST(ConvModules, WrongRankIsAShapeError) {
  Graph g;
  Tensor x = g.input("x", f32, {1, 28, 28});
  nn::Conv2D conv(1, 8, {3, 3});
  nn::bind(conv, g);
  EXPECT_THROW(conv(x), ShapeError);
}

}  // namespace
}  // namespace mg

namespace mg {
namespace {

TEST(BatchNorm, TrainingNormalisesAndUpdatesRunningStatsLikeTorch) {
  BnNet m;
  Graph g;
  nn::bind(m, g);
  m.fc.weight.assign(Array::from<double>({2, 3}, {1, 0, 0, 0, 1, 1}));
  m.fc.bias.assign(Array::zeros(Type{f64, {2}}));
  Tensor x = g.input("x", f64, {4, 3});
  Tensor h = m.fc(x);
  Tensor y = m.bn(h);  // training mode
  m.bn.training = false;
  Tensor y_eval = m.bn(h);
  Tensor loss = (y * y).sum() * 0.0 + (y * 0.0).sum();  // lr 0: only the buffers move
  auto step = nn::compile_train(g, loss, m, nn::SGD{.lr = 0.0}, {.extra_outputs = {y}});
  Array X = Array::from<double>({4, 3}, {1, 2, 3, 2, 0, 1, 4, 1, 1, 3, 3, 3});
  auto out = step.run_all({{"x", X}});
  // h columns: c0 = {1,2,4,3} (mean 2.5, biased var 1.25, unbiased 5/3); c1 = {5,1,2,6} (mean 3.5, var 4.25, 17/3)
  const double h0[] = {1, 2, 4, 3}, h1[] = {5, 1, 2, 6};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(out[1].at(2 * i), (h0[i] - 2.5) / std::sqrt(1.25 + 1e-5), 1e-12);
    EXPECT_NEAR(out[1].at(2 * i + 1), (h1[i] - 3.5) / std::sqrt(4.25 + 1e-5), 1e-12);
  }
  EXPECT_NEAR(m.bn.running_mean.value().at(0), 0.25, 1e-15);
  EXPECT_NEAR(m.bn.running_mean.value().at(1), 0.35, 1e-15);
  EXPECT_NEAR(m.bn.running_var.value().at(0), 0.9 + 0.1 * 5.0 / 3.0, 1e-12);
  EXPECT_NEAR(m.bn.running_var.value().at(1), 0.9 + 0.1 * 17.0 / 3.0, 1e-12);
  Executable eval = nn::compile_with_parameters(g, {y_eval}, m);
  auto e = eval.run({{"x", X}});
  EXPECT_NEAR(e[0].at(0), (1 - 0.25) / std::sqrt(0.9 + 0.5 / 3.0 + 1e-5), 1e-12);
}

TEST(BatchNorm, TrainingModeGradientsMatchFiniteDifferences) {
  nn::BatchNorm2D bn(2, 1e-5, 0.1, f64);
  Graph g;
  nn::bind(bn, g);
  Tensor x = g.input("x", f64, {3, 2, 2, 2});
  Tensor loss = (bn(x) * sin(x)).sum();
  std::vector<ir::Value> inputs{x.value(), bn.weight.tensor.value(), bn.bias.tensor.value()};
  std::vector<Array> values{testing::sample(x.type(), ir::Domain::any, 1), testing::sample(Type{f64, {2}}, ir::Domain::positive, 2),
                            testing::sample(Type{f64, {2}}, ir::Domain::any, 3)};
  auto r = testing::check_gradients(loss.value(), inputs, values, 2, 1e-6, 4);
  EXPECT_TRUE(r.ok) << r.report;
  EXPECT_THROW(bn(g.input("bad", f64, {3, 3, 2, 2})), ShapeError);
}

}  // namespace
}  // namespace mg

namespace mg {
namespace {

TEST(Dropout, FreshScaledMaskEveryStepIdentityInEval) {
  DropNet m;
  Graph g;
  nn::bind(m, g, 5);
  Tensor x = g.input("x", f64, {64, 4});
  Tensor h = m.fc(x);
  Tensor y = m.drop(h);
  m.drop.training = false;
  Tensor y_eval = m.drop(h);
  EXPECT_EQ(y_eval.value(), h.value());  // eval: identity, no node
  Tensor loss = (y * 0.0).sum();
  auto step = nn::compile_train(g, loss, m, nn::SGD{.lr = 0.0}, {.extra_outputs = {y, h}});
  Array X = testing::sample(Type{f64, {64, 4}}, ir::Domain::nonzero, 1);
  const double c0 = m.drop.counter.value().at(0);
  auto a = step.run_all({{"x", X}});
  auto b = step.run_all({{"x", X}});
  int zeros = 0, differ = 0;
  for (std::int64_t i = 0; i < 256; ++i) {
    double ya = a[1].at(i), hb = a[2].at(i);
    EXPECT_TRUE(ya == 0.0 || std::fabs(ya - 2 * hb) < 1e-12) << i;  // 0 or scaled by 1/(1-p)
    zeros += ya == 0.0;
    differ += (ya == 0.0) != (b[1].at(i) == 0.0);
  }
  EXPECT_GT(zeros, 90);  // ~128 expected
  EXPECT_LT(zeros, 166);
  EXPECT_GT(differ, 60);  // the next step draws a new mask
  EXPECT_EQ(m.drop.counter.value().at(0), c0 + 2);  // the step advanced the counter buffer
}

TEST(Dropout, GradientFlowsThroughTheKeptElements) {
  nn::Dropout drop(0.3);
  Graph g;
  nn::bind(drop, g);
  Tensor x = g.input("x", f64, {3, 5});
  Tensor loss = square(drop(x)).sum();
  std::vector<ir::Value> inputs{x.value(), drop.counter.tensor.value()};
  std::vector<Array> values{testing::sample(x.type(), ir::Domain::any, 1), Array::scalar(i64, 4)};
  auto r = testing::check_gradients(loss.value(), inputs, values, 2, 1e-6, 2);
  EXPECT_TRUE(r.ok) << r.report;
  EXPECT_THROW(nn::Dropout(1.0), UserError);
}

}  // namespace
}  // namespace mg
