// LTNtorch's connectives (ltn/fuzzy_ops.py) written with DSL expressions. Each function
// opens a LocScope at the caller's line so every node it makes (and any shape error)
// names the user's line, not this file's.
#include "minigrad/frontier/tarka/connectives.hpp"

#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/functions.hpp"

namespace mg::frontier::tarka {

namespace {
SourceLoc at(const Loc& l) { return SourceLoc::from(l); }
}  // namespace

Tensor pi_0(const Tensor& x, Loc loc) {
  LocScope s(at(loc));
  return Tensor(x * (1.0 - kEps) + kEps, loc);
}
Tensor pi_1(const Tensor& x, Loc loc) {
  LocScope s(at(loc));
  return Tensor(x * (1.0 - kEps), loc);
}

Tensor not_standard(const Tensor& x, Loc loc) {
  LocScope s(at(loc));
  return Tensor(1.0 - x, loc);
}
Tensor not_godel(const Tensor& x, Loc loc) {
  LocScope s(at(loc));
  return cast(Tensor(x == 0.0, loc), x.dtype(), loc);
}

Tensor and_min(const Tensor& x, const Tensor& y, Loc loc) {
  LocScope s(at(loc));
  return Tensor(minimum(x, y), loc);
}
Tensor and_prod(const Tensor& x, const Tensor& y, bool stable, Loc loc) {
  LocScope s(at(loc));
  if (stable) return Tensor(pi_0(x, loc) * pi_0(y, loc), loc);
  return Tensor(x * y, loc);
}
Tensor and_luk(const Tensor& x, const Tensor& y, Loc loc) {
  LocScope s(at(loc));
  return Tensor(maximum(x + y - 1.0, 0.0), loc);
}

Tensor or_max(const Tensor& x, const Tensor& y, Loc loc) {
  LocScope s(at(loc));
  return Tensor(maximum(x, y), loc);
}
Tensor or_prob_sum(const Tensor& x, const Tensor& y, bool stable, Loc loc) {
  LocScope s(at(loc));
  Tensor a = stable ? pi_1(x, loc) : x, b = stable ? pi_1(y, loc) : y;
  return Tensor(a + b - a * b, loc);
}
Tensor or_luk(const Tensor& x, const Tensor& y, Loc loc) {
  LocScope s(at(loc));
  return Tensor(minimum(x + y, 1.0), loc);
}

Tensor implies_kleene_dienes(const Tensor& x, const Tensor& y, Loc loc) {
  LocScope s(at(loc));
  return Tensor(maximum(1.0 - x, y), loc);
}
Tensor implies_godel(const Tensor& x, const Tensor& y, Loc loc) {
  LocScope s(at(loc));
  return Tensor(where(x <= y, 1.0, y), loc);  // where() broadcasts; 1 takes y's dtype
}
Tensor implies_reichenbach(const Tensor& x, const Tensor& y, bool stable, Loc loc) {
  LocScope s(at(loc));
  Tensor a = stable ? pi_0(x, loc) : x, b = stable ? pi_1(y, loc) : y;
  return Tensor(1.0 - a + a * b, loc);
}
Tensor implies_goguen(const Tensor& x, const Tensor& y, bool stable, Loc loc) {
  LocScope s(at(loc));
  Tensor a = stable ? pi_0(x, loc) : x;
  // y / x is only taken where x > y >= 0, so the division never sees a zero there; the
  // other branch still divides, so guard it (a NaN would poison the where's gradient).
  Tensor safe = where(a <= y, ones_like(a, std::nullopt, loc), a);
  return Tensor(where(a <= y, 1.0, y / safe), loc);
}
Tensor implies_luk(const Tensor& x, const Tensor& y, Loc loc) {
  LocScope s(at(loc));
  return Tensor(minimum(1.0 - x + y, 1.0), loc);
}

}  // namespace mg::frontier::tarka
