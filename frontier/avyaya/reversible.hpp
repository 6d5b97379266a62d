// ReversibleBlock(f, g) and ReversibleSequential: RevNet's additive coupling as nn modules.
//   y1 = x1 + f(x2),  y2 = x2 + g(y1);   inverse: x2 = y2 - g(y1), x1 = y1 - f(x2)
// f and g are any modules [..., d] -> [..., d] (Linear, Sequential, a reflected struct);
// the block acts on x [..., 2d] = (x1 | x2). ReversibleSequential's call is one custom_vjp:
// the training step keeps no per-block activation (the backward rebuilds them from the
// output), so its planned peak is flat in depth; `ordinary(x)` is the same network by plain
// backprop (activations kept), for comparison. Parameters are named "3.f.0.weight", ...
//
//   avyaya::ReversibleSequential<Block> rev;   // Block = ReversibleBlock<MLP, MLP>
//   for (int i = 0; i < 100; ++i) rev.blocks.emplace_back(MLP{d, h}, MLP{d, h});
//   nn::bind(rev, g);  Tensor y = rev(x);  Tensor x_again = rev.inverse(y);
#pragma once
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "minigrad/dsl/nn/module.hpp"
#include "minigrad/frontier/avyaya/coupling.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::frontier::avyaya {

namespace detail {

template <class M>
std::size_t count_tensors(M& m) {
  std::size_t n = 0;
  nn::for_each_parameter(m, [&](const std::string&, nn::Parameter&) { ++n; });
  return n;
}

// The tensors standing for m's parameters in the graph it was bound to (nn::bind).
template <class M>
void append_tensors(M& m, Tensors& out, const std::string& prefix, Loc loc) {
  nn::for_each_parameter(m, [&](const std::string& name, nn::Parameter& p) {
    if (!p.tensor.valid())
      throw UserError("ReversibleSequential: parameter '" + prefix + name + "' is not bound to a graph; call nn::bind first",
                      SourceLoc::from(loc));
    out.push_back(p.tensor);
  });
}

// m applied with explicit parameter tensors: a private copy of m is rebound to them on
// each call (the custom_vjp backward applies f to the region's copies of the parameters).
template <class M>
CouplingFn erase(const M& m) {
  auto scratch = std::make_shared<M>(m);
  return [scratch](const Tensor& x, std::span<const Tensor> ps, Loc loc) {
    std::size_t k = 0;
    nn::for_each_parameter(*scratch, [&](const std::string&, nn::Parameter& p) { p.tensor = ps[k++]; });
    if constexpr (requires { (*scratch)(x, loc); }) return Tensor((*scratch)(x, loc), loc);
    else return Tensor((*scratch)(x), loc);
  };
}

}  // namespace detail

template <class F, class G>
struct ReversibleBlock {
  F f;
  G g;
  ReversibleBlock(F f_, G g_) : f(std::move(f_)), g(std::move(g_)) {}

  // One block as ordinary nodes, on x [..., 2d].
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const {
    Coupling c = coupling();
    Tensors ps;
    detail::append_tensors(const_cast<F&>(f), ps, "f.", loc);
    detail::append_tensors(const_cast<G&>(g), ps, "g.", loc);
    return coupled_forward(std::span<const Coupling>(&c, 1), x, ps, loc);
  }
  Coupling coupling() const {
    return {detail::erase(f), detail::erase(g), detail::count_tensors(const_cast<F&>(f)),
            detail::count_tensors(const_cast<G&>(g))};
  }
  template <class Fn> void for_each_parameter(Fn&& fn) {
    nn::for_each_parameter(f, fn, "f.");
    nn::for_each_parameter(g, fn, "g.");
  }
  template <class Fn> void for_each_submodule(Fn&& fn) {
    fn(f);
    fn(g);
  }
};

template <class Block>
struct ReversibleSequential {
  std::vector<Block> blocks;
  ReversibleSequential() = default;
  explicit ReversibleSequential(std::vector<Block> b) : blocks(std::move(b)) {}

  // x [..., 2d] -> y [..., 2d], one custom_vjp: O(1) activation memory in depth.
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const {
    auto [cs, ps] = erased(loc);
    return reversible_forward(cs, x, ps, loc);
  }
  // The same function by ordinary backprop (every block's activations kept).
  Tensor ordinary(const Tensor& x, Loc loc = Loc::current()) const {
    auto [cs, ps] = erased(loc);
    return coupled_forward(cs, x, ps, loc);
  }
  // x from y, exactly up to rounding.
  Tensor inverse(const Tensor& y, Loc loc = Loc::current()) const {
    auto [cs, ps] = erased(loc);
    return coupled_inverse(cs, y, ps, loc);
  }
  template <class Fn> void for_each_parameter(Fn&& fn) {
    for (std::size_t i = 0; i < blocks.size(); ++i) nn::for_each_parameter(blocks[i], fn, std::to_string(i) + ".");
  }
  template <class Fn> void for_each_submodule(Fn&& fn) {
    for (Block& b : blocks) fn(b);
  }

 private:
  std::pair<std::vector<Coupling>, Tensors> erased(Loc loc) const {
    std::vector<Coupling> cs;
    Tensors ps;
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      Block& b = const_cast<Block&>(blocks[i]);  // for_each_parameter takes a mutable module; read only here
      cs.push_back(b.coupling());
      detail::append_tensors(b.f, ps, std::to_string(i) + ".f.", loc);
      detail::append_tensors(b.g, ps, std::to_string(i) + ".g.", loc);
    }
    return {std::move(cs), std::move(ps)};
  }
};

}  // namespace mg::frontier::avyaya
