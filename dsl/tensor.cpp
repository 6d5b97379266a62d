// Tensor's few out-of-line members.
#include "minigrad/dsl/tensor.hpp"

#include "minigrad/ir/errors.hpp"

namespace mg {

std::int64_t Tensor::size(std::int64_t axis) const {
  std::int64_t a = axis < 0 ? axis + rank() : axis;
  if (a < 0 || a >= rank())
    throw ShapeError("size: axis " + std::to_string(axis) + " out of range for " + to_string(type()));
  return shape()[static_cast<std::size_t>(a)];
}

}  // namespace mg
