// Small helpers shared by the nn family's registry files (nn.cpp: conv, nn_pool.cpp:
// pooling): attribute access with validation, NCHW checks, test shapes and the C99
// template filler. Internal to ir/ops; light (no xtensor).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "minigrad/ir/ops/rules.hpp"

namespace mg::ir::nn {

// A two-value [h, w] attribute, each value >= min.
inline const I64List& pair_attr(const Attrs& attrs, const char* name, std::int64_t min) {
  const I64List& v = attrs.list(name);
  rules::require(v.size() == 2, std::string("expects ") + name + " as two values [h, w]");
  rules::require(v[0] >= min && v[1] >= min, std::string("expects ") + name + " >= " + std::to_string(min) +
                                                 " (got " + to_string(AttrValue{v}) + ")");
  return v;
}

inline Attrs with(Attrs a, const char* name, AttrValue v) {
  a.set(name, std::move(v));
  return a;
}
inline std::vector<AttrSpec> plus(std::vector<AttrSpec> s, AttrSpec extra) {
  s.push_back(std::move(extra));
  return s;
}
inline I64List spatial(const Value& v) { return {v.shape()[2], v.shape()[3]}; }

inline void require_nchw(const Type& t, const char* what) {
  rules::require(rules::allowed(t.dtype, rules::Dtypes::floats),
                 std::string("expects ") + what + " of " + rules::describe(rules::Dtypes::floats));
  rules::require(t.rank() == 4, std::string("expects ") + what + " of rank 4 (N, C, H, W)");
}
inline void require_same_dtype(const Type& a, const Type& b) {
  rules::require(a.dtype == b.dtype, "expects operands of the same dtype");
}

inline Type f64_4d(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
  return Type{f64, {n, c, h, w}};
}

// Replaces $NAME keys of a C template by their text; list longer keys first ($Ho before $H).
inline std::string c_fill(std::string s, const std::vector<std::pair<std::string, std::string>>& keys) {
  for (auto& [k, v] : keys)
    for (std::size_t p; (p = s.find(k)) != std::string::npos;) s.replace(p, k.size(), v);
  return s;
}

}  // namespace mg::ir::nn
