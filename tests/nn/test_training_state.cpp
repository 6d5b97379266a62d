// Training state as users meet it: a model can be returned from a factory with its training
// step (parameters are shared, never borrowed raw), binding again keeps trained weights, an
// eval executable sees later training, nn::Evaluator covers any batch size, nn::train/eval
// switch every module, nn::load is strict like load_state_dict, and a training step's whole
// state (optimizer, step counter, schedule, Dropout's stream) round-trips bit for bit.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <optional>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "tests/scratch_dir.hpp"

namespace mg {

struct Small {
  nn::Linear fc1{3, 4, true, f64};
  nn::BatchNorm1D bn{4, 1e-5, 0.1, f64};
  nn::Dropout drop{0.25};
  nn::Linear fc2{4, 2, true, f64};
  Tensor operator()(const Tensor& x) const { return fc2(drop(relu(bn(fc1(x))))); }
};
struct Nested {
  Small body;
  nn::Sequential<nn::Linear, nn::Dropout> head{nn::Linear(2, 2, true, f64), nn::Dropout(0.5)};
};

}  // namespace mg

BOOST_HANA_ADAPT_STRUCT(mg::Small, fc1, bn, drop, fc2);
BOOST_HANA_ADAPT_STRUCT(mg::Nested, body, head);

