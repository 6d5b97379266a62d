// Module reflection: a user's model is a plain struct of layers adapted with
// BOOST_HANA_ADAPT_STRUCT (or defined with BOOST_HANA_DEFINE_STRUCT); its parameters
// and buffers are found by walking the members at compile time and named by their
// dotted paths ("encoder.fc1.weight"), so no hand-written parameter list exists to
// drift. Leaf layers expose theirs with `for_each_parameter(f)`.
//
//   struct MLP { nn::Linear fc1{784, 128}, fc2{128, 10};
//                Tensor operator()(const Tensor& x) const { return fc2(relu(fc1(x))); } };
//   BOOST_HANA_ADAPT_STRUCT(MLP, fc1, fc2);
#pragma once
#include <string>
#include <type_traits>
#include <vector>

#include <boost/hana/accessors.hpp>
#include <boost/hana/for_each.hpp>
#include <boost/hana/first.hpp>
#include <boost/hana/second.hpp>
#include <boost/hana/string.hpp>
#include <boost/hana/core/to.hpp>
#include <boost/hana/bool.hpp>
#include <boost/hana/unpack.hpp>
#include <utility>

#include "minigrad/dsl/graph.hpp"
#include "minigrad/dsl/nn/parameter.hpp"

namespace mg::nn {

template <class M>
concept LeafModule = requires(M& m) { m.for_each_parameter([](const std::string&, Parameter&) {}); };
template <class M>
concept ReflectedModule = boost::hana::Struct<M>::value;

// is_module_v<M>: M is a leaf module, or an adapted struct whose members all are modules
// (recursively). Checked once at the entry points below, so a struct with a non-module
// member is one static_assert naming the rule, not pages of Hana instantiations.
template <class M>
struct IsModule;
template <class M>
inline constexpr bool is_module_v = IsModule<std::remove_cvref_t<M>>::value;
template <class M, class Pair>
using member_type_t = std::remove_cvref_t<decltype(boost::hana::second(std::declval<Pair>())(std::declval<M&>()))>;
template <class M>
struct IsModule {
  static constexpr bool value = [] {
    if constexpr (LeafModule<M>) {
      return true;
    } else if constexpr (ReflectedModule<M>) {
      return decltype(boost::hana::unpack(boost::hana::accessors<M>(), [](auto... pairs) {
        return boost::hana::bool_c<(is_module_v<member_type_t<M, decltype(pairs)>> && ...)>;
      }))::value;
    } else {
      return false;
    }
  }();
};
#define MG_REQUIRE_MODULE(M)                                                                         \
  static_assert(::mg::nn::is_module_v<M>,                                                            \
                "miniGrad: not a module. Every member named in BOOST_HANA_ADAPT_STRUCT must be a "  \
                "layer, an adapted struct of layers, or have for_each_parameter(f); leave other "    \
                "members (ints, strings, ...) out of the macro")

// Calls f(dotted_name, Parameter&) for every parameter and buffer of `m`, in member order.
template <class M, class F>
void for_each_parameter(M& m, F&& f, const std::string& prefix = "") {
  namespace hana = boost::hana;
  MG_REQUIRE_MODULE(M);
  if constexpr (!is_module_v<M>) {
    return;  // the static_assert above said why; instantiate nothing more
  } else if constexpr (LeafModule<M>) {
    m.for_each_parameter([&](const std::string& name, Parameter& p) { f(prefix + name, p); });
  } else if constexpr (ReflectedModule<M>) {
    hana::for_each(hana::accessors<M>(), [&](auto pair) {
      std::string member = hana::to<const char*>(hana::first(pair));
      for_each_parameter(hana::second(pair)(m), f, prefix + member + ".");
    });
  }
}

// Binds every parameter of `m` to a new input of `g` named by its dotted path. A parameter
// without a value draws its initial one from `seed` (keyed by name); one that already has a
// value keeps it, so binding a trained model to a second graph (an eval graph, a new batch
// size) reuses the trained weights. nn::reset_parameters draws afresh. After this, calling
// the model builds IR in `g`.
template <class M>
void bind(M& m, Graph& g, std::uint64_t seed = 0, Loc loc = Loc::current()) {
  for_each_parameter(m, [&](const std::string& name, Parameter& p) {
    p.storage->name = name;
    p.tensor = g.input(name, p.dtype, p.shape, loc);  // parameters point at the user's bind line
    if (!p.has_value()) p.storage->value = p.init(Type{p.dtype, p.shape}, hash_name(seed, name));
    p.update = Tensor();
  });
}

// Draws every parameter's value afresh from `seed`, as a first bind does (buffers too).
template <class M>
void reset_parameters(M& m, std::uint64_t seed = 0) {
  for_each_parameter(m, [&](const std::string& name, Parameter& p) {
    p.storage->name = name;
    p.storage->value = p.init(Type{p.dtype, p.shape}, hash_name(seed, name));
  });
}

// Calls f(module&) for `m` and every module inside it (reflected members, Sequential's
// layers, any module with for_each_submodule), parents first.
template <class M, class F>
void for_each_module(M& m, F&& f) {
  namespace hana = boost::hana;
  MG_REQUIRE_MODULE(M);
  if constexpr (is_module_v<M>) {  // else the static_assert said why; instantiate nothing more
    f(m);
    if constexpr (requires { m.for_each_submodule(f); })
      m.for_each_submodule([&](auto& sub) { for_each_module(sub, f); });
    else if constexpr (ReflectedModule<M>)
      hana::for_each(hana::accessors<M>(), [&](auto pair) { for_each_module(hana::second(pair)(m), f); });
  }
}

// Training or evaluation mode for `m` and every module inside it, as torch's
// model.train() / model.eval(): Dropout drops only in training, BatchNorm normalises with
// batch statistics in training and running statistics in eval. Build the graph after
// switching: the mode is read when the forward pass is built.
template <class M>
void train(M& m, bool on = true) {
  for_each_module(m, [on](auto& x) {
    if constexpr (requires { x.training = on; }) x.training = on;
  });
}
template <class M>
void eval(M& m) { train(m, false); }

template <class M>
std::vector<Parameter*> parameters(M& m, bool include_buffers = false) {
  std::vector<Parameter*> out;
  for_each_parameter(m, [&](const std::string&, Parameter& p) {
    if (p.trainable || include_buffers) out.push_back(&p);
  });
  return out;
}

template <class M>
std::int64_t count_parameters(M& m) {
  std::int64_t n = 0;
  for (Parameter* p : parameters(m)) n += numel(p->shape);
  return n;
}

}  // namespace mg::nn
