// Per-sample gradients as vmap(grad(...)) of example 04's MLP and example 05's CNN
// (examples/fashion_models.hpp), in f64: equal to a loop of single-example gradients to
// 1e-12, on the interpreter, the C99 backend and after the pass pipeline.
#include <gtest/gtest.h>

#include <cmath>

#include "examples/fashion_models.hpp"
#include "tests/ops/gradcheck.hpp"
#include "tests/transforms/run_everywhere.hpp"

namespace mg {
namespace {

template <class M>
void check_per_sample(M& model, Shape sample, std::int64_t batch) {
  for (nn::Parameter* p : nn::parameters(model)) p->dtype = f64;
  auto loss_of = [&](const Tensor& x, const Tensor& y) {  // one example: x [sample...], y i64[]
    return nn::cross_entropy(model(x.unsqueeze(0)), y.reshape({1}));
  };
  Shape batched = sample;
  batched.insert(batched.begin(), batch);
  Array xs = testing::sample(Type{f64, batched}, ir::Domain::any, 11);
  Array ys(Type{i64, {batch}});
  for (std::int64_t b = 0; b < batch; ++b) ys.set(b, static_cast<double>((3 * b + 1) % 10));

  // The reference: one graph for a single example, run once per example.
  Graph g1;
  nn::bind(model, g1, 7);
  Tensor x1 = g1.input("x", f64, sample);
  Tensor y1 = g1.input("y", i64, {});
  std::vector<Tensor> params1;
  for (nn::Parameter* p : nn::parameters(model)) params1.push_back(p->tensor);
  std::vector<Tensor> g_single = grad(loss_of(x1, y1), params1);
  std::vector<ir::NodeId> ids;
  for (auto& t : g_single) ids.push_back(t.value().id);
  rt::Executable single = rt::compile(g1.ir(), ids);

  // vmap(grad): one graph for the whole batch.
  Graph g;
  nn::bind(model, g, 7);
  Tensor X = g.input("X", f64, batched);
  Tensor Y = g.input("Y", i64, {batch});
  std::vector<Tensor> params;
  for (nn::Parameter* p : nn::parameters(model)) params.push_back(p->tensor);
  auto per_sample = vmap([&](const std::vector<Tensor>& a) { return grad(loss_of(a[0], a[1]), params); }, {0, 0});
  std::vector<Tensor> G = per_sample({X, Y});

  rt::Bindings bind{{"X", xs}, {"Y", ys}};
  for (nn::Parameter* p : nn::parameters(model)) bind[p->name()] = p->value();
  std::vector<Array> got = testing::run_everywhere(g, G, bind);

  const std::int64_t per = Type{f64, sample}.numel();
  for (std::int64_t b = 0; b < batch; ++b) {
    rt::Bindings one;
    for (nn::Parameter* p : nn::parameters(model)) one[p->name()] = p->value();
    Array xb(Type{f64, sample});
    for (std::int64_t i = 0; i < per; ++i) xb.set(i, xs.at(b * per + i));
    one["x"] = xb;
    one["y"] = Array::scalar(i64, ys.at(b));
    std::vector<Array> want = single.run(one);
    for (std::size_t k = 0; k < want.size(); ++k) {
      ASSERT_EQ(got[k].numel(), batch * want[k].numel());
      const std::int64_t n = want[k].numel();
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_NEAR(got[k].at(b * n + i), want[k].at(i), 1e-12 * (1 + std::fabs(want[k].at(i))))
            << "parameter " << k << " example " << b << " element " << i;
    }
  }
}

TEST(PerSampleGradients, FashionMlpEqualsTheLoopOfSingleExampleGradients) {
  examples::FashionMlp model;
  check_per_sample(model, {784}, 8);
}

TEST(PerSampleGradients, FashionCnnEqualsTheLoopOfSingleExampleGradients) {
  examples::FashionCnn model;
  check_per_sample(model, {1, 28, 28}, 4);
}

}  // namespace
}  // namespace mg
