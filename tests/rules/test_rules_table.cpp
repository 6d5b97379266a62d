// The rules table loads, is big enough, every rule has an example, and malformed rules
// are rejected at load with an error that names the rule (or the line and column),
// computed constants included.
#include <gtest/gtest.h>

#include "minigrad/ir/errors.hpp"
#include "minigrad/passes/rules/examples.hpp"
#include "minigrad/passes/rules/rule.hpp"

namespace mg {
namespace {

using passes::rules::Label;
using passes::rules::parse_rules;

TEST(RulesTable, ShippedTableLoadsWithEnoughRules) {
  const auto& set = passes::rules::shipped_rules();
  EXPECT_GE(set.rules.size(), 40u);
  int scalar = 0;
  for (const auto& r : set.rules) scalar += r.scalar;
  EXPECT_GE(scalar, 40) << "elementwise rules proved by Z3";
}

TEST(RulesTable, EveryRuleHasAnExample) {
  for (const auto& r : passes::rules::shipped_rules().rules)
    EXPECT_FALSE(passes::rules::examples_of(r.name).empty()) << r.name;
}

TEST(RulesTable, PrintsBackInItsOwnSyntax) {
  const auto& set = passes::rules::shipped_rules();
  const auto* r = set.find("div-self");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(to_string(*r), "rule \"div-self\" [real]: (div ?x ?x) => 1.0 if nonzero(?x);");
  // and the printed form parses to the same rule
  auto again = parse_rules(to_string(*r));
  EXPECT_EQ(to_string(again.rules.at(0)), to_string(*r));
}

void expect_rejected(const std::string& text, const std::string& fragment) {
  try {
    parse_rules(text, "t.rules");
    ADD_FAILURE() << "accepted: " << text;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(RulesTable, ValidationErrorsNameTheRule) {
  expect_rejected(R"(rule "r1" [exact]: (mul ?x 1) => ?y;)", "rule 'r1': variable ?y in the replacement is not bound");
  expect_rejected(R"(rule "r2" [exact]: (mull ?x 1) => ?x;)", "rule 'r2': unknown op 'mull'");
  expect_rejected(R"(rule "r3" [exact]: (mul ?x) => ?x;)", "rule 'r3': op 'mul' takes 2 input(s), the pattern gives 1");
  expect_rejected(R"(rule "r4" [exact]: (neg ?x) => (neg ?x ?x);)", "rule 'r4': op 'neg' takes 1 input(s), the replacement gives 2");
  expect_rejected(R"(rule "r5" [real]: (div ?x ?x) => 1 if nonzro(?x);)", "rule 'r5': unknown condition 'nonzro'");
  expect_rejected(R"(rule "r6" [structural]: (permute ?x {prem = ?p}) => ?x;)", "rule 'r6': op 'permute' has no attribute 'prem'");
  expect_rejected(R"(rule "r7" [structural]: (permute ?x {perm = ?p}) => (permute ?x {perm = ?q});)",
                  "rule 'r7': attribute variable ?q in the replacement is not bound");
  expect_rejected(R"(rule "r8" [structural]: (reshape ?x) => (reshape ?x);)", "rule 'r8': replacement op 'reshape' needs attribute 'shape'");
  expect_rejected(R"(rule "r9" [structural]: (mul ?x 1) => ?x;)", "rule 'r9': every op here is elementwise");
  expect_rejected(R"(rule "r10" [exact]: (permute ?x {perm = ?p}) => ?x;)", "rule 'r10': a rule over tensor-level ops cannot be proved exact");
  expect_rejected(R"(rule "r11" [refuted]: (neg ?x) => ?x;)", "rule 'r11': label must be exact, real or structural");
  expect_rejected(R"(rule "r12" [exact]: ?x => ?x;)", "rule 'r12': the pattern must start with an op");
  expect_rejected("rule \"a\" [exact]: (neg (neg ?x)) => ?x;\nrule \"a\" [exact]: (neg ?x) => ?x;", "rule 'a': defined twice");
}

// A computed constant (`copies(?s, ?a)`): right side only, a known function with bound
// arguments, in tensor-level rules only (Z3 cannot see a shape-derived count).
TEST(RulesTable, ComputedConstants) {
  const auto* r = passes::rules::shipped_rules().find("sum-broadcast");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(to_string(*r),
            "rule \"sum-broadcast\" [real]: (reduce_sum (broadcast_to ?x {shape = ?s}) {axes = ?a}) => "
            "(mul ?x copies(?s, ?a)) if broadcast_axes(?x, ?s, ?a);");
  EXPECT_EQ(to_string(parse_rules(to_string(*r)).rules.at(0)), to_string(*r));
  expect_rejected(R"(rule "c1" [real]: (mul ?x copies(?s, ?a)) => ?x;)", "rule 'c1': computed constants (copies) belong in the replacement only");
  expect_rejected(R"(rule "c2" [real]: (reduce_sum (broadcast_to ?x {shape = ?s}) {axes = ?a}) => (mul ?x copy(?s, ?a));)",
                  "rule 'c2': unknown attribute function 'copy'");
  expect_rejected(R"(rule "c3" [real]: (reduce_sum (broadcast_to ?x {shape = ?s})) => (mul ?x copies(?s, ?a));)",
                  "rule 'c3': ?a in copies(...) is not bound");
  expect_rejected(R"(rule "c4" [real]: (mul ?x ?y) => (mul ?x copies(?x, ?y));)",
                  "rule 'c4': a computed constant needs a tensor-level rule");
}

TEST(RulesTable, SyntaxErrorsGiveLineAndColumn) {
  expect_rejected("rule \"ok\" [exact]: (neg (neg ?x)) => ?x;\nrule \"bad\" [exact] (neg ?x) => ?x;", "t.rules:2:20: expected ':', got '(neg ?x)");
  expect_rejected("rule \"bad\" [exact]: (neg ?x) ?x;", "t.rules:1:30: expected \"=>\", got '?x;'");
  expect_rejected("rule \"bad\" [exact]: (neg ?x => ?x;", "t.rules:1:");
}

}  // namespace
}  // namespace mg
