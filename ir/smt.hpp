// The Z3 column of the op registry (DESIGN invariant 2): what an elementwise op means, as
// a formula. An entry's `smt` function builds the op's value from its operands' terms
// through the abstract SmtBuilder below; passes/rules_smt_z3.cpp implements it twice with
// Z3 (over the reals and over IEEE-754 f32/f64), so no header outside that file sees Z3.
// Exact ops (arithmetic, comparisons, select, min/max, abs, sqrt in IEEE) use the builder's
// exact operations; transcendental ones are uninterpreted functions plus axioms.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "minigrad/ir/attrs.hpp"

namespace mg::ir {

// An opaque handle to a term owned by one SmtBuilder (an index into its table).
struct SmtTerm {
  std::int32_t id = -1;
  bool valid() const { return id >= 0; }
};

enum class SmtTheory : std::uint8_t { real, ieee };

// Terms are of the value sort (Real, or FP of the dtype under test) or Boolean. Each
// operation follows IEEE-754 (round to nearest even) in the ieee theory and exact real
// arithmetic in the real theory (where division by zero is unspecified, NaN does not exist
// and is_nan is false).
// Over the reals, x / 0 = 0 (the total-function convention), so a rule must hold there
// too or carry a `nonzero` condition.
class SmtBuilder {
 public:
  virtual ~SmtBuilder() = default;
  virtual SmtTheory theory() const = 0;

  virtual SmtTerm num(double v) = 0;  // a value-sort constant (rounded to the dtype in ieee)
  virtual SmtTerm add(SmtTerm a, SmtTerm b) = 0;
  virtual SmtTerm sub(SmtTerm a, SmtTerm b) = 0;
  virtual SmtTerm mul(SmtTerm a, SmtTerm b) = 0;
  virtual SmtTerm div(SmtTerm a, SmtTerm b) = 0;
  virtual SmtTerm neg(SmtTerm a) = 0;
  virtual SmtTerm abs(SmtTerm a) = 0;   // fp.abs: clears the sign bit (-0 -> +0, NaN stays NaN)
  virtual SmtTerm sqrt(SmtTerm a) = 0;  // fp.sqrt in ieee; a function with axioms over reals
  // IEEE comparisons (false when either side is NaN); eq: +0 == -0.
  virtual SmtTerm lt(SmtTerm a, SmtTerm b) = 0;
  virtual SmtTerm le(SmtTerm a, SmtTerm b) = 0;
  virtual SmtTerm eq(SmtTerm a, SmtTerm b) = 0;
  virtual SmtTerm is_nan(SmtTerm a) = 0;
  virtual SmtTerm is_zero(SmtTerm a) = 0;  // +0 or -0
  virtual SmtTerm lnot(SmtTerm a) = 0;
  virtual SmtTerm land(SmtTerm a, SmtTerm b) = 0;
  virtual SmtTerm lor(SmtTerm a, SmtTerm b) = 0;
  virtual SmtTerm ite(SmtTerm cond, SmtTerm a, SmtTerm b) = 0;
  virtual SmtTerm boolean(bool v) = 0;
  // f(args...) for an uninterpreted function of value-sort arguments and result, named
  // `name` (one function per name and arity). The same name and arguments give the same
  // term, so both sides of a rule share it.
  virtual SmtTerm apply(std::string_view name, std::span<const SmtTerm> args) = 0;
  // Adds an axiom (a Boolean term) that every model must satisfy.
  virtual void assume(SmtTerm fact) = 0;
};

// An op's semantics: its value from its operands' terms. Empty: the op has no scalar
// semantics (tensor-level ops); a rule using it is checked structurally instead.
using SmtFn = std::function<SmtTerm(SmtBuilder& b, std::span<const SmtTerm> in, const Attrs& attrs)>;

// Family default for elementwise ops without exact semantics: an uninterpreted function
// named after the op and its attributes (sound: equal operands give equal results).
inline SmtFn smt_uninterpreted(std::string op_name) {
  return [op_name](SmtBuilder& b, std::span<const SmtTerm> in, const Attrs& attrs) {
    std::string name = op_name;
    for (auto& [k, v] : attrs.items()) name += "." + k + "=" + to_string(v);
    return b.apply(name, in);
  };
}

}  // namespace mg::ir
