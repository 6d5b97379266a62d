// Static types of IR values: dtype plus a fully static shape (0-d scalars are shape {}).
// Invariant: every Node carries one; a graph that type-checks runs.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "minigrad/ir/dtype.hpp"
#include "minigrad/ir/shape.hpp"

namespace mg {

std::int64_t numel(const Shape& s);  // ShapeError when the count overflows int64
std::string to_string(const Shape& s);  // "[3,4]", "[]" for 0-d

struct Type {
  DType dtype = DType::f32;
  Shape shape;

  int rank() const { return static_cast<int>(shape.size()); }
  std::int64_t numel() const { return mg::numel(shape); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * size_of(dtype); }
  bool operator==(const Type&) const = default;
};

std::string to_string(const Type& t);  // "f64[3,4]"
// ShapeError unless every dim is >= 0 and the element count and byte size fit in int64.
void check_type_sane(const Type& t);

// Row-major strides in elements.
std::vector<std::int64_t> strides_of(const Shape& s);

}  // namespace mg