namespace mg {
namespace {

Array batch_x(std::int64_t n, int k) {
  Array a(Type{f64, {n, 3}});
  for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, std::sin(0.37 * static_cast<double>(i) + 1.3 * k));
  return a;
}
Array batch_y(std::int64_t n, int k) {
  Array a(Type{i64, {n}});
  for (std::int64_t i = 0; i < n; ++i) a.set(i, static_cast<double>((i + k) % 2));
  return a;
}

struct Trainer {
  Small model;
  nn::TrainStep step;
};

// A factory that returns the model and its step by value: the model moves after compiling.
Trainer make_trainer(std::uint64_t seed) {
  Small model;
  Graph g;
  nn::bind(model, g, seed);
  Tensor x = g.input("x", f64, {8, 3});
  Tensor y = g.input("y", i64, {8});
  Tensor loss = nn::cross_entropy(model(x), y);
  auto step = nn::compile_train(g, loss, model, nn::SGD{.lr = 0.1, .momentum = 0.9},
                                {.schedule = nn::step_lr(2, 0.5)});
  return Trainer{std::move(model), std::move(step)};
}

TEST(TrainingState, ModelAndStepReturnedFromAFactory) {
  Trainer t = make_trainer(3);
  double first = t.step.run({{"x", batch_x(8, 0)}, {"y", batch_y(8, 0)}});
  for (int k = 1; k < 5; ++k) t.step.run({{"x", batch_x(8, k)}, {"y", batch_y(8, k)}});
  EXPECT_TRUE(std::isfinite(first));
  // The moved model sees the trained values (shared storage), by name.
  auto params = t.step.parameters();
  EXPECT_EQ(params.at("fc1.weight").to_doubles(), t.model.fc1.weight.value().to_doubles());
  EXPECT_EQ(t.model.fc1.weight.name(), "fc1.weight");
}

TEST(TrainingState, StepOutlivesTheModel) {
  std::optional<nn::TrainStep> step;
  {
    Small model;
    Graph g;
    nn::bind(model, g, 1);
    Tensor x = g.input("x", f64, {8, 3});
    Tensor y = g.input("y", i64, {8});
    step.emplace(nn::compile_train(g, nn::cross_entropy(model(x), y), model, nn::Adam{.lr = 1e-2}));
  }
  for (int k = 0; k < 3; ++k) EXPECT_TRUE(std::isfinite(step->run({{"x", batch_x(8, k)}, {"y", batch_y(8, k)}})));
  EXPECT_EQ(step->parameters().size(), 9u);  // 4 of the Linears, BatchNorm's 4, Dropout's counter (a buffer)
}

TEST(TrainingState, BindingAgainKeepsTrainedWeightsAndEvalSeesTraining) {
  Trainer t = make_trainer(5);
  t.step.run({{"x", batch_x(8, 0)}, {"y", batch_y(8, 0)}});
  const auto trained = t.model.fc1.weight.value().to_doubles();

  nn::eval(t.model);
  Graph eg;
  nn::bind(t.model, eg, /*seed=*/99);  // a second graph: values are kept, not drawn from seed 99
  EXPECT_EQ(t.model.fc1.weight.value().to_doubles(), trained);
  Tensor xe = eg.input("x", f64, {3, 3});
  Executable infer = nn::compile_with_parameters(eg, {t.model(xe)}, t.model);
  Array before = infer.run({{"x", batch_x(3, 7)}})[0];
  t.step.run({{"x", batch_x(8, 1)}, {"y", batch_y(8, 1)}});  // more training...
  Array after = infer.run({{"x", batch_x(3, 7)}})[0];         // ...is seen without recompiling
  EXPECT_NE(before.to_doubles(), after.to_doubles());

  nn::reset_parameters(t.model, 99);  // the explicit way to draw afresh
  EXPECT_NE(t.model.fc1.weight.value().to_doubles(), trained);
}

TEST(TrainingState, TrainAndEvalSwitchEveryModule) {
  Nested m;
  nn::eval(m);
  EXPECT_FALSE(m.body.drop.training);
  EXPECT_FALSE(m.body.bn.training);
  EXPECT_FALSE(boost::hana::at_c<1>(m.head.layers).training);
  nn::train(m);
  EXPECT_TRUE(m.body.drop.training);
  EXPECT_TRUE(m.body.bn.training);
  EXPECT_TRUE(boost::hana::at_c<1>(m.head.layers).training);
}

TEST(TrainingState, EvaluatorRunsAnyBatchSizeWithTheTrainedValues) {
  Trainer t = make_trainer(2);
  for (int k = 0; k < 3; ++k) t.step.run({{"x", batch_x(8, k)}, {"y", batch_y(8, k)}});
  nn::Evaluator predict(t.model);
  // 10 samples as a batch of 8 and a partial batch of 2 equal one batch of 10, row by row.
  Array full = predict(batch_x(10, 4));
  Array x = batch_x(10, 4);
  Array head(Type{f64, {8, 3}}), tail(Type{f64, {2, 3}});
  for (std::int64_t i = 0; i < 24; ++i) head.set(i, x.at(i));
  for (std::int64_t i = 0; i < 6; ++i) tail.set(i, x.at(24 + i));
  Array a = predict(head), b = predict(tail);
  EXPECT_EQ(predict.num_compiled(), 3u);
  for (std::int64_t i = 0; i < 16; ++i) EXPECT_NEAR(a.at(i), full.at(i), 1e-12);
  for (std::int64_t i = 0; i < 4; ++i) EXPECT_NEAR(b.at(i), full.at(16 + i), 1e-12);
  // Eval mode: Dropout is the identity, so running twice gives the same values.
  EXPECT_EQ(predict(head).to_doubles(), a.to_doubles());
  // It keeps working after the model is gone and sees further training.
  Small moved = std::move(t.model);
  t.step.run({{"x", batch_x(8, 5)}, {"y", batch_y(8, 5)}});
  EXPECT_NE(predict(head).to_doubles(), a.to_doubles());
}

TEST(TrainingState, StrictLoadListsMissingUnexpectedAndMismatched) {
  testing::ScratchDir dir("training_state_load");
  Small a;
  Graph g;
  nn::bind(a, g, 1);
  const std::string path = (dir / "small.safetensors").string();
  nn::save(a, path);
  Small b;
  nn::load(b, path);
  EXPECT_EQ(b.fc2.bias.value().to_doubles(), a.fc2.bias.value().to_doubles());

  auto tensors = io::load_safetensors(path).tensors;
  tensors.erase("fc1.bias");
  tensors["extra.weight"] = Array::zeros(Type{f64, {1}});
  io::save_safetensors(path, tensors);
  try {
    nn::load(b, path);
    FAIL() << "strict load accepted a missing and an unexpected key";
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("missing keys: fc1.bias"), std::string::npos) << m;
    EXPECT_NE(m.find("unexpected keys: extra.weight"), std::string::npos) << m;
  }
  nn::LoadReport r = nn::load(b, path, {.strict = false});
  EXPECT_EQ(r.missing, (std::vector<std::string>{"fc1.bias"}));
  EXPECT_EQ(r.unexpected, (std::vector<std::string>{"extra.weight"}));

