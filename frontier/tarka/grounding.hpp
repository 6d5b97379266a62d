// Grounding a parsed formula: predicates are networks (any callable on DSL tensors),
// variables range over domains (a [n, features...] tensor of individuals), constants are
// single individuals ([features...]). The result is a closed formula's truth (0-d Truth)
// in the bindings' Logic. An atom is evaluated once per combination of ITS OWN variables
// (R(x, y) on n_x * n_y rows), then broadcast against the others, as LTN does. A
// quantifier's written exponent (`forall[p=4] x: ...`) overrides the Logic's (and makes that
// forall a pMeanError even when the Logic asks for the softmin).
#pragma once
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "minigrad/frontier/tarka/formula.hpp"
#include "minigrad/frontier/tarka/truth.hpp"

namespace mg::frontier::tarka {

// Given one [N, features...] tensor per argument, returns N truths ([N] or [N, 1]).
using Predicate = std::function<Tensor(const std::vector<Tensor>& args)>;

struct Bindings {
  std::map<std::string, Predicate, std::less<>> predicates;
  std::map<std::string, Tensor, std::less<>> domains;    // variable name -> [n, features...]
  std::map<std::string, Tensor, std::less<>> constants;  // constant name -> [features...]
  Logic logic;
};

// Errors (unknown predicate, a variable neither quantified nor a constant, a missing
// domain, a predicate returning the wrong shape) are mg::ParseError at the formula's
// line:column, naming `loc` (the grounding call) too.
Truth ground(const Formula& f, const Bindings& b, Loc loc = Loc::current());
// parse_formula + ground.
Truth ground(std::string_view text, const Bindings& b, Loc loc = Loc::current());

}  // namespace mg::frontier::tarka
