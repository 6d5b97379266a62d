// Layers: leaf modules with parameters (Linear, Embedding, LayerNorm), stateless
// modules (Flatten, activations) and Sequential. Parameters use PyTorch's layouts and
// default initialisation, so weights exchange with PyTorch via SafeTensors.
#pragma once
#include <string>

#include <boost/hana/fold_left.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/tuple.hpp>

#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/functions.hpp"
#include "minigrad/dsl/nn/module.hpp"
#include "minigrad/dsl/nn/parameter.hpp"
#include "minigrad/dsl/tensor_methods.hpp"

namespace mg::nn {

// y = x W^T + b; x[..., in] -> [..., out]. weight [out, in], bias [out].
struct Linear {
  Parameter weight, bias;
  bool has_bias = true;
  Linear(std::int64_t in, std::int64_t out, bool bias = true, DType dtype = default_float);
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const;
  template <class F> void for_each_parameter(F&& f) {
    f("weight", weight);
    if (has_bias) f("bias", bias);
  }
};

// Rows of a [num, dim] table selected by integer indices: i64[...] -> [..., dim].
struct Embedding {
  Parameter weight;
  Embedding(std::int64_t num, std::int64_t dim, DType dtype = default_float);
  Tensor operator()(const Tensor& index, Loc loc = Loc::current()) const;
  template <class F> void for_each_parameter(F&& f) { f("weight", weight); }
};

// Normalises over the trailing `normalized_shape` dims (biased variance, as PyTorch).
struct LayerNorm {
  Parameter weight, bias;
  Shape normalized_shape;
  double eps = 1e-5;
  bool affine = true;
  LayerNorm(Shape normalized_shape, double eps = 1e-5, bool affine = true, DType dtype = default_float);
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const;
  template <class F> void for_each_parameter(F&& f) {
    if (affine) {
      f("weight", weight);
      f("bias", bias);
    }
  }
};

// Inverted dropout (as torch.nn.Dropout): in training, zeroes each element with
// probability p and scales the rest by 1/(1-p), with a fresh mask every step (a counter
// buffer, advanced by the training step, keys the random stream); identity in eval.
struct Dropout {
  double p = 0.5;
  bool training = true;
  Parameter counter;
  explicit Dropout(double p = 0.5);
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const;
  template <class F> void for_each_parameter(F&& f) { f("counter", counter); }
};

// Stateless modules.
struct Flatten {  // [N, ...] -> [N, prod(...)]
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const { return flatten(x, 1, -1, loc); }
  template <class F> void for_each_parameter(F&&) {}
};
#define MG_ACTIVATION_MODULE(Name, expr)                                                      \
  struct Name {                                                                                \
    Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const { return Tensor(expr, loc); } \
    template <class F> void for_each_parameter(F&&) {}                                         \
  };
MG_ACTIVATION_MODULE(ReLU, relu(x))
MG_ACTIVATION_MODULE(Tanh, tanh(x))
MG_ACTIVATION_MODULE(Sigmoid, sigmoid(x))
MG_ACTIVATION_MODULE(SiLU, silu(x))
#undef MG_ACTIVATION_MODULE
struct GELU {
  std::string approximate = "none";
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const { return Tensor(gelu(x, approximate), loc); }
  template <class F> void for_each_parameter(F&&) {}
};
struct Softmax {
  std::int64_t axis = -1;
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const { return softmax(x, axis, loc); }
  template <class F> void for_each_parameter(F&&) {}
};

// Applies its modules in order; their parameters are named "0.weight", "1.bias", ...
template <class... Ms>
struct Sequential {
  boost::hana::tuple<Ms...> layers;
  explicit Sequential(Ms... ms) : layers(std::move(ms)...) {}
  // Each layer is built at the caller's line (layers that take a Loc get it), so a shape
  // error names the line that called the Sequential, not this header.
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const {
    return boost::hana::fold_left(layers, x, [&](const Tensor& acc, const auto& m) {
      if constexpr (requires { m(acc, loc); }) return Tensor(m(acc, loc), loc);
      else return Tensor(m(acc), loc);
    });
  }
  template <class F> void for_each_parameter(F&& f);
  template <class F> void for_each_submodule(F&& f) { boost::hana::for_each(layers, [&](auto& m) { f(m); }); }
};

template <class... Ms>
template <class F>
void Sequential<Ms...>::for_each_parameter(F&& f) {
  std::size_t i = 0;
  boost::hana::for_each(layers, [&](auto& m) { nn::for_each_parameter(m, f, std::to_string(i++) + "."); });
}

}  // namespace mg::nn
