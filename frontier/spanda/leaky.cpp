// Leaky::step: snnTorch's _base_sub / _base_zero / _base_int and fire(), one time step.
#include "minigrad/frontier/spanda/leaky.hpp"

#include <algorithm>

#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/functions.hpp"
#include "minigrad/dsl/tensor_methods.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::frontier::spanda {

std::pair<Tensor, Tensor> Leaky::step(const Tensor& input, const Tensor& mem, Loc loc) const {
  if (input.type() != mem.type())
    throw ShapeError("spanda::Leaky: the input current " + to_string(input.type()) +
                         " and the membrane potential " + to_string(mem.type()) + " must have one type",
                     SourceLoc::from(loc));
  const double b = std::clamp(beta, 0.0, 1.0);
  // The reset comes from the previous membrane and is detached (snnTorch's mem_reset).
  Tensor reset_mask = stop_gradient(Tensor(mem - threshold > 0.0, loc).cast(mem.dtype(), loc), loc);
  Tensor next;
  switch (reset) {
    case Reset::subtract: next = Tensor(mem * b + input - reset_mask * threshold, loc); break;
    case Reset::zero: next = Tensor((1.0 - reset_mask) * mem * b + input, loc); break;
    case Reset::none: next = Tensor(mem * b + input, loc); break;
  }
  Tensor spk = spike(Tensor(next - threshold, loc), surrogate, loc);
  return {spk, next};
}

}  // namespace mg::frontier::spanda
