// Loops in the DSL: scan traces a C++ callable ONCE into the body region of one `scan`
// node (ir/ops/control.cpp), so a loop of T steps is one node whatever T is (DESIGN
// invariant 7). The body may use any Tensor of the graph around it (weights, say): such
// values are captured as loop-invariant operands. Nodes made inside the body carry the
// body's own lines, so an error there names the user's line inside the lambda. An
// expression returned unbound (`return std::pair{h + x, h}`) becomes a Tensor, and is
// checked, at the loop's own line: still the user's file, one line less precise.
//
//   auto [h_T, hs] = mg::scan([&](const Tensor& h, const Tensor& x) {
//     Tensor h2 = mg::tanh(matmul(h, W) + x);
//     return std::pair{h2, h2};                       // (next carry, this step's y)
//   }, h0, xs);                                        // xs: [T, ...]; hs: [T, ...]
#pragma once
#include <concepts>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "minigrad/dsl/tensor.hpp"

namespace mg {

struct ScanOptions {
  bool reverse = false;        // run the steps from the last to the first
  std::int64_t length = -1;    // the trip count when there are no xs (else xs' leading dim)
  // Rematerialisation: > 0 (dividing the trip count), the gradient saves every k-th carry
  // and recomputes the others segment by segment: about T/k + k carries alive, not T
  // (k near sqrt(T): O(sqrt T) memory for one more forward pass). 0: every carry and the
  // body values the gradient reads are saved (no recomputation); T: carries only, the
  // body recomputed in the backward.
  std::int64_t checkpoint_every = 0;
};

using Tensors = std::vector<Tensor>;
// A body over several carries and xs: (carries, one step of each xs) -> (next carries, ys).
using ScanBody = std::function<std::pair<Tensors, Tensors>(const Tensors& carry, const Tensors& x)>;

// while_loop: cond(carries) -> bool scalar, body(carries) -> next carries.
using WhileCond = std::function<Tensor(const Tensors& carry)>;
using WhileBody = std::function<Tensors(const Tensors& carry)>;

namespace detail {
Tensors while_loop(const WhileCond& cond, const WhileBody& body, const Tensors& init, std::int64_t max_steps, Loc loc);
// `graph`: where to build when neither init nor xs names one (checkpoint).
std::pair<Tensors, Tensors> scan(const ScanBody& body, const Tensors& init, const Tensors& xs, const ScanOptions& opt,
                                 Loc loc, ir::Graph* graph = nullptr);
Tensors checkpoint(const std::function<Tensors(const Tensors&)>& fn, const Tensors& xs, Loc loc);
}

// Several carries and scanned inputs: returns (final carries, stacked ys), each y with a
// leading axis of the trip count. Carries keep their type every step; a loop's carries and
// ys share one dtype.
template <class F>
  requires std::invocable<F&, const Tensors&, const Tensors&>
std::pair<Tensors, Tensors> scan(F&& body, const Tensors& init, const Tensors& xs, ScanOptions opt = {},
                                 Loc loc = Loc::current()) {
  return detail::scan(
      [&](const Tensors& c, const Tensors& x) {
        auto r = body(c, x);
        return std::pair<Tensors, Tensors>(Tensors(r.first.begin(), r.first.end()),
                                           Tensors(r.second.begin(), r.second.end()));
      },
      init, xs, opt, loc);
}

// One carry, one scanned input, one y: body(h, x_t) -> pair(next h, y_t); returns
// (final h, ys stacked [T, ...]).
template <class F>
  requires std::invocable<F&, const Tensor&, const Tensor&>
std::pair<Tensor, Tensor> scan(F&& body, const Tensor& init, const Tensor& xs, ScanOptions opt = {},
                               Loc loc = Loc::current()) {
  auto [c, ys] = detail::scan(
      [&](const Tensors& h, const Tensors& x) {
        auto r = body(h[0], x[0]);
        return std::pair<Tensors, Tensors>(Tensors{Tensor(r.first, loc)}, Tensors{Tensor(r.second, loc)});
      },
      Tensors{init}, Tensors{xs}, opt, loc);
  return {c[0], ys[0]};
}

// Rematerialisation of any subgraph (jax.checkpoint): y = fn(xs), whose intermediates are
// not kept for the backward pass but recomputed there from xs (and the graph's values fn
// uses). Built as a one-step scan (xs its carries), so fn is one region the optimiser
// cannot merge with the forward copy. xs and fn's results share one dtype.
template <class F>
  requires std::invocable<F&, const Tensors&>
Tensors checkpoint(F&& fn, const Tensors& xs, Loc loc = Loc::current()) {
  return detail::checkpoint([&](const Tensors& x) {
    auto r = fn(x);
    return Tensors(r.begin(), r.end());
  }, xs, loc);
}
template <class F>
  requires std::invocable<F&, const Tensor&>
Tensor checkpoint(F&& fn, const Tensor& x, Loc loc = Loc::current()) {
  return detail::checkpoint([&](const Tensors& x) { return Tensors{Tensor(fn(x[0]), loc)}; }, Tensors{x}, loc)[0];
}

// Runs body while cond holds, at most max_steps times (bounded, so memory stays planned;
// a condition still true after max_steps body runs is a run-time UserError naming this
// line). Returns the final carries. Forward only: grad through it is an error naming this
// line (wrap it in custom_vjp to give it a backward).
template <class C, class F>
  requires std::invocable<C&, const Tensors&> && std::invocable<F&, const Tensors&>
Tensors while_loop(C&& cond, F&& body, const Tensors& init, std::int64_t max_steps, Loc loc = Loc::current()) {
  return detail::while_loop([&](const Tensors& c) { return Tensor(cond(c), loc); },
                            [&](const Tensors& c) {
                              auto r = body(c);
                              return Tensors(r.begin(), r.end());
                            },
                            init, max_steps, loc);
}
template <class C, class F>
  requires std::invocable<C&, const Tensor&> && std::invocable<F&, const Tensor&>
Tensor while_loop(C&& cond, F&& body, const Tensor& init, std::int64_t max_steps, Loc loc = Loc::current()) {
  return detail::while_loop([&](const Tensors& c) { return Tensor(cond(c[0]), loc); },
                            [&](const Tensors& c) { return Tensors{Tensor(body(c[0]), loc)}; }, Tensors{init}, max_steps,
                            loc)[0];
}

}  // namespace mg
