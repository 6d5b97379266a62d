// Example 09: the glass box. (1) A hand-written log-softmax overflows and the loss turns
// NaN: with numerics checks on, both executors stop at the root cause, the exp on the
// user's line, and give the same report. (2) The training step as an ASCII graph. (3) Where
// a step's time, bytes and FLOPs go, the Chrome trace, and the memory peak. (4)
// explain_gradients on a deep sigmoid MLP that does not learn (vanishing gradients,
// saturated units), and on the fixed one (ReLU, shallower). Every claim printed is checked;
// the exit status is 0 only when all hold.
//   09_glass_box_debugging [--out DIR]   (writes DIR/step_trace.json; default out/09_glass_box)
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>
#include <minigrad/runtime/glassbox/telemetry.hpp>
#include "examples/main_guard.hpp"

// A classifier head: 16 features -> 4 classes.
struct Head {
  mg::nn::Linear fc1{16, 32}, fc2{32, 4};
  mg::Tensor operator()(const mg::Tensor& x) const { return fc2(mg::relu(fc1(x))); }
};
BOOST_HANA_ADAPT_STRUCT(Head, fc1, fc2);

// Example 04's shape of MLP, for the telemetry.
struct Mlp {
  mg::nn::Linear fc1{256, 256}, fc2{256, 10};
  mg::Tensor operator()(const mg::Tensor& x) const { return fc2(mg::relu(fc1(x))); }
};
BOOST_HANA_ADAPT_STRUCT(Mlp, fc1, fc2);

namespace {

int failures = 0;
void check(bool ok, const char* claim) {
  std::printf("  [%s] %s\n", ok ? "ok" : "FAILED", claim);
  failures += !ok;
}

int exp_line = 0;  // the line of the overflowing exp, for the check
// Log-softmax written by hand, without subtracting the row maximum: exp overflows above
// 88.7 in f32, the sum becomes inf and log(inf) - inf is NaN.
mg::Tensor naive_log_softmax(const mg::Tensor& logits) {
  mg::Tensor e = mg::exp(logits); exp_line = __LINE__;
  return logits - mg::log(e.sum({1}, true));
}

// A deep MLP whose hidden layers use sigmoid (broken) or ReLU (fixed).
template <int Depth>
struct Deep {
  std::vector<mg::nn::Linear> layers;
  bool use_relu = false;
  explicit Deep(bool relu) : use_relu(relu) {
    layers.emplace_back(8, 32);
    for (int i = 1; i < Depth - 1; ++i) layers.emplace_back(32, 32);
    layers.emplace_back(32, 1);
  }
  mg::Tensor operator()(const mg::Tensor& x) const {
    mg::Tensor h = x;
    for (std::size_t i = 0; i + 1 < layers.size(); ++i) h = use_relu ? mg::Tensor(mg::relu(layers[i](h))) : mg::Tensor(mg::sigmoid(layers[i](h)));
    return layers.back()(h);
  }
  template <class F> void for_each_parameter(F&& f) {
    for (std::size_t i = 0; i < layers.size(); ++i)
      layers[i].for_each_parameter([&](const std::string& n, mg::nn::Parameter& p) { f("fc" + std::to_string(i) + "." + n, p); });
  }
};

mg::Array random_array(mg::Shape shape, std::uint64_t seed, double scale) {
  mg::Array a(mg::Type{mg::f32, shape});
  std::uint64_t s = seed * 6364136223846793005ull + 1442695040888963407ull;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    s = s * 6364136223846793005ull + 1442695040888963407ull;
    a.data<float>()[i] = static_cast<float>(scale * ((static_cast<double>(s >> 11) / 9007199254740992.0) * 2 - 1));
  }
  return a;
}

