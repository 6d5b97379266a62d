// Axioms as broadcasts of one dense relation tensor: R[x, y, 1], R[1, y, z], R[x, 1, z]
// give every triple for transitivity without materialising three copies first.
#include "minigrad/frontier/tarka/axioms.hpp"

#include <string>

#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/functions.hpp"
#include "minigrad/dsl/graph.hpp"
#include "minigrad/frontier/tarka/quantifiers.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::frontier::tarka {

namespace {
std::int64_t square_side(const Truth& r, const char* axiom, const Loc& loc) {
  const Shape& s = r.shape();
  if (s.size() != 2 || s[0] != s[1])
    throw ShapeError(std::string("tarka::") + axiom + ": expected a relation as a square [n, n] truth tensor, got " +
                         to_string(r.tensor().type()),
                     SourceLoc::from(loc));
  return s[0];
}
Truth view(const Truth& r, Shape shape, const Loc& loc) { return Truth(reshape(r.tensor(), shape, loc), r.logic()); }
Truth transposed(const Truth& r, const Loc& loc) { return Truth(transpose(r.tensor(), 0, 1, loc), r.logic()); }
}  // namespace

Truth transitivity(const Truth& r, Loc loc) {
  std::int64_t n = square_side(r, "transitivity", loc);
  Truth xy = view(r, {n, n, 1}, loc), yz = view(r, {1, n, n}, loc), xz = view(r, {n, 1, n}, loc);
  return forall(implies(land(xy, yz, loc), xz, loc), {}, loc);
}
Truth symmetry(const Truth& r, Loc loc) {
  square_side(r, "symmetry", loc);
  return forall(implies(r, transposed(r, loc), loc), {}, loc);
}
Truth asymmetry(const Truth& r, Loc loc) {
  square_side(r, "asymmetry", loc);
  return forall(implies(r, lnot(transposed(r, loc), loc), loc), {}, loc);
}
Truth irreflexivity(const Truth& r, Loc loc) {
  std::int64_t n = square_side(r, "irreflexivity", loc);
  LocScope s(SourceLoc::from(loc));
  Tensor diag = sum(Tensor(r.tensor() * graph_of(r.tensor()).eye(n, n, r.tensor().dtype(), loc), loc), 1, false, loc);
  return forall(lnot(Truth(diag, r.logic()), loc), {}, loc);
}
Truth mutual_exclusion(const Truth& p, const Truth& q, Loc loc) {
  if (p.shape() != q.shape())
    throw ShapeError("tarka::mutual_exclusion: expected two predicates over the same individuals, got " +
                         to_string(p.tensor().type()) + " and " + to_string(q.tensor().type()),
                     SourceLoc::from(loc));
  return forall(lnot(land(p, q, loc), loc), {}, loc);
}

Tensor satisfaction(const std::vector<Truth>& closed, double p, Loc loc) {
  if (closed.empty()) throw UserError("tarka::satisfaction: expected at least one closed formula", SourceLoc::from(loc));
  std::vector<Tensor> ts;
  for (std::size_t i = 0; i < closed.size(); ++i) {
    if (closed[i].tensor().rank() != 0)
      throw ShapeError("tarka::satisfaction: formula " + std::to_string(i) +
                           " is not closed (expected a 0-d truth; quantify its free axes), got " +
                           to_string(closed[i].tensor().type()),
                       SourceLoc::from(loc));
    ts.push_back(closed[i].tensor());
  }
  return pmean_error(stack(ts, 0, loc), {}, p, true, false, loc);
}

Tensor SemanticLoss::operator()(const std::vector<Truth>& closed, Loc loc) const {
  LocScope s(SourceLoc::from(loc));
  return Tensor(1.0 - satisfaction(closed, p, loc), loc);
}

}  // namespace mg::frontier::tarka
