// LTN's fuzzy connectives on truth tensors in [0, 1], with LTNtorch's exact definitions
// (ltn/fuzzy_ops.py): the stable projections pi_0 / pi_1 (eps = 1e-4) are applied where
// LTNtorch applies them, so values and gradients match it. Operands broadcast (NumPy
// rules); a mismatch is a ShapeError at the caller's line. Built from public DSL ops only,
// so every connective differentiates (to any order), fuses and runs in C99.
#pragma once
#include "minigrad/dsl/tensor.hpp"

namespace mg::frontier::tarka {

inline constexpr double kEps = 1e-4;  // LTNtorch's eps for the stable projections

// pi_0(x) = (1 - eps) x + eps: [0, 1] -> [eps, 1], keeps a truth away from 0.
Tensor pi_0(const Tensor& x, Loc loc = Loc::current());
// pi_1(x) = (1 - eps) x: [0, 1] -> [0, 1 - eps], keeps a truth away from 1.
Tensor pi_1(const Tensor& x, Loc loc = Loc::current());

// Negations. not_godel is 1 where x == 0, else 0 (no gradient: it is a step).
Tensor not_standard(const Tensor& x, Loc loc = Loc::current());  // 1 - x
Tensor not_godel(const Tensor& x, Loc loc = Loc::current());

// Conjunctions: min (Goedel), product (Goguen; stable: pi_0 on both), max(x + y - 1, 0).
Tensor and_min(const Tensor& x, const Tensor& y, Loc loc = Loc::current());
Tensor and_prod(const Tensor& x, const Tensor& y, bool stable = true, Loc loc = Loc::current());
Tensor and_luk(const Tensor& x, const Tensor& y, Loc loc = Loc::current());

// Disjunctions: max (Goedel), probabilistic sum x + y - xy (stable: pi_1 on both),
// min(x + y, 1) (Lukasiewicz).
Tensor or_max(const Tensor& x, const Tensor& y, Loc loc = Loc::current());
Tensor or_prob_sum(const Tensor& x, const Tensor& y, bool stable = true, Loc loc = Loc::current());
Tensor or_luk(const Tensor& x, const Tensor& y, Loc loc = Loc::current());

// Implications x -> y:
//   Kleene-Dienes max(1 - x, y); Goedel 1 if x <= y else y;
//   Reichenbach 1 - x + xy (stable: x = pi_0(x), y = pi_1(y));
//   Goguen 1 if x <= y else y / x (stable: x = pi_0(x), compared after projecting);
//   Lukasiewicz min(1 - x + y, 1).
Tensor implies_kleene_dienes(const Tensor& x, const Tensor& y, Loc loc = Loc::current());
Tensor implies_godel(const Tensor& x, const Tensor& y, Loc loc = Loc::current());
Tensor implies_reichenbach(const Tensor& x, const Tensor& y, bool stable = true, Loc loc = Loc::current());
Tensor implies_goguen(const Tensor& x, const Tensor& y, bool stable = true, Loc loc = Loc::current());
Tensor implies_luk(const Tensor& x, const Tensor& y, Loc loc = Loc::current());

}  // namespace mg::frontier::tarka