// Part 1 on one executor: returns the report of the NaN's root cause.
mg::NumericsReport first_nan(mg::Backend backend) {
  Head model;
  mg::Graph g;
  mg::nn::bind(model, g, 1);
  mg::Tensor x = g.input("x", mg::f32, {8, 16});
  mg::Tensor y = g.input("y", mg::f32, {8, 4});  // one-hot targets
  mg::Tensor loss = -(naive_log_softmax(model(x)) * y).sum() / 8.0;
  auto step = mg::nn::compile_train(g, loss, model, mg::nn::SGD{.lr = 0.1},
                                    {.backend = backend, .check_numerics = true});
  mg::Array Y(mg::Type{mg::f32, {8, 4}});
  for (int i = 0; i < 8; ++i)
    for (int j = 0; j < 4; ++j) Y.data<float>()[i * 4 + j] = j == i % 4;
  step.run({{"x", random_array({8, 16}, 1, 1.0)}, {"y", Y}});  // fine at this scale
  try {
    step.run({{"x", random_array({8, 16}, 2, 1e3)}, {"y", Y}});  // large inputs: logits in the hundreds
  } catch (const mg::NumericsError& e) {
    return e.report();
  }
  return {};
}

template <int Depth>
std::pair<mg::nn::GradientReport, std::pair<double, double>> train_deep(bool relu) {
  Deep<Depth> model(relu);
  mg::Graph g;
  mg::nn::bind(model, g, 5);
  mg::Tensor x = g.input("x", mg::f32, {64, 8});
  mg::Tensor y = g.input("y", mg::f32, {64, 1});
  mg::Tensor loss = mg::nn::mse_loss(model(x), y);
  auto step = mg::nn::compile_train(g, loss, model, mg::nn::SGD{.lr = 0.05});
  const mg::Array X = random_array({64, 8}, 7, 1.0);
  mg::Array Y(mg::Type{mg::f32, {64, 1}});
  for (int i = 0; i < 64; ++i) Y.data<float>()[i] = X.at(i * 8) * X.at(i * 8 + 1) > 0 ? 1.0f : -1.0f;
  const std::vector<mg::Feed> batch{{"x", X}, {"y", Y}};
  auto report = mg::nn::explain_gradients(step, batch);
  const double first = step.run(batch);
  double last = first;
  for (int i = 0; i < 300; ++i) last = step.run(batch);
  return {report, {first, last}};
}

