// Lowers a formula to DSL ops. Every quantified variable gets its own axis (in order of
// binding; an inner quantifier re-binding a name gets a new one), every subformula is a
// tensor of rank = that many axes with size 1 where it does not depend on a variable, so
// connectives broadcast and a quantifier reduces its variables' axes (keepdim).
#include "minigrad/frontier/tarka/grounding.hpp"

#include <algorithm>
#include <cmath>

#include "minigrad/dsl/functions.hpp"
#include "minigrad/frontier/tarka/quantifiers.hpp"
#include "minigrad/ir/parser.hpp"

namespace mg::frontier::tarka {

namespace {

struct Axis {
  std::string name;
  Tensor domain;
};

class Grounder {
 public:
  Grounder(const Bindings& b, Loc loc) : b_(b), loc_(loc) {}

  Truth run(const Formula& f) {
    count_axes(f);
    Tensor t = lower(f).tensor();
    return Truth(reshape(t, {}, loc_), b_.logic);  // every axis is quantified: size 1
  }

 private:
  [[noreturn]] void fail(const Formula& f, const std::string& message) const {
    throw ParseError(message + " (grounded at " + to_string(SourceLoc::from(loc_)) + ")", f.source, f.line,
                     f.column);
  }

  void count_axes(const Formula& f) {
    if (f.kind == FormulaKind::forall || f.kind == FormulaKind::exists) rank_ += f.terms.size();
    for (const auto& o : f.operands) count_axes(*o);
  }

  const Tensor& domain(const Formula& f, const std::string& var) const {
    auto it = b_.domains.find(var);
    if (it == b_.domains.end()) fail(f, "no domain for variable '" + var + "': expected Bindings::domains[\"" + var + "\"]");
    if (it->second.rank() < 1)
      fail(f, "the domain of '" + var + "' must be [n, features...] (one row per individual), got " +
                  to_string(it->second.type()));
    return it->second;
  }

  Truth lower(const Formula& f) {
    switch (f.kind) {
      case FormulaKind::atom: return atom(f);
      case FormulaKind::negation: return lnot(lower(*f.operands[0]), loc_);
      case FormulaKind::conjunction: return land(lower(*f.operands[0]), lower(*f.operands[1]), loc_);
      case FormulaKind::disjunction: return lor(lower(*f.operands[0]), lower(*f.operands[1]), loc_);
      case FormulaKind::implication: return implies(lower(*f.operands[0]), lower(*f.operands[1]), loc_);
      case FormulaKind::equivalence: return iff(lower(*f.operands[0]), lower(*f.operands[1]), loc_);
      case FormulaKind::forall:
      case FormulaKind::exists: return quantifier(f);
    }
    fail(f, "unknown formula kind");
  }

  Truth quantifier(const Formula& f) {
    if (f.p && !(*f.p >= 1 && std::isfinite(*f.p)))
      fail(f, "expected a quantifier exponent p >= 1, got " + std::to_string(*f.p));
    std::vector<std::int64_t> axes;
    std::size_t saved = scope_.size();
    for (const auto& v : f.terms) {
      if (std::count(f.terms.begin(), f.terms.end(), v) > 1) fail(f, "variable '" + v + "' is bound twice here");
      axes.push_back(static_cast<std::int64_t>(axes_.size()));
      axes_.push_back({v, domain(f, v)});
      scope_.push_back(axes.back());
    }
    Tensor body = lower(*f.operands[0]).tensor();
    scope_.resize(saved);
    const Logic& l = b_.logic;
    Tensor out;
    if (f.kind == FormulaKind::exists)
      out = pmean(body, axes, f.p.value_or(l.p_exists), l.stable, true, loc_);
    else if (l.softmin_temperature > 0 && !f.p)
      out = softmin_forall(body, axes, l.softmin_temperature, true, loc_);
    else
      out = pmean_error(body, axes, f.p.value_or(l.p_forall), l.stable, true, loc_);
    return Truth(out, l);
  }

  // The innermost binding of `name`, or -1.
  std::int64_t bound(const std::string& name) const {
    for (auto it = scope_.rbegin(); it != scope_.rend(); ++it)
      if (axes_[*it].name == name) return *it;
    return -1;
  }

  Truth atom(const Formula& f) {
    auto pred = b_.predicates.find(f.name);
    if (pred == b_.predicates.end()) fail(f, "unknown predicate '" + f.name + "': expected it in Bindings::predicates");
    // The distinct variables of this atom, in axis order, and each argument's source.
    std::vector<std::int64_t> vars, arg_axis;
    for (const auto& t : f.terms) {
      std::int64_t a = bound(t);
      if (a < 0 && !b_.constants.count(t))
        fail(f, "'" + t + "' in " + f.name + "(...) is neither a quantified variable nor a constant");
      arg_axis.push_back(a);
      if (a >= 0 && std::find(vars.begin(), vars.end(), a) == vars.end()) vars.push_back(a);
    }
    std::sort(vars.begin(), vars.end());
    Shape grid;
    std::int64_t rows = 1;
    for (auto a : vars) grid.push_back(axes_[a].domain.size(0)), rows *= grid.back();
    std::vector<Tensor> args;
    for (std::size_t i = 0; i < f.terms.size(); ++i) {
      Tensor src = arg_axis[i] >= 0 ? axes_[arg_axis[i]].domain : b_.constants.find(f.terms[i])->second;
      Shape features(src.shape().begin() + (arg_axis[i] >= 0 ? 1 : 0), src.shape().end());
      Shape placed(vars.size(), 1), full = grid;
      if (arg_axis[i] >= 0)
        placed[std::find(vars.begin(), vars.end(), arg_axis[i]) - vars.begin()] = src.size(0);
      placed.insert(placed.end(), features.begin(), features.end());
      full.insert(full.end(), features.begin(), features.end());
      Shape rows_shape{rows};
      rows_shape.insert(rows_shape.end(), features.begin(), features.end());
      args.push_back(reshape(broadcast_to(reshape(src, placed, loc_), full, loc_), rows_shape, loc_));
    }
    Tensor truth = pred->second(args);
    if (truth.numel() != rows || truth.shape().empty() || truth.shape()[0] != rows || truth.rank() > 2)
      fail(f, "predicate '" + f.name + "' returned " + to_string(truth.type()) + ", expected [" +
                  std::to_string(rows) + "] truths (one per row of its arguments)");
    Shape out(rank_, 1);
    for (std::size_t j = 0; j < vars.size(); ++j) out[vars[j]] = grid[j];
    return Truth(reshape(truth, out, loc_), b_.logic);
  }

  const Bindings& b_;
  Loc loc_;
  std::size_t rank_ = 0;
  std::vector<Axis> axes_;
  std::vector<std::int64_t> scope_;
};

}  // namespace

Truth ground(const Formula& f, const Bindings& b, Loc loc) {
  LocScope s(SourceLoc::from(loc));
  return Grounder(b, loc).run(f);
}

Truth ground(std::string_view text, const Bindings& b, Loc loc) {
  FormulaPtr f;
  try {
    f = parse_formula(text, "<formula>");
  } catch (const ParseError& e) {
    // A syntax error in a string literal is found at run time: name the C++ call too,
    // as grounding errors do, or the user cannot tell which of their formulas it was.
    std::string m = e.message();  // "expected X, got Y\n<the line>\n<caret>": the call goes on the first line
    m.insert(std::min(m.find('\n'), m.size()), " (grounded at " + to_string(SourceLoc::from(loc)) + ")");
    throw ParseError(std::move(m), e.file(), e.line(), e.column());
  }
  return ground(*f, b, loc);
}

}  // namespace mg::frontier::tarka
