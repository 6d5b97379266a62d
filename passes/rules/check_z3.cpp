// The Z3 half of the rule checker (the only file that includes Z3): two SmtBuilder
// implementations (reals; IEEE-754 floating point of a given width) and the proof of an
// elementwise rule: conditions ∧ lhs ≠ rhs must be unsatisfiable.
#include <z3++.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <sstream>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/passes/rules/check.hpp"
#include "minigrad/passes/rules/conditions.hpp"
#include "minigrad/passes/rules/proof_cache.hpp"

namespace mg::passes::rules {

std::string_view name_of(Verdict v) {
  switch (v) {
    case Verdict::proved: return "proved";
    case Verdict::refuted: return "refuted";
    case Verdict::unknown: return "unknown";
    case Verdict::skipped: return "-";
  }
  return "?";
}

namespace {

using ir::SmtTerm;
using ir::SmtTheory;

class Z3Builder final : public ir::SmtBuilder {
 public:
  // ebits == 0: the reals; else IEEE binary with (ebits, sbits).
  Z3Builder(z3::context& c, unsigned ebits, unsigned sbits)
      : c_(c), ebits_(ebits), sort_(ebits ? c.fpa_sort(ebits, sbits) : c.real_sort()),
        rm_(z3::expr(c, Z3_mk_fpa_round_nearest_ties_to_even(c))) {}

  SmtTheory theory() const override { return ebits_ ? SmtTheory::ieee : SmtTheory::real; }
  bool ieee() const { return ebits_ != 0; }
  const z3::sort& sort() const { return sort_; }
  std::vector<z3::expr> axioms;

  SmtTerm put(const z3::expr& e) {
    terms_.push_back(e);
    return SmtTerm{static_cast<std::int32_t>(terms_.size() - 1)};
  }
  const z3::expr& get(SmtTerm t) const { return terms_.at(static_cast<std::size_t>(t.id)); }

  SmtTerm num(double v) override {
    if (ieee()) {
      Z3_ast a = ebits_ == 8 ? Z3_mk_fpa_numeral_float(c_, static_cast<float>(v), sort_)
                             : Z3_mk_fpa_numeral_double(c_, v, sort_);
      return put(z3::expr(c_, a));
    }
    if (!std::isfinite(v)) throw UserError("a real-number proof cannot use the constant " + std::to_string(v));
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.17g", v == 0 ? 0.0 : v);
    std::string s = buf;
    if (s.find('e') != std::string::npos)  // Z3 numerals take no exponent
      throw UserError("a real-number proof cannot spell the constant " + s);
    return put(c_.real_val(s.c_str()));
  }
  SmtTerm add(SmtTerm a, SmtTerm b) override {
    return put(ieee() ? z3::expr(c_, Z3_mk_fpa_add(c_, rm_, get(a), get(b))) : get(a) + get(b));
  }
  SmtTerm sub(SmtTerm a, SmtTerm b) override {
    return put(ieee() ? z3::expr(c_, Z3_mk_fpa_sub(c_, rm_, get(a), get(b))) : get(a) - get(b));
  }
  SmtTerm mul(SmtTerm a, SmtTerm b) override {
    return put(ieee() ? z3::expr(c_, Z3_mk_fpa_mul(c_, rm_, get(a), get(b))) : get(a) * get(b));
  }
  SmtTerm div(SmtTerm a, SmtTerm b) override {  // reals: x/0 = 0, the total-function convention
    if (ieee()) return put(z3::expr(c_, Z3_mk_fpa_div(c_, rm_, get(a), get(b))));
    return put(z3::ite(get(b) == 0, c_.real_val(0), get(a) / get(b)));
  }
  SmtTerm neg(SmtTerm a) override { return put(ieee() ? z3::expr(c_, Z3_mk_fpa_neg(c_, get(a))) : -get(a)); }
  SmtTerm abs(SmtTerm a) override {
    return put(ieee() ? z3::expr(c_, Z3_mk_fpa_abs(c_, get(a))) : z3::ite(get(a) < 0, -get(a), get(a)));
  }
  SmtTerm sqrt(SmtTerm a) override {
    if (ieee()) return put(z3::expr(c_, Z3_mk_fpa_sqrt(c_, rm_, get(a))));
    SmtTerm r = apply("sqrt", std::span(&a, 1));  // r >= 0 and r*r = x for x >= 0
    const z3::expr &x = get(a), &y = get(r);
    axioms.push_back(z3::implies(x >= 0, y >= 0 && y * y == x));
    return r;
  }
  SmtTerm lt(SmtTerm a, SmtTerm b) override {
    return put(ieee() ? z3::expr(c_, Z3_mk_fpa_lt(c_, get(a), get(b))) : get(a) < get(b));
  }
  SmtTerm le(SmtTerm a, SmtTerm b) override {
    return put(ieee() ? z3::expr(c_, Z3_mk_fpa_leq(c_, get(a), get(b))) : get(a) <= get(b));
  }
  SmtTerm eq(SmtTerm a, SmtTerm b) override {
    if (get(a).is_bool()) return put(get(a) == get(b));
    return put(ieee() ? z3::expr(c_, Z3_mk_fpa_eq(c_, get(a), get(b))) : get(a) == get(b));
  }
  SmtTerm is_nan(SmtTerm a) override { return put(ieee() ? get(a).mk_is_nan() : c_.bool_val(false)); }
  SmtTerm is_zero(SmtTerm a) override { return put(ieee() ? get(a).mk_is_zero() : get(a) == 0); }
  SmtTerm lnot(SmtTerm a) override { return put(!get(a)); }
  SmtTerm land(SmtTerm a, SmtTerm b) override { return put(get(a) && get(b)); }
  SmtTerm lor(SmtTerm a, SmtTerm b) override { return put(get(a) || get(b)); }
  SmtTerm ite(SmtTerm c, SmtTerm a, SmtTerm b) override { return put(z3::ite(get(c), get(a), get(b))); }
  SmtTerm boolean(bool v) override { return put(c_.bool_val(v)); }
  SmtTerm apply(std::string_view name, std::span<const SmtTerm> args) override {
    std::string key = std::string(name) + "/" + std::to_string(args.size());
    auto it = fns_.find(key);
    if (it == fns_.end()) {
      z3::sort_vector dom(c_);
      for (std::size_t i = 0; i < args.size(); ++i) dom.push_back(sort_);
      it = fns_.emplace(key, c_.function(key.c_str(), dom, sort_)).first;
    }
    z3::expr_vector xs(c_);
    for (SmtTerm a : args) xs.push_back(get(a));
    return put(it->second(xs));
  }
  void assume(SmtTerm fact) override { axioms.push_back(get(fact)); }