bool mentions(const mg::nn::GradientReport& r, const std::string& what, const std::string& name) {
  for (auto& d : r.diagnosis)
    if (d.find(what) != std::string::npos && d.find(name) != std::string::npos) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) try {
  std::string out_dir = "out/09_glass_box";
  for (int i = 1; i < argc; ++i)
    if (std::strcmp(argv[i], "--out") == 0 && i + 1 < argc) out_dir = argv[++i];

  std::printf("== 1. the first NaN, by its root cause\n");
  const mg::NumericsReport ri = first_nan(mg::Backend::interpreter);
  std::printf("%s", ri.text().c_str());
  check(ri.op == "exp", "the root cause is the exp, not the log, sub or loss after it");
  check(ri.loc.line == static_cast<std::uint32_t>(exp_line) && std::strstr(ri.loc.file, "09_glass_box_debugging"),
        "it names the exp's line in this file");
  check(ri.result.pos_inf > 0 && ri.hint.find("88.7") != std::string::npos, "overflow to +inf, and the hint says why");
  const mg::NumericsReport rc = first_nan(mg::Backend::c99);
  const bool same = rc.executor == "c99" && rc.same_root_cause(ri);
  std::printf("the C99 backend's report:\n%s", rc.text().c_str());
  check(same, "the C99 backend reports the same root cause, lines, counts and positions");

  std::printf("\n== 2. the training step, as a graph\n");
  {
    Head model;
    mg::Graph g;
    mg::nn::bind(model, g, 1);
    mg::Tensor x = g.input("x", mg::f32, {8, 16});
    mg::Tensor y = g.input("y", mg::i64, {8});
    auto step = mg::nn::compile_train(g, mg::nn::cross_entropy(model(x), y), model, mg::nn::Adam{.lr = 1e-3});
    const std::string view = mg::nn::visualize(step, {.max_lines = 80});
    std::printf("%s", view.c_str());
    check(view.find("forward\n") != std::string::npos && view.find("backward (grad)\n") != std::string::npos &&
              view.find("optimizer update\n") != std::string::npos,
          "forward, backward and update blocks");
  }

  std::printf("\n== 3. telemetry of an MLP training step (20 steps, batch 128)\n");
  {
    Mlp model;
    mg::Graph g;
    mg::nn::bind(model, g, 1);
    mg::Tensor x = g.input("x", mg::f32, {128, 256});
    mg::Tensor y = g.input("y", mg::i64, {128});
    auto step = mg::nn::compile_train(g, mg::nn::cross_entropy(model(x), y), model, mg::nn::Adam{.lr = 1e-3},
                                      {.profile = true});
    mg::Array Y(mg::Type{mg::i64, {128}});
    for (int i = 0; i < 128; ++i) Y.data<std::int64_t>()[i] = i % 10;
    const mg::Array X = random_array({128, 256}, 3, 1.0);
    for (int i = 0; i < 20; ++i) step.run({{"x", X}, {"y", Y}});
    namespace gb = mg::rt::glassbox;
    std::printf("%s", gb::telemetry_table(step.executable(), false, 12).c_str());
    std::printf("%s", gb::memory_report(step.executable(), 5).c_str());
    // The GEMMs of one step, standing alone or leading a fused node: forward fc1 and fc2,
    // then fc2's weight gradient, the gradient into fc2's input and fc1's weight gradient
    // (none into x): 2 * m * n * k each.
    std::int64_t mm_flops = 0;
    const mg::ir::Graph& eg = step.executable().graph();
    for (mg::ir::NodeId id = 0; id < eg.size(); ++id) {
      const mg::ir::Node& n = eg.node(id);
      if (n.kind == mg::ir::NodeKind::op && n.op_name() == "matmul") mm_flops += gb::node_cost(eg, id).flops;
      for (const auto& body : n.regions)
        for (mg::ir::NodeId b = 0; b < body->size(); ++b)
          if (body->node(b).kind == mg::ir::NodeKind::op && body->node(b).op_name() == "matmul")
            mm_flops += gb::node_cost(*body, b).flops;
    }
    const std::int64_t want = 2 * (2 * 128LL * 256 * 256 + 3 * 128LL * 256 * 10);
    std::printf("GEMM FLOPs per step from the registry: %lld; by hand: %lld\n", static_cast<long long>(mm_flops),
                static_cast<long long>(want));
    check(mm_flops == want, "matmul FLOPs are counted exactly from the shapes");
    std::filesystem::create_directories(out_dir);
    const std::string trace = out_dir + "/step_trace.json";
    std::ofstream(trace) << gb::chrome_trace_json(step.executable());
    std::printf("wrote %s (open in chrome://tracing or ui.perfetto.dev)\n", trace.c_str());
    check(std::filesystem::file_size(trace) > 100, "the Chrome trace of the last step");
  }

  std::printf("\n== 4. why a deep sigmoid MLP does not learn\n");
  auto [broken, broken_loss] = train_deep<8>(false);
  std::printf("%s", broken.text().c_str());
  std::printf("loss %.4f -> %.4f after 300 SGD steps\n", broken_loss.first, broken_loss.second);
  check(mentions(broken, "vanishing gradient", "fc0.weight"), "the first layer's gradient vanishes");
  check(broken_loss.second > 0.9, "its loss stalls near 1, the targets' variance: it only learns their mean");
  std::printf("\nthe fix: ReLU and 4 layers\n");
  auto [fixed, fixed_loss] = train_deep<4>(true);
  std::printf("%s", fixed.text().c_str());
  std::printf("loss %.4f -> %.4f after 300 SGD steps\n", fixed_loss.first, fixed_loss.second);
  check(!mentions(fixed, "vanishing gradient", "fc0.weight"), "no vanishing gradient in the first layer");
  check(fixed_loss.second < 0.5 * broken_loss.second, "and the loss falls to less than half the broken net's");

  std::printf(failures ? "\n%d claim(s) FAILED\n" : "\nall claims hold\n", failures);
  return failures ? 1 : 0;
} MG_EXAMPLE_CATCH
