// Axiom helpers over a relation given densely (R[x, y] for every pair of a domain of n
// individuals: a [n, n] truth tensor) or unary predicates ([n]), each a closed formula
// quantified with the truth's Logic; and SemanticLoss = 1 - SatAgg (LTN's knowledge-base
// satisfaction: pMeanError over the closed formulas' truths, p = 2 by default).
#pragma once
#include <vector>

#include "minigrad/frontier/tarka/truth.hpp"

namespace mg::frontier::tarka {

// forall x, y, z: R(x, y) & R(y, z) -> R(x, z)
Truth transitivity(const Truth& r, Loc loc = Loc::current());
// forall x, y: R(x, y) -> R(y, x)
Truth symmetry(const Truth& r, Loc loc = Loc::current());
// forall x, y: R(x, y) -> ~R(y, x)
Truth asymmetry(const Truth& r, Loc loc = Loc::current());
// forall x: ~R(x, x)
Truth irreflexivity(const Truth& r, Loc loc = Loc::current());
// forall x: ~(P(x) & Q(x))  (P, Q of one shape: a predicate per individual)
Truth mutual_exclusion(const Truth& p, const Truth& q, Loc loc = Loc::current());

// SatAgg: pMeanError (stable, exponent p) over closed formulas (0-d truths).
Tensor satisfaction(const std::vector<Truth>& closed, double p = 2, Loc loc = Loc::current());

// The loss a model minimises to satisfy a knowledge base: 1 - SatAgg(closed formulas).
struct SemanticLoss {
  double p = 2;
  Tensor operator()(const std::vector<Truth>& closed, Loc loc = Loc::current()) const;
};

}  // namespace mg::frontier::tarka
