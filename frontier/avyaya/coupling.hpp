// The non-template core of AVYAYA: a stack of additive couplings
//   y1 = x1 + f(x2),  y2 = x2 + g(y1)        (RevNet, Gomez et al. 2017; memcnn)
// run three ways over type-erased blocks: ordinary nodes (backprop keeps every block's
// activations), one custom_vjp whose only residual is the final output and whose backward
// walks the blocks in reverse, reconstructing each block's inputs from its outputs and
// recomputing f and g locally (the training step's planned peak is flat in depth), and the
// exact inverse. Uses only the public DSL (custom_vjp, vjp, slice, concat).
#pragma once
#include <cstddef>
#include <functional>
#include <span>
#include <utility>
#include <vector>

#include "minigrad/dsl/tensor.hpp"

namespace mg::frontier::avyaya {

using Tensors = std::vector<Tensor>;
// A residual function applied with explicit parameter tensors (so the backward can apply it
// to the custom_vjp region's copies of the parameters and differentiate with respect to them).
using CouplingFn = std::function<Tensor(const Tensor& x, std::span<const Tensor> params, Loc loc)>;

// One block, type-erased: f and g with the number of parameter tensors each takes. The
// parameters of a stack are laid out block by block, f's before g's.
struct Coupling {
  CouplingFn f, g;
  std::size_t num_f = 0, num_g = 0;
};

// x [..., 2d] -> its halves [..., d], [..., d]; an odd last axis is a ShapeError at loc.
std::pair<Tensor, Tensor> split_halves(const Tensor& x, const char* who, Loc loc);

// The stack applied to x [..., 2d] as ordinary nodes: backprop saves the activations.
Tensor coupled_forward(std::span<const Coupling> blocks, const Tensor& x, std::span<const Tensor> params, Loc loc);
// The same values as one custom_vjp: the forward keeps no per-block activation alive for
// the backward; the backward reconstructs them from the output (exact up to rounding).
Tensor reversible_forward(std::span<const Coupling> blocks, const Tensor& x, std::span<const Tensor> params, Loc loc);
// x from y: x2 = y2 - g(y1), x1 = y1 - f(x2), block by block from the last.
Tensor coupled_inverse(std::span<const Coupling> blocks, const Tensor& y, std::span<const Tensor> params, Loc loc);

}  // namespace mg::frontier::avyaya