 private:
  z3::context& c_;
  unsigned ebits_;
  z3::sort sort_;
  z3::expr rm_;
  std::vector<z3::expr> terms_;
  std::map<std::string, z3::func_decl> fns_;
};

// Which operand positions of an op take bool values (where's condition, logic ops):
// found through the op's own type rule, not by name.
std::vector<bool> bool_positions(const ir::OpDef& op, std::size_t arity, const Attrs& attrs) {
  for (unsigned mask = 0; mask < (1u << arity); ++mask) {
    std::vector<Type> in;
    for (std::size_t i = 0; i < arity; ++i) in.push_back(Type{mask & (1u << i) ? DType::boolean : DType::f64, {}});
    try {
      Attrs full = attrs;
      for (const AttrSpec& s : op.attrs)
        if (!full.has(s.name) && s.default_value) full.set(s.name, *s.default_value);
      op.infer(in, full);
      std::vector<bool> out(arity);
      for (std::size_t i = 0; i < arity; ++i) out[i] = mask & (1u << i);
      return out;
    } catch (...) {
    }
  }
  return std::vector<bool>(arity, false);
}

Attrs literal_attrs(const Pattern& p) {
  Attrs a;
  for (auto& [name, e] : p.attrs)
    if (e.kind == AttrExpr::Kind::literal) a.set(name, e.literal);
  return a;
}

void find_bool_vars(const Pattern& p, bool is_bool, std::vector<int>& kinds) {
  if (p.kind == Pattern::Kind::var) {
    kinds[static_cast<std::size_t>(p.slot)] = is_bool ? 1 : std::max(kinds[static_cast<std::size_t>(p.slot)], 0);
    return;
  }
  if (p.kind != Pattern::Kind::op) return;
  auto pos = bool_positions(*p.op, p.args.size(), literal_attrs(p));
  for (std::size_t i = 0; i < p.args.size(); ++i) find_bool_vars(p.args[i], pos[i], kinds);
}

struct Encoder {
  Z3Builder& b;
  std::vector<SmtTerm> vars;
  SmtTerm encode(const Pattern& p) {
    switch (p.kind) {
      case Pattern::Kind::var: return vars[static_cast<std::size_t>(p.slot)];
      case Pattern::Kind::constant: return b.num(p.value);
      case Pattern::Kind::op: break;
    }
    std::vector<SmtTerm> in;
    for (const Pattern& a : p.args) in.push_back(encode(a));
    return p.op->smt(b, in, literal_attrs(p));
  }
};

std::string show_value(z3::model& m, const z3::expr& x, bool ieee) {
  z3::expr v = m.eval(x, true);
  if (v.is_bool()) return v.is_true() ? "true" : "false";
  if (!ieee) return v.get_decimal_string(8);
  auto holds = [&](const z3::expr& e) { return m.eval(e, true).is_true(); };
  if (holds(x.mk_is_nan())) return "nan";
  bool negative = holds(z3::expr(x.ctx(), Z3_mk_fpa_is_negative(x.ctx(), x)));
  if (holds(x.mk_is_inf())) return negative ? "-inf" : "inf";
  if (holds(x.mk_is_zero())) return negative ? "-0" : "0";
  z3::expr bits = m.eval(z3::expr(x.ctx(), Z3_mk_fpa_to_ieee_bv(x.ctx(), x)), true);
  std::uint64_t u = 0;
  if (!Z3_get_numeral_uint64(x.ctx(), bits, &u)) return bits.to_string();
  char buf[64];
  if (x.get_sort().fpa_ebits() == 8) {
    float f;
    auto w = static_cast<std::uint32_t>(u);
    std::memcpy(&f, &w, sizeof f);
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(f));
  } else {
    double d;
    std::memcpy(&d, &u, sizeof d);
    std::snprintf(buf, sizeof buf, "%.17g", d);
  }
  return buf;
}

std::uint64_t rlimit_count(z3::solver& s) {
  z3::stats st = s.statistics();
  for (unsigned i = 0; i < st.size(); ++i)
    if (st.key(i) == "rlimit count") return static_cast<std::uint64_t>(st.is_uint(i) ? st.uint_value(i) : st.double_value(i));
  return 0;
}

// Before the solver, in IEEE: every operand drawn from special and ordinary values. A
// sample under which every fact (conditions, lhs != rhs) evaluates to true is a model, so
// the rule is refuted with the most readable counterexample. Sound: Z3 evaluates the
// ground query exactly, and a query with uninterpreted functions never evaluates to true
// without completion, so the solver decides it. Bit-blasting found neg-sub's x = y in 13M
// resource units (~5 s); a sample finds it at once.
std::optional<z3::model> sample_model(z3::context& c, const z3::sort& sort, const std::vector<z3::expr>& consts,
                                      const z3::expr_vector& facts) {
  // -0, 0, 1, -1, 3, 0.1, inf, -inf, nan, a subnormal, a value whose reciprocal is subnormal
  constexpr int kValues = 11;
  auto value = [&](int v) -> z3::expr {
    switch (v) {
      case 0: return z3::expr(c, Z3_mk_fpa_zero(c, sort, true));
      case 1: return z3::expr(c, Z3_mk_fpa_zero(c, sort, false));
      case 6: return z3::expr(c, Z3_mk_fpa_inf(c, sort, false));
      case 7: return z3::expr(c, Z3_mk_fpa_inf(c, sort, true));
      case 8: return z3::expr(c, Z3_mk_fpa_nan(c, sort));
      default: {
        const bool f32 = sort.fpa_ebits() == 8;
        const double d[] = {0, 0, 1, -1, 3, 0.1, 0, 0, 0, f32 ? 1e-40 : 1e-310, f32 ? 3e38 : 1e308};
        return z3::expr(c, f32 ? Z3_mk_fpa_numeral_float(c, static_cast<float>(d[v]), sort)
                               : Z3_mk_fpa_numeral_double(c, d[v], sort));
      }
    }
  };
  std::size_t combos = 1;
  for (std::size_t i = 0; i < consts.size(); ++i) combos *= kValues;
  if (consts.empty() || consts.size() > 3) return std::nullopt;
  for (std::size_t k = 0; k < combos; ++k) {
    z3::model m(c);
    std::size_t rest = k;
    for (const z3::expr& x : consts) {
      int v = static_cast<int>(rest % kValues);
      rest /= kValues;
      z3::func_decl d = x.decl();
      z3::expr val = x.is_bool() ? c.bool_val(v % 2 == 1) : value(v);
      m.add_const_interp(d, val);
    }
    bool holds = true;
    for (unsigned i = 0; i < facts.size() && holds; ++i) holds = m.eval(facts[i], false).is_true();
    if (holds) return m;
  }
  return std::nullopt;
}

// Bump when a cached entry's meaning changes without its query changing (how a
// counterexample is worded). Soundness needs no bump: a verdict is about the query alone,
// which is in the key, as are the limits and Z3's version.
constexpr int kProofCacheVersion = 1;

// Everything a verdict (and its counterexample's text) depends on: the solver's input as
// SMT-LIB — the rule with every op's semantics and condition encoded, the axioms and the
// negated equation — plus what the counterexample shows, the theory, the limits, Z3.
std::string proof_key(z3::context& c, const z3::expr_vector& facts, const std::vector<z3::expr>& shown,
                      unsigned ebits, unsigned sbits, const CheckOptions& opt) {
  z3::solver s(c);
  for (unsigned i = 0; i < facts.size(); ++i) s.add(facts[i]);
  std::ostringstream key;
  key << "minigrad rule proof " << kProofCacheVersion << "\nz3 " << Z3_get_full_version() << "\ntheory ";
  if (ebits) key << "ieee " << ebits << " " << sbits;
  else key << "real";
  key << "\ntimeout_ms " << opt.timeout_ms << "\nrlimit " << opt.rlimit << "\nshown";
  for (const z3::expr& e : shown) key << " " << e;
  key << "\n" << s.to_smt2();
  return key.str();
}

TheoryResult prove(const Rule& r, unsigned ebits, unsigned sbits, const CheckOptions& opt) {
  auto t0 = std::chrono::steady_clock::now();
  TheoryResult out;
  z3::context c;
  Z3Builder b(c, ebits, sbits);
  std::vector<int> kinds(r.node_vars.size(), -1);
  find_bool_vars(r.lhs, false, kinds);
  Encoder enc{b, {}};
  std::vector<z3::expr> consts;
  for (std::size_t i = 0; i < r.node_vars.size(); ++i) {
    z3::expr v = kinds[i] == 1 ? c.bool_const(r.node_vars[i].c_str()) : c.constant(r.node_vars[i].c_str(), b.sort());
    consts.push_back(v);
    enc.vars.push_back(b.put(v));
  }
  try {
    z3::expr lhs = b.get(enc.encode(r.lhs));
    z3::expr rhs = b.get(enc.encode(r.rhs));
    // A small portfolio, each attempt with its own time limit: for IEEE, FP lowered to
    // bit-vectors then simplified (shared subterms such as the same significand product on
    // both sides collapse) and bit-blasted to SAT, or kept for the SMT core (needed with
    // uninterpreted functions); then Z3's default solver.
    auto make = [&](int attempt) -> z3::solver {
      auto t = [&](const char* name) { return z3::tactic(c, name); };
      if (ebits && attempt == 0)
        return (t("simplify") & t("fpa2bv") & t("propagate-values") & t("simplify") & t("solve-eqs") &
                t("bit-blast") & t("sat"))
            .mk_solver();
      if (ebits && attempt == 1) return (t("simplify") & t("fpa2bv") & t("simplify") & t("smt")).mk_solver();
      return z3::solver(c);
    };
    z3::expr_vector facts(c);
    for (const Cond& cond : r.conds) {
      const CondDef* d = find_condition(cond.name);
      if (!d->value) continue;  // structural: no constraint on values
      std::vector<SmtTerm> args;
      for (auto& a : cond.args) {
        auto it = std::find(r.node_vars.begin(), r.node_vars.end(), a.substr(1));
        args.push_back(enc.vars[static_cast<std::size_t>(it - r.node_vars.begin())]);
      }
      facts.push_back(b.get(d->smt(b, args)));
    }
    for (auto& ax : b.axioms) facts.push_back(ax);
    facts.push_back(!(lhs == rhs));
    std::string key;
    if (!opt.proof_cache.empty()) {
      std::vector<z3::expr> shown(consts);
      shown.push_back(lhs);
      shown.push_back(rhs);
      key = proof_key(c, facts, shown, ebits, sbits, opt);
      if (auto hit = load_verdict(opt.proof_cache, key)) {
        out.verdict = hit->proved ? Verdict::proved : Verdict::refuted;
        out.counterexample = hit->counterexample;
        out.work = hit->work;
        out.cached = true;
        out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return out;
      }
    }
    z3::check_result verdict = z3::unknown;
    std::optional<z3::model> model;
    std::string why;
    if (ebits && (model = sample_model(c, b.sort(), consts, facts))) verdict = z3::sat;
    for (int attempt = ebits ? 0 : 2; attempt < 3 && verdict == z3::unknown; ++attempt) {
      z3::solver s = make(attempt);
      z3::params p(c);
      // the bit-blasting attempt (and the only real-number one) gets the full limit
      unsigned ms = opt.timeout_ms ? opt.timeout_ms : std::numeric_limits<unsigned>::max();
      p.set("timeout", attempt == 0 || !ebits ? ms : ms / 2);
      if (opt.rlimit) p.set("rlimit", opt.rlimit);
      s.set(p);
      for (unsigned i = 0; i < facts.size(); ++i) s.add(facts[i]);
      try {
        verdict = s.check();
      } catch (const z3::exception&) {  // e.g. the SAT tactic on uninterpreted functions
        verdict = z3::unknown;
      }
      out.work += rlimit_count(s);
      if (verdict == z3::unknown) why = s.reason_unknown();
      else if (verdict == z3::sat) model = s.get_model();
    }
    switch (verdict) {
      case z3::unsat: out.verdict = Verdict::proved; break;
      case z3::sat: {
        out.verdict = Verdict::refuted;
        z3::model& m = *model;
        for (std::size_t i = 0; i < consts.size(); ++i)
          out.counterexample += (i ? ", " : "") + r.node_vars[i] + " = " + show_value(m, consts[i], ebits != 0);
        out.counterexample += ": lhs = " + show_value(m, lhs, ebits != 0) + ", rhs = " + show_value(m, rhs, ebits != 0);
        break;
      }
      case z3::unknown: out.verdict = Verdict::unknown; out.counterexample = why; break;
    }
    if (!key.empty() && verdict != z3::unknown)  // a timeout may succeed next time: not stored
      store_verdict(opt.proof_cache, key, {verdict == z3::unsat, out.counterexample, out.work});
  } catch (const z3::exception& e) {
    out.verdict = Verdict::unknown;
    out.counterexample = std::string("z3: ") + e.msg();
  } catch (const UserError& e) {
    out.verdict = Verdict::unknown;
    out.counterexample = e.what();
  }
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace

CheckResult check_scalar(const Rule& r, const CheckOptions& opt) {
  CheckResult res;
  res.rule = &r;
  MG_ASSERT(r.scalar, "check_scalar on a rule over tensor-level ops");
  res.reals = prove(r, 0, 0, opt);
  res.f32 = prove(r, 8, 24, opt);
  if (res.f32.verdict == Verdict::proved) res.f64 = prove(r, 11, 53, opt);  // else: not exact anyway
  res.seconds = res.reals.seconds + res.f32.seconds + res.f64.seconds;
  bool ieee = res.f32.verdict == Verdict::proved && res.f64.verdict == Verdict::proved;
  if (ieee) {
    res.proven = Label::exact;
  } else if (res.reals.verdict == Verdict::proved) {
    res.proven = Label::real;
    const TheoryResult& bad = res.f32.verdict != Verdict::proved ? res.f32 : res.f64;
    res.note = std::string(&bad == &res.f32 ? "f32" : "f64") + " " + std::string(name_of(bad.verdict)) + ": " +
               bad.counterexample;
  } else if (res.reals.verdict == Verdict::refuted) {
    res.proven = Label::refuted;
    res.note = "reals: " + res.reals.counterexample;
  } else {
    res.proven = Label::unproven;
    res.note = "reals: " + res.reals.counterexample;
  }
  return res;
}

}  // namespace mg::passes::rules

namespace mg::passes::rules {

std::optional<double> evaluate_smt(const ir::OpDef& op, std::span<const double> args,
                                   std::span<const bool> is_bool, const Attrs& attrs, DType dtype) {
  if (!op.smt || !is_float(dtype)) return std::nullopt;
  // One context per thread: making one costs ~3 ms, a thousand times the evaluation, and
  // the semantics test evaluates thousands of sample points. Terms are freed with `e`.
  thread_local z3::context c;
  const bool f32 = dtype == DType::f32;
  Z3Builder b(c, f32 ? 8 : 11, f32 ? 24 : 53);
  std::vector<ir::SmtTerm> in;
  for (std::size_t i = 0; i < args.size(); ++i) in.push_back(is_bool[i] ? b.boolean(args[i] != 0) : b.num(args[i]));
  z3::expr e = b.get(op.smt(b, in, attrs)).simplify();
  if (e.is_bool()) {
    if (e.is_true()) return 1.0;
    if (e.is_false()) return 0.0;
    return std::nullopt;
  }
  if (!e.is_fpa()) return std::nullopt;
  if (e.mk_is_nan().simplify().is_true()) return NAN;  // NaN has no one bit pattern in Z3
  z3::expr bits = z3::expr(c, Z3_mk_fpa_to_ieee_bv(c, e)).simplify();
  std::uint64_t u = 0;
  if (!bits.is_numeral() || !Z3_get_numeral_uint64(c, bits, &u)) return std::nullopt;
  if (f32) {
    float f;
    auto w = static_cast<std::uint32_t>(u);
    std::memcpy(&f, &w, sizeof f);
    return static_cast<double>(f);
  }
  double d;
  std::memcpy(&d, &u, sizeof d);
  return d;
}

}  // namespace mg::passes::rules
