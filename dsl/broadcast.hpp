// NumPy broadcasting of static shapes, shared by the DSL's elementwise lowering and matmul.
#pragma once
#include <optional>
#include <span>

#include "minigrad/ir/type.hpp"

namespace mg::dsl {

// The broadcast shape of `shapes`, or nullopt if they are incompatible.
std::optional<Shape> broadcast_shapes(std::span<const Shape> shapes);

}  // namespace mg::dsl
