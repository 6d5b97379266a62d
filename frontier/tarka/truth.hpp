// Truth: a tensor of truth values in [0, 1] that carries the fuzzy semantics its
// connectives use, so formulas read as logic: `(r_xy & r_yz) >> r_xz`, `~p | q`, `p ^ q`.
// A thin value type over mg::Tensor (cheap to copy; an expression is one value). The two
// operands of a connective must use the same Logic (else a UserError at the user's line).
//   semantics   and          or               not
//   product     AndProd      OrProbSum        1 - x
//   lukasiewicz AndLuk       OrLuk            1 - x
//   goedel      AndMin       OrMax            1 - x   (NotGodel is a step: no gradient)
// `>>` is the Logic's implication (LTN's five), `^` is LTN's Equiv: and(x -> y, y -> x).
// Quantifiers: forall = pMeanError (p_forall), or the softmin with a temperature when
// softmin_temperature > 0; exists = pMean (p_exists).
#pragma once
#include <string>

#include "minigrad/dsl/tensor.hpp"

namespace mg::frontier::tarka {

enum class Semantics { product, lukasiewicz, goedel };
enum class Implication { reichenbach, goguen, kleene_dienes, goedel, lukasiewicz };

struct Logic {
  Semantics semantics = Semantics::product;
  Implication implication = Implication::reichenbach;
  bool stable = true;                // LTN's stable projections (eps = 1e-4)
  double p_forall = 2;               // pMeanError's exponent
  double p_exists = 2;               // pMean's exponent
  double softmin_temperature = 0;    // > 0: forall is the softmin instead of pMeanError

  // LTN's usual pairings: product with Reichenbach (LTN's default "stable product real
  // logic"), Lukasiewicz with its own implication, Goedel with Goedel's.
  static Logic product() { return {}; }
  static Logic lukasiewicz() { return {.semantics = Semantics::lukasiewicz, .implication = Implication::lukasiewicz}; }
  static Logic goedel() { return {.semantics = Semantics::goedel, .implication = Implication::goedel}; }
  bool operator==(const Logic&) const = default;
};
std::string to_string(Semantics s);
std::string to_string(Implication i);

class Truth {
 public:
  Truth() = default;
  explicit Truth(Tensor value, Logic logic = {}) : value_(std::move(value)), logic_(logic) {}
  const Tensor& tensor() const { return value_; }
  const Logic& logic() const { return logic_; }
  const Shape& shape() const { return value_.shape(); }

 private:
  Tensor value_;
  Logic logic_;
};

// An operator's left operand converted at the operator's own expression, so its nodes and
// errors carry the user's line (an operator cannot take a defaulted location itself).
struct TruthAt {
  const Truth& truth;
  Loc loc;
  TruthAt(const Truth& t, Loc l = Loc::current()) : truth(t), loc(l) {}  // NOLINT: implicit by design
};
Truth operator&(const TruthAt& x, const Truth& y);
Truth operator|(const TruthAt& x, const Truth& y);
Truth operator~(const TruthAt& x);
Truth operator>>(const TruthAt& x, const Truth& y);  // implies
Truth operator^(const TruthAt& x, const Truth& y);   // iff (LTN's Equiv)
// The same connectives as functions.
Truth land(const Truth& x, const Truth& y, Loc loc = Loc::current());
Truth lor(const Truth& x, const Truth& y, Loc loc = Loc::current());
Truth lnot(const Truth& x, Loc loc = Loc::current());
Truth implies(const Truth& x, const Truth& y, Loc loc = Loc::current());
Truth iff(const Truth& x, const Truth& y, Loc loc = Loc::current());

// Quantifiers over axes of a truth tensor (default: all, giving a closed formula).
Truth forall(const Truth& x, Axes axes = {}, Loc loc = Loc::current());
Truth exists(const Truth& x, Axes axes = {}, Loc loc = Loc::current());

}  // namespace mg::frontier::tarka
