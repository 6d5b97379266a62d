// Printing a formula with the fewest parentheses the grammar (formula.hpp) needs, so that
// parse_formula(print(f)) rebuilds an equal tree: an operand is parenthesised when it
// binds more loosely than its position allows; quantifiers, whose body runs to the end,
// are parenthesised whenever they are an operand.
#include <charconv>

#include "minigrad/frontier/tarka/formula.hpp"

namespace mg::frontier::tarka {

namespace {

int precedence(FormulaKind k) {
  switch (k) {
    case FormulaKind::forall:
    case FormulaKind::exists: return 0;
    case FormulaKind::equivalence: return 1;
    case FormulaKind::implication: return 2;
    case FormulaKind::disjunction: return 3;
    case FormulaKind::conjunction: return 4;
    case FormulaKind::negation: return 5;
    case FormulaKind::atom: return 6;
  }
  return 6;
}

std::string number(double v) {  // shortest text that reads back to the same double
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

std::string list(const std::vector<std::string>& xs) {
  std::string s;
  for (std::size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + xs[i];
  return s;
}

std::string print_at(const Formula& f, int min_prec) {
  std::string s;
  switch (f.kind) {
    case FormulaKind::atom: s = f.name + "(" + list(f.terms) + ")"; break;
    case FormulaKind::negation: s = "~" + print_at(*f.operands[0], 5); break;
    case FormulaKind::conjunction: s = print_at(*f.operands[0], 4) + " & " + print_at(*f.operands[1], 5); break;
    case FormulaKind::disjunction: s = print_at(*f.operands[0], 3) + " | " + print_at(*f.operands[1], 4); break;
    case FormulaKind::implication: s = print_at(*f.operands[0], 3) + " -> " + print_at(*f.operands[1], 2); break;
    case FormulaKind::equivalence: s = print_at(*f.operands[0], 1) + " <-> " + print_at(*f.operands[1], 2); break;
    case FormulaKind::forall:
    case FormulaKind::exists:
      s = std::string(f.kind == FormulaKind::forall ? "forall" : "exists") +
          (f.p ? "[p=" + number(*f.p) + "]" : "") + " " + list(f.terms) + ": " + print_at(*f.operands[0], 0);
      break;
  }
  return precedence(f.kind) < min_prec ? "(" + s + ")" : s;
}

}  // namespace

std::string print(const Formula& f) { return print_at(f, 0); }

bool same_formula(const Formula& a, const Formula& b) {
  if (a.kind != b.kind || a.name != b.name || a.terms != b.terms || a.p != b.p ||
      a.operands.size() != b.operands.size())
    return false;
  for (std::size_t i = 0; i < a.operands.size(); ++i)
    if (!same_formula(*a.operands[i], *b.operands[i])) return false;
  return true;
}

}  // namespace mg::frontier::tarka
