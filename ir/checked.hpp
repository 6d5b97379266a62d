// Checked size arithmetic: every computation of a dimension, an element count, a byte size
// or an offset from user-controlled numbers (shapes, attributes) goes through these, so an
// overflow is a located ShapeError instead of a wrapped size and an out-of-bounds write.
// Keep this header tiny: it is included by shape rules and kernels alike.
#pragma once
#include <cstdint>
#include <string>

#include "minigrad/ir/errors.hpp"

namespace mg {

[[noreturn]] inline void size_overflow(std::int64_t a, char op, std::int64_t b) {
  throw ShapeError("size arithmetic overflows int64 (" + std::to_string(a) + " " + op + " " + std::to_string(b) + ")",
                   ambient_loc());
}

inline std::int64_t checked_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) size_overflow(a, '+', b);
  return r;
}
inline std::int64_t checked_sub(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) size_overflow(a, '-', b);
  return r;
}
inline std::int64_t checked_mul(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) size_overflow(a, '*', b);
  return r;
}

}  // namespace mg
