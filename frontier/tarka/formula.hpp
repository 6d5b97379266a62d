// Formulas as text: `forall x, y, z: R(x, y) & R(y, z) -> R(x, z)` parsed (Spirit X3,
// kept inside formula_parser.cpp) into a small immutable AST, printed back (print(parse(s))
// parses to an equal tree), and lowered to a Truth given predicate bindings and variable
// domains (formula_lower.cpp).
//
// Grammar (loosest first; binary operators left-associative except '->'):
//   formula := ('forall' | 'exists') ['[' 'p' '=' number ']'] var {',' var} ':' formula
//            | iff
//   iff     := implies {'<->' implies}
//   implies := or ['->' implies]
//   or      := and {'|' and}
//   and     := unary {'&' unary}
//   unary   := '~' unary | '(' formula ')' | quantified | atom
//   atom    := name '(' term {',' term} ')'        (a term is a variable or a constant)
// Names: [A-Za-z_][A-Za-z0-9_]*, not 'forall' / 'exists'. Errors: mg::ParseError with
// line:column, what was expected and the line with a caret.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "minigrad/ir/parser.hpp"  // mg::ParseError

namespace mg::frontier::tarka {

enum class FormulaKind { atom, negation, conjunction, disjunction, implication, equivalence, forall, exists };

struct Formula;
using FormulaPtr = std::shared_ptr<const Formula>;

struct Formula {
  FormulaKind kind = FormulaKind::atom;
  std::string name;                // atom: the predicate
  std::vector<std::string> terms;  // atom: its arguments; quantifier: the variables it binds
  std::optional<double> p;         // quantifier: its exponent, when written ([p=...])
  std::vector<FormulaPtr> operands;  // 1 (negation, quantifier body) or 2 (binary)
  const char* source = "";            // the text's name (interned), for errors
  std::uint32_t line = 0, column = 0;  // where it starts in the text (1-based)
};

// Parses one formula; `source_name` names the text in errors (interned: any string works).
FormulaPtr parse_formula(std::string_view text, std::string_view source_name = "<formula>");
// Canonical text with the fewest parentheses the grammar needs; parse(print(f)) equals f.
std::string print(const Formula& f);
// Structural equality (ignores positions).
bool same_formula(const Formula& a, const Formula& b);

}  // namespace mg::frontier::tarka
