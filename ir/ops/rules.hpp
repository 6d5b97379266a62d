// Shared shape/dtype rules and small helpers for the op family files. Light: no xtensor.
#pragma once
#include <algorithm>
#include <string>
#include <vector>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops.hpp"

namespace mg::ir::rules {

inline void require(bool ok, const std::string& message) {
  if (!ok) throw TypeRuleError{message};
}

enum class Dtypes { floats, numeric, boolean, any };
inline bool allowed(DType t, Dtypes d) {
  switch (d) {
    case Dtypes::floats: return is_float(t);
    case Dtypes::numeric: return t != DType::boolean;
    case Dtypes::boolean: return t == DType::boolean;
    case Dtypes::any: return true;
  }
  return false;
}
inline std::string describe(Dtypes d) {
  switch (d) {
    case Dtypes::floats: return "a float dtype (f32 or f64)";
    case Dtypes::numeric: return "a numeric dtype (f32, f64 or i64)";
    case Dtypes::boolean: return "bool";
    case Dtypes::any: return "any dtype";
  }
  return "";
}

// All inputs share one type whose dtype is in `d`; the result has that type, or the same
// shape with dtype `result` when given.
inline InferFn same_type(Dtypes d, std::optional<DType> result = std::nullopt) {
  return [d, result](std::span<const Type> in, const Attrs&) {
    require(allowed(in[0].dtype, d), "expects " + describe(d));
    for (auto& t : in)
      require(t == in[0], "expects operands of identical type (broadcast explicitly with broadcast_to)");
    Type out = in[0];
    if (result) out.dtype = *result;
    return out;
  };
}

// Normalises an axis list against `rank` (negative counts from the end), sorted, unique.
inline I64List normalize_axes(const I64List& axes, int rank) {
  I64List out;
  for (auto a : axes) {
    std::int64_t n = a < 0 ? a + rank : a;
    require(n >= 0 && n < rank, "axis " + std::to_string(a) + " out of range for rank " + std::to_string(rank));
    out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  require(std::adjacent_find(out.begin(), out.end()) == out.end(), "repeated axis");
  return out;
}
inline std::int64_t normalize_axis(std::int64_t axis, int rank) {
  return normalize_axes({axis}, rank)[0];
}

// Convenience for VJP rules returning one cotangent per input.
inline std::vector<Value> grads(std::initializer_list<Value> g) { return g; }

}  // namespace mg::ir::rules
