// Rewrite rules as data (DESIGN invariant 3). A rule is `lhs => rhs [if conditions]` over
// op patterns with variables (`?x`), scalar constants and attribute patterns, written in
// the text IR's op spelling:
//   rule "mul-one" [exact]: (mul ?x 1) => ?x;
//   rule "div-self" [real]: (div ?x ?x) => 1 if nonzero(?x);
//   rule "permute-permute" [structural]:
//     (permute (permute ?x {perm = ?p}) {perm = ?q}) => (permute ?x {perm = compose(?p, ?q)});
// The declared label says where the rule may run (strict mode: exact and structural; fast
// math: also real) and is what the checker (check.hpp) must prove. Rules are parsed and
// validated when loaded (unknown op, arity, unknown attribute, unbound replacement variable,
// unknown condition), each error a UserError naming the rule. No Z3, no Spirit here.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "minigrad/ir/attrs.hpp"
#include "minigrad/ir/op_registry.hpp"

namespace mg::passes::rules {

enum class Label : std::uint8_t {
  exact,       // holds bit for bit in IEEE-754 f32 and f64 (NaN, ±0, ±inf included)
  real,        // holds over the reals only: a fast-math rule
  structural,  // moves data (shape ops): checked by the shape rules and a bit-exact numeric test
  refuted,     // a counterexample exists (the checker's verdict; never loaded)
  unproven,    // the checker could not decide (timeout); never loaded
};
std::string_view name_of(Label l);
std::optional<Label> label_from_name(std::string_view s);

// An attribute in a pattern: a literal, a variable (`?p`, bound on the left, read on the
// right) or, on the right only, a builtin function of variables (`compose(?p, ?q)`).
struct AttrExpr {
  enum class Kind : std::uint8_t { literal, var, call } kind = Kind::literal;
  AttrValue literal;
  std::string name;               // variable (without '?') or function name
  std::vector<std::string> args;  // call arguments: variable names (without '?')
};

struct Pattern {
  enum class Kind : std::uint8_t { var, constant, op } kind = Kind::var;
  std::string var;  // without '?'
  double value = 0;  // constant: a scalar; matches any splat of that value (bitwise, per dtype)
  // constant, replacement only: a value computed from the match by an attribute function
  // (`copies(?s, ?a)`, a count derived from shapes) instead of `value`.
  std::optional<AttrExpr> computed;
  const ir::OpDef* op = nullptr;
  std::vector<Pattern> args;
  std::vector<std::pair<std::string, AttrExpr>> attrs;
  int slot = -1;  // var: index into the rule's node variables
};

// A precondition from the closed set in conditions.hpp; arguments are variables (node or
// attribute) or integers.
struct Cond {
  std::string name;
  std::vector<std::string> args;  // "?x" or an integer literal
};

struct Rule {
  std::string name;
  Label declared = Label::exact;
  Pattern lhs, rhs;
  std::vector<Cond> conds;
  std::vector<std::string> node_vars;  // slot -> name
  std::vector<std::string> attr_vars;  // slot -> name
  bool scalar = false;  // every op has Z3 semantics: proved elementwise by the checker
  int priority = 0;     // table order: earlier rules win
};

class RuleSet {
 public:
  std::vector<Rule> rules;
  // Rules whose left side has this root op, in priority order.
  const std::vector<const Rule*>& for_root(const ir::OpDef* op) const;
  const Rule* find(std::string_view name) const;
  void index();

 private:
  std::unordered_map<const ir::OpDef*, std::vector<const Rule*>> by_root_;
};

// Parses and validates a rules text (grammar in passes/README.md). Throws UserError
// ("rules.mgrules:12:5: expected ..." for syntax, "rule 'x': ..." for meaning).
RuleSet parse_rules(std::string_view text, std::string_view file = "<rules>");
// The shipped table (passes/rules/table.cpp), parsed and validated once.
const RuleSet& shipped_rules();
std::string_view shipped_rules_text();

// `(mul ?x 1)`-style spelling, for logs and messages.
std::string to_string(const Pattern& p);
std::string to_string(const Rule& r);

namespace detail {
// Validation after parsing (validate.cpp): resolves ops, coerces attribute literals to the
// schema, numbers variables, checks conditions, decides `scalar`. Throws UserError.
void validate(Rule& r);
}  // namespace detail

}  // namespace mg::passes::rules
