// nn::Evaluator: inference on batches of any size, like calling a PyTorch model under
// torch.no_grad() in eval mode. Shapes are static, so it compiles one executable per
// distinct input type on first use and caches it: a test set's final partial batch is
// just another shape. It owns a copy of the model's structure, in eval mode, whose
// parameters share the model's storage: it always runs the current (trained) values and
// stays valid when the model moves or dies.
//
//   nn::Evaluator predict(model);                       // forward: model(x)
//   Array logits = predict(x_batch);                    // any batch size
//   nn::Evaluator probs(model, [](const Mlp& m, const Tensor& x) { return softmax(m(x)); });
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "minigrad/dsl/compile.hpp"
#include "minigrad/dsl/nn/module.hpp"
#include "minigrad/dsl/nn/train.hpp"

namespace mg::nn {

// Makes `to`'s parameters share `from`'s storage (same structure: `to` is a copy of `from`).
template <class M>
void share_parameters(M& from, M& to) {
  std::vector<std::shared_ptr<ParameterStorage>> storage;
  for_each_parameter(from, [&](const std::string&, Parameter& p) { storage.push_back(p.storage); });
  std::size_t i = 0;
  for_each_parameter(to, [&](const std::string&, Parameter& p) { p.storage = storage.at(i++); });
}

template <class M>
class Evaluator {
 public:
  using Forward = std::function<Tensor(const M&, const Tensor&)>;

  explicit Evaluator(M& model, Forward forward = nullptr, Backend backend = Backend::interpreter,
                     std::uint64_t seed = 0)
      : model_(std::make_shared<M>(model)), forward_(std::move(forward)), backend_(backend), seed_(seed) {
    share_parameters(model, *model_);
    nn::eval(*model_);
    if (!forward_) forward_ = [](const M& m, const Tensor& x) { return Tensor(m(x)); };
  }

  // The forward pass on `x` (input name "x"), compiled for x's type on first use.
  Array operator()(const Array& x) const {
    const std::string key = to_string(x.type());
    auto it = cache_->find(key);
    if (it == cache_->end()) {
      Graph g;
      bind(*model_, g, seed_);  // parameters with values keep them (shared storage)
      Tensor in = g.input("x", x.dtype(), x.shape());
      Tensor out = forward_(*model_, in);
      it = cache_->emplace(key, compile_with_parameters(g, {out}, *model_, backend_)).first;
    }
    return it->second.run({{"x", x}})[0];
  }

  std::size_t num_compiled() const { return cache_->size(); }  // distinct input types seen

 private:
  std::shared_ptr<M> model_;
  Forward forward_;
  Backend backend_;
  std::uint64_t seed_;
  std::shared_ptr<std::map<std::string, Executable>> cache_ = std::make_shared<std::map<std::string, Executable>>();
};

}  // namespace mg::nn
