// The numeric half of the rule checker: a rule over tensor-level ops is run on its
// examples (examples.hpp) before and after rewriting, by the caller's evaluator, on inputs
// that include -0, ±inf and NaN for structural rules. Bit-identical: `structural`; equal to
// a relative 1e-5 on finite inputs: `real`; else refuted with the first differing element.
#include <chrono>
#include <cmath>
#include <cstring>

#include "minigrad/ir/errors.hpp"
#include "minigrad/passes/rewrite.hpp"
#include "minigrad/passes/rules/check.hpp"
#include "minigrad/passes/rules/examples.hpp"

namespace mg::passes::rules {

namespace {

Array make_input(const Type& t, std::uint64_t seed, bool specials) {
  static const double kSpecial[] = {-0.0, INFINITY, -INFINITY, NAN, 0.0};
  Array a(t);
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    double v = std::sin(static_cast<double>(i * 7 + seed * 13 + 1)) * 3.0;
    if (specials && (i + static_cast<std::int64_t>(seed)) % 5 == 0) v = kSpecial[(i / 5 + seed) % 5];
    if (t.dtype == DType::boolean) v = (i + seed) % 3 == 0;
    if (t.dtype == DType::i64) v = std::floor(v);
    a.set(i, v);
  }
  return a;
}

// Bitwise equal, or both NaN.
bool same_bits(const Array& a, const Array& b, std::int64_t i) {
  double x = a.at(i), y = b.at(i);
  if (std::isnan(x) && std::isnan(y)) return true;
  return std::memcmp(&x, &y, sizeof x) == 0;
}

}  // namespace

CheckResult check_numeric(const Rule& r, const Evaluator& evaluate) {
  auto t0 = std::chrono::steady_clock::now();
  CheckResult res;
  res.rule = &r;
  const bool exact = r.declared != Label::real;
  bool ok = true, fired_all = true;
  for (const Example& ex : examples_of(r.name)) {
    ExampleGraphs gs = build_example(ex);
    RuleSet only;  // this rule alone, so what is checked is the rule, not the table
    only.rules = {r};
    only.index();
    RewriteOptions opt;
    opt.mode = RewriteMode::fast_math;
    opt.rules = &only;
    RewriteResult rw = rewrite(*gs.start, {}, opt);
    if (!rw.stats.by_rule.count(r.name)) {
      fired_all = false;
      res.note = "the rule did not fire on its example " + ex.start;
      continue;
    }
    for (std::uint64_t seed = 0; seed < 4 && ok; ++seed) {
      std::vector<Array> ins;
      for (ir::NodeId id : gs.start->inputs()) ins.push_back(make_input(gs.start->node(id).type, seed, exact));
      std::vector<Array> before = evaluate(*gs.start, ins);
      std::vector<Array> after = evaluate(*rw.graph, ins);
      if (before.size() != 1 || after.size() != 1 || before[0].type() != after[0].type()) {
        ok = false;
        res.note = "the rewritten example changed type";
        break;
      }
      for (std::int64_t i = 0; i < before[0].numel(); ++i) {
        double x = before[0].at(i), y = after[0].at(i);
        bool same = exact ? same_bits(before[0], after[0], i)
                          : (std::isnan(x) && std::isnan(y)) || std::abs(x - y) <= 1e-5 * (1 + std::abs(x) + std::abs(y));
        if (!same) {
          ok = false;
          res.numeric.counterexample = ex.start + " at element " + std::to_string(i) + ": before " +
                                       std::to_string(x) + ", after " + std::to_string(y) + " (inputs seed " +
                                       std::to_string(seed) + ")";
          break;
        }
      }
    }
  }
  res.numeric.verdict = ok && fired_all ? Verdict::proved : (ok ? Verdict::unknown : Verdict::refuted);
  res.proven = !ok ? Label::refuted : !fired_all ? Label::unproven : exact ? Label::structural : Label::real;
  if (!ok) res.note = "numeric: " + res.numeric.counterexample;
  res.numeric.seconds = res.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}

CheckResult check_rule(const Rule& r, const Evaluator& evaluate, const CheckOptions& opt) {
  return r.scalar ? check_scalar(r, opt) : check_numeric(r, evaluate);
}

}  // namespace mg::passes::rules