  tensors["fc1.bias"] = Array::zeros(Type{f64, {5}});
  io::save_safetensors(path, tensors);
  try {
    nn::load(b, path, {.strict = false});
    FAIL() << "a shape mismatch was accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("fc1.bias (model f64[4], file f64[5])"), std::string::npos) << e.what();
  }
}

TEST(TrainingState, StateDictRoundTripResumesBitIdentically) {
  testing::ScratchDir dir("training_state_resume");
  const std::string path = (dir / "run.safetensors").string();
  auto batches = [](nn::TrainStep& s, int from, int to) {
    for (int k = from; k < to; ++k) s.run({{"x", batch_x(8, k)}, {"y", batch_y(8, k)}});
  };
  Trainer straight = make_trainer(4);
  batches(straight.step, 0, 7);

  Trainer first = make_trainer(4);
  batches(first.step, 0, 3);
  first.step.save(path);
  Trainer second = make_trainer(11);  // other initial values: all of them are overwritten
  second.step.load(path);
  EXPECT_EQ(second.step.steps_done(), 3);
  EXPECT_DOUBLE_EQ(second.step.current_lr(), 0.1 * 0.5);  // step_lr(2, 0.5) after 3 steps: not restarted
  batches(second.step, 3, 7);
  auto want = straight.step.state_dict(), got = second.step.state_dict();
  ASSERT_EQ(want.size(), got.size());
  for (auto& [name, value] : want) EXPECT_EQ(value.to_doubles(), got.at(name).to_doubles()) << name;
  EXPECT_EQ(second.model.fc2.weight.value().to_doubles(), straight.model.fc2.weight.value().to_doubles());

  auto broken = io::load_safetensors(path).tensors;
  broken.erase("optim.step");
  io::save_safetensors(path, broken);
  EXPECT_THROW(second.step.load(path), UserError);
}

TEST(LayerErrors, ShapeErrorInsideSequentialNamesTheCallersLine) {
  nn::Sequential<nn::Linear, nn::ReLU, nn::Linear> seq{nn::Linear(3, 4), nn::ReLU{}, nn::Linear(5, 2)};
  Graph g;
  nn::bind(seq, g);
  Tensor x = g.input("x", f32, {2, 3});
  const int line = __LINE__ + 2;
  try {
    Tensor y = seq(x);
    FAIL() << "a [2,4] activation went into Linear(5, 2)";
  } catch (const ShapeError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("test_training_state.cpp:" + std::to_string(line)), std::string::npos) << m;
    EXPECT_EQ(m.find("layers.hpp"), std::string::npos) << m;
  }
}

// compile() of a module's output does not know the parameters' values: running it says
// which input is missing, where it was bound, and how to supply the values.
TEST(LayerErrors, AParameterMissingFromRunNamesTheBindLineAndTheFix) {
  nn::Linear fc(3, 2);
  Graph g;
  const int line = __LINE__ + 1;
  nn::bind(fc, g);
  Tensor x = g.input("x", f32, {1, 3});
  try {
    compile(g, {fc(x)}).run({{"x", Array::zeros(Type{f32, {1, 3}})}});
    FAIL() << "ran without the weight";
  } catch (const UserError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("test_training_state.cpp:" + std::to_string(line)), std::string::npos) << m;
    EXPECT_NE(m.find("missing input 'weight' (f32[2,3])"), std::string::npos) << m;
    EXPECT_NE(m.find("nn::compile_with_parameters"), std::string::npos) << m;
  }
  EXPECT_EQ(nn::compile_with_parameters(g, {fc(x)}, fc).run({{"x", Array::zeros(Type{f32, {1, 3}})}})[0].numel(), 2);
}

}  // namespace
}  // namespace mg
