// One `start => goal` example per rule, written in the rules' own term syntax over typed
// variables: `{"mul-one", "x: f32[3]", "(mul ?x 1)", "?x"}`. A variable may be a splat
// constant (`y: f32[3] = 2`) so value conditions can be seen. Rules without an explicit
// example get one derived from the rule itself (variables f32[2,3]). Tests check that
// rewriting `start` fires the rule and prints as `goal`, and that values are preserved;
// the checker runs the examples of tensor-level rules numerically.
#pragma once
#include <memory>
#include <string_view>
#include <vector>

#include "minigrad/ir/graph.hpp"
#include "minigrad/passes/rules/rule.hpp"

namespace mg::passes::rules {

struct Example {
  std::string rule;
  std::string vars;   // "x: f32[2,3], c: bool[2,3], y: f32[3] = 2" (unlisted: f32[2,3])
  std::string start;  // a term
  std::string goal;   // a term
};

// Every shipped rule's examples (explicit or derived), in table order.
std::vector<Example> examples();
std::vector<Example> examples_of(std::string_view rule);

struct ExampleGraphs {
  std::unique_ptr<ir::Graph> start, goal;  // same inputs; one output each
};
// Builds both sides as graphs (constants take their sibling operand's type). Throws
// UserError for a malformed example.
ExampleGraphs build_example(const Example& e);

}  // namespace mg::passes::rules
