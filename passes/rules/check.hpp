// The rule checker: proves each rule of the table the way its label claims.
// - Elementwise rules (every op has Z3 semantics, ir/smt.hpp) are encoded automatically
//   from the rule and proved twice: over the reals and over IEEE-754 (Z3's floating-point
//   theory, f32 and f64, round to nearest even). Both sides equal for all inputs meeting
//   the conditions, NaN/±0/±inf included (Z3's `=`: +0 and -0 differ, NaN equals NaN), in
//   f32 and f64: `exact`; over the reals only: `real`; else `refuted` with a counterexample;
//   a timeout is `unproven`. Each query has a time limit (CheckOptions::timeout_ms).
// - Other rules (shape ops, matmul, softmax) are checked numerically on their examples
//   (passes/rules/examples.hpp) by an evaluator the caller supplies (the interpreter):
//   bit-identical results give `structural`, agreement to a tolerance `real`.
// Z3 stays inside check_z3.cpp; the interpreter stays out of passes/ (layering).
#pragma once
#include <functional>
#include <optional>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "minigrad/ir/array.hpp"
#include "minigrad/ir/graph.hpp"
#include "minigrad/passes/rules/rule.hpp"

namespace mg::passes::rules {

struct CheckOptions {
  // Per Z3 query. The hardest shipped proof (x/x = 1 for finite nonzero f64 x) takes ~5 s
  // bit-blasted on a loaded 2-core machine; a timeout leaves a rule unproven, never proven.
  unsigned timeout_ms = 10000;  // 0: no time limit
  // Z3 resource units per query (Z3's `rlimit`), 0: none. Unlike the time limit it is
  // deterministic: a proof that fits succeeds however loaded the machine is, so tests
  // bound work this way and leave the clock unbounded.
  unsigned rlimit = 0;
  // A directory for the proof cache (passes/rules/proof_cache.hpp): a query whose exact
  // text (rule, op semantics, limits, Z3 version) was decided before is not solved again.
  // Empty: no cache. The test suite keeps one under the build directory.
  std::string proof_cache;
};

enum class Verdict : std::uint8_t { proved, refuted, unknown, skipped };
std::string_view name_of(Verdict v);

struct TheoryResult {
  Verdict verdict = Verdict::skipped;
  std::string counterexample;  // "x = -0, y = 1.5" when refuted
  double seconds = 0;
  std::uint64_t work = 0;  // Z3's resource units spent (its "rlimit count"), all attempts
  bool cached = false;     // the verdict came from the proof cache (work: when it was proved)
};

struct CheckResult {
  const Rule* rule = nullptr;
  Label proven = Label::unproven;
  TheoryResult reals, f32, f64;  // Z3 (elementwise rules)
  TheoryResult numeric;          // examples through the evaluator (other rules)
  std::string note;              // what failed, in words
  double seconds = 0;
  bool matches_declared() const { return rule && proven == rule->declared; }
};

// Runs a graph's outputs on the given inputs (tests and the CLI pass the interpreter).
using Evaluator = std::function<std::vector<Array>(const ir::Graph& g, const std::vector<Array>& inputs)>;

// Z3 proof of an elementwise rule (r.scalar). Never throws for a wrong rule: refutes it.
CheckResult check_scalar(const Rule& r, const CheckOptions& opt = {});
// Numeric check of a rule on its examples; `evaluate` runs graphs.
CheckResult check_numeric(const Rule& r, const Evaluator& evaluate);
// Either, as the rule needs.
CheckResult check_rule(const Rule& r, const Evaluator& evaluate, const CheckOptions& opt = {});

}  // namespace mg::passes::rules

namespace mg::passes::rules {

// Evaluates an op's Z3 semantics in IEEE `dtype` (f32 or f64) on constant operands
// (`is_bool[i]`: operand i is a bool, 0 or 1); nullopt when the result is not a constant
// (an uninterpreted function). Bool results are 0/1. Tests compare it with the kernel.
std::optional<double> evaluate_smt(const ir::OpDef& op, std::span<const double> args,
                                   std::span<const bool> is_bool, const Attrs& attrs, DType dtype);

}  // namespace mg::passes::rules
