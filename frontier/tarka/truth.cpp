// The Truth operators: each picks LTNtorch's operator for the Logic both operands carry.
// This is the only place that maps a Semantics to its connectives.
#include "minigrad/frontier/tarka/truth.hpp"

#include "minigrad/frontier/tarka/connectives.hpp"
#include "minigrad/frontier/tarka/quantifiers.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::frontier::tarka {

std::string to_string(Semantics s) {
  switch (s) {
    case Semantics::product: return "product";
    case Semantics::lukasiewicz: return "lukasiewicz";
    case Semantics::goedel: return "goedel";
  }
  return "?";
}
std::string to_string(Implication i) {
  switch (i) {
    case Implication::reichenbach: return "reichenbach";
    case Implication::goguen: return "goguen";
    case Implication::kleene_dienes: return "kleene_dienes";
    case Implication::goedel: return "goedel";
    case Implication::lukasiewicz: return "lukasiewicz";
  }
  return "?";
}

namespace {

const Logic& same_logic(const Truth& x, const Truth& y, const char* op, const Loc& loc) {
  if (!(x.logic() == y.logic()))
    throw UserError(std::string("tarka: '") + op + "' joins truths of different logics (" +
                        to_string(x.logic().semantics) + "/" + to_string(x.logic().implication) + " and " +
                        to_string(y.logic().semantics) + "/" + to_string(y.logic().implication) +
                        "); expected one Logic for both operands",
                    SourceLoc::from(loc));
  return x.logic();
}

Tensor and_of(const Logic& l, const Tensor& x, const Tensor& y, const Loc& loc) {
  switch (l.semantics) {
    case Semantics::product: return and_prod(x, y, l.stable, loc);
    case Semantics::lukasiewicz: return and_luk(x, y, loc);
    case Semantics::goedel: return and_min(x, y, loc);
  }
  return {};
}
Tensor implies_of(const Logic& l, const Tensor& x, const Tensor& y, const Loc& loc) {
  switch (l.implication) {
    case Implication::reichenbach: return implies_reichenbach(x, y, l.stable, loc);
    case Implication::goguen: return implies_goguen(x, y, l.stable, loc);
    case Implication::kleene_dienes: return implies_kleene_dienes(x, y, loc);
    case Implication::goedel: return implies_godel(x, y, loc);
    case Implication::lukasiewicz: return implies_luk(x, y, loc);
  }
  return {};
}

}  // namespace

Truth land(const Truth& x, const Truth& y, Loc loc) {
  const Logic& l = same_logic(x, y, "&", loc);
  return Truth(and_of(l, x.tensor(), y.tensor(), loc), l);
}
Truth lor(const Truth& x, const Truth& y, Loc loc) {
  const Logic& l = same_logic(x, y, "|", loc);
  switch (l.semantics) {
    case Semantics::product: return Truth(or_prob_sum(x.tensor(), y.tensor(), l.stable, loc), l);
    case Semantics::lukasiewicz: return Truth(or_luk(x.tensor(), y.tensor(), loc), l);
    case Semantics::goedel: return Truth(or_max(x.tensor(), y.tensor(), loc), l);
  }
  return {};
}
Truth lnot(const Truth& x, Loc loc) { return Truth(not_standard(x.tensor(), loc), x.logic()); }
Truth implies(const Truth& x, const Truth& y, Loc loc) {
  const Logic& l = same_logic(x, y, ">>", loc);
  return Truth(implies_of(l, x.tensor(), y.tensor(), loc), l);
}
Truth iff(const Truth& x, const Truth& y, Loc loc) {
  const Logic& l = same_logic(x, y, "^", loc);
  Tensor xy = implies_of(l, x.tensor(), y.tensor(), loc), yx = implies_of(l, y.tensor(), x.tensor(), loc);
  return Truth(and_of(l, xy, yx, loc), l);
}

Truth operator&(const TruthAt& x, const Truth& y) { return land(x.truth, y, x.loc); }
Truth operator|(const TruthAt& x, const Truth& y) { return lor(x.truth, y, x.loc); }
Truth operator~(const TruthAt& x) { return lnot(x.truth, x.loc); }
Truth operator>>(const TruthAt& x, const Truth& y) { return implies(x.truth, y, x.loc); }
Truth operator^(const TruthAt& x, const Truth& y) { return iff(x.truth, y, x.loc); }

Truth forall(const Truth& x, Axes axes, Loc loc) {
  const Logic& l = x.logic();
  if (l.softmin_temperature > 0) return Truth(softmin_forall(x.tensor(), axes, l.softmin_temperature, false, loc), l);
  return Truth(pmean_error(x.tensor(), axes, l.p_forall, l.stable, false, loc), l);
}
Truth exists(const Truth& x, Axes axes, Loc loc) {
  return Truth(pmean(x.tensor(), axes, x.logic().p_exists, x.logic().stable, false, loc), x.logic());
}

}  // namespace mg::frontier::tarka
