// Rule validation at load time, the rule index, and the printed spelling of patterns.
// Every error is a UserError that names the rule.
#include <algorithm>
#include <set>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/printer.hpp"
#include "minigrad/passes/rules/conditions.hpp"
#include "minigrad/passes/rules/rule.hpp"

namespace mg::passes::rules {

std::string_view name_of(Label l) {
  switch (l) {
    case Label::exact: return "exact";
    case Label::real: return "real";
    case Label::structural: return "structural";
    case Label::refuted: return "refuted";
    case Label::unproven: return "unproven";
  }
  return "?";
}

std::optional<Label> label_from_name(std::string_view s) {
  for (Label l : {Label::exact, Label::real, Label::structural, Label::refuted, Label::unproven})
    if (name_of(l) == s) return l;
  return std::nullopt;
}

const std::vector<const Rule*>& RuleSet::for_root(const ir::OpDef* op) const {
  static const std::vector<const Rule*> none;
  auto it = by_root_.find(op);
  return it == by_root_.end() ? none : it->second;
}

const Rule* RuleSet::find(std::string_view name) const {
  for (const Rule& r : rules)
    if (r.name == name) return &r;
  return nullptr;
}

void RuleSet::index() {
  by_root_.clear();
  for (const Rule& r : rules) by_root_[r.lhs.op].push_back(&r);
}

std::string to_string(const Pattern& p) {
  switch (p.kind) {
    case Pattern::Kind::var: return "?" + p.var;
    case Pattern::Kind::constant: {
      if (!p.computed) return ir::format_f64(p.value);
      std::string s = p.computed->name + "(";
      for (std::size_t j = 0; j < p.computed->args.size(); ++j) s += (j ? ", ?" : "?") + p.computed->args[j];
      return s + ")";
    }
    case Pattern::Kind::op: break;
  }
  std::string s = "(" + p.op->name;
  for (const Pattern& a : p.args) s += " " + to_string(a);
  if (!p.attrs.empty()) {
    s += " {";
    for (std::size_t i = 0; i < p.attrs.size(); ++i) {
      const AttrExpr& e = p.attrs[i].second;
      s += (i ? ", " : "") + p.attrs[i].first + " = ";
      if (e.kind == AttrExpr::Kind::var) {
        s += "?" + e.name;
      } else if (e.kind == AttrExpr::Kind::call) {
        s += e.name + "(";
        for (std::size_t j = 0; j < e.args.size(); ++j) s += (j ? ", ?" : "?") + e.args[j];
        s += ")";
      } else {
        s += ir::format_attr(e.literal);
      }
    }
    s += "}";
  }
  return s + ")";
}

std::string to_string(const Rule& r) {
  std::string s = "rule \"" + r.name + "\" [" + std::string(name_of(r.declared)) + "]: " + to_string(r.lhs) +
                  " => " + to_string(r.rhs);
  for (std::size_t i = 0; i < r.conds.size(); ++i) {
    s += i ? ", " : " if ";
    s += r.conds[i].name + "(";
    for (std::size_t j = 0; j < r.conds[i].args.size(); ++j) s += (j ? ", " : "") + r.conds[i].args[j];
    s += ")";
  }
  return s + ";";
}

namespace detail {

namespace {

struct Validator {
  Rule& r;
  std::set<std::string> attr_bound;
  bool has_computed = false;

  [[noreturn]] void fail(const std::string& m) const { throw UserError("rule '" + r.name + "': " + m); }

  int node_slot(const std::string& v) const {
    auto it = std::find(r.node_vars.begin(), r.node_vars.end(), v);
    return it == r.node_vars.end() ? -1 : static_cast<int>(it - r.node_vars.begin());
  }

  // An attribute function call: known, right arity, arguments bound.
  void check_call(const AttrExpr& e) const {
    const AttrFnDef* f = find_attr_function(e.name);
    if (!f) fail("unknown attribute function '" + e.name + "'");
    if (f->arity != static_cast<int>(e.args.size()))
      fail("'" + e.name + "' takes " + std::to_string(f->arity) + " argument(s)");
    for (auto& a : e.args)
      if (!attr_bound.count(a) && node_slot(a) < 0) fail("?" + a + " in " + e.name + "(...) is not bound");
  }

  void check_attrs(Pattern& p, bool lhs) {
    for (auto& [name, e] : p.attrs) {
      const AttrSpec* spec = nullptr;
      for (const AttrSpec& s : p.op->attrs)
        if (s.name == name) spec = &s;
      if (!spec) {
        std::string known;
        for (const AttrSpec& s : p.op->attrs) known += (known.empty() ? "" : ", ") + s.name;
        fail("op '" + p.op->name + "' has no attribute '" + name + "' (it takes: " +
             (known.empty() ? "none" : known) + ")");
      }
      if (e.kind == AttrExpr::Kind::literal) {
        if (kind_of(e.literal) == AttrKind::i64 && spec->kind == AttrKind::f64)
          e.literal = static_cast<double>(std::get<std::int64_t>(e.literal));
        if (kind_of(e.literal) != spec->kind)
          fail("attribute '" + name + "' of '" + p.op->name + "' expects " + std::string(mg::name_of(spec->kind)) +
               ", got " + std::string(mg::name_of(kind_of(e.literal))));
      } else if (e.kind == AttrExpr::Kind::var) {
        if (lhs) {
          attr_bound.insert(e.name);
          if (std::find(r.attr_vars.begin(), r.attr_vars.end(), e.name) == r.attr_vars.end())
            r.attr_vars.push_back(e.name);
        } else if (!attr_bound.count(e.name)) {
          fail("attribute variable ?" + e.name + " in the replacement is not bound by the pattern");
        }
      } else {
        if (lhs) fail("attribute functions (" + e.name + ") belong in the replacement only");
        check_call(e);
      }
    }
    if (!lhs)
      for (const AttrSpec& s : p.op->attrs) {
        bool given = std::any_of(p.attrs.begin(), p.attrs.end(), [&](auto& kv) { return kv.first == s.name; });
        if (!given && !s.default_value)
          fail("replacement op '" + p.op->name + "' needs attribute '" + s.name + "'");
      }
  }

  void walk(Pattern& p, bool lhs) {
    switch (p.kind) {
      case Pattern::Kind::var:
        p.slot = node_slot(p.var);
        if (p.slot < 0) {
          if (!lhs) fail("variable ?" + p.var + " in the replacement is not bound by the pattern");
          p.slot = static_cast<int>(r.node_vars.size());
          r.node_vars.push_back(p.var);
        }
        return;
      case Pattern::Kind::constant:
        if (!p.computed) return;
        if (lhs) fail("computed constants (" + p.computed->name + ") belong in the replacement only");
        if (p.computed->kind != AttrExpr::Kind::call) fail("a computed constant is a function call");
        check_call(*p.computed);
        has_computed = true;
        return;
      case Pattern::Kind::op: break;
    }
    int n = static_cast<int>(p.args.size());
    if (p.op->arity >= 0 && n != p.op->arity)
      fail("op '" + p.op->name + "' takes " + std::to_string(p.op->arity) + " input(s), the " +
           (lhs ? "pattern" : "replacement") + " gives " + std::to_string(n));
    if (p.op->arity < 0 && n == 0) fail("op '" + p.op->name + "' needs at least one input");
    if (p.op->arity == 0) fail("op '" + p.op->name + "' has no inputs; write a constant instead");
    for (Pattern& a : p.args) walk(a, lhs);
    check_attrs(p, lhs);
  }

  static bool all_scalar(const Pattern& p) {
    if (p.kind != Pattern::Kind::op) return true;
    if (!p.op->smt || !p.op->traits.elementwise) return false;
    return std::all_of(p.args.begin(), p.args.end(), all_scalar);
  }

  void run() {
    if (r.lhs.kind != Pattern::Kind::op) fail("the pattern must start with an op, not a variable or constant");
    walk(r.lhs, true);
    walk(r.rhs, false);
    for (Cond& c : r.conds) {
      const CondDef* d = find_condition(c.name);
      if (!d) {
        std::string known;
        for (const CondDef& k : conditions()) known += (known.empty() ? "" : ", ") + std::string(k.name);
        fail("unknown condition '" + c.name + "' (known: " + known + ")");
      }
      if (d->arity >= 0 && static_cast<int>(c.args.size()) != d->arity)
        fail("condition '" + c.name + "' takes " + std::to_string(d->arity) + " argument(s)");
      for (auto& a : c.args) {
        if (a.empty() || a[0] != '?') continue;  // an integer
        std::string v = a.substr(1);
        if (node_slot(v) < 0 && !attr_bound.count(v)) fail("?" + v + " in " + c.name + "(...) is not bound");
        if (d->value && node_slot(v) < 0) fail("condition '" + c.name + "' takes a value variable");
      }
    }
    r.scalar = all_scalar(r.lhs) && all_scalar(r.rhs);
    // Z3 sees values, not shapes: a count derived from shapes is checked numerically.
    if (r.scalar && has_computed) fail("a computed constant needs a tensor-level rule (checked numerically)");
    if (r.scalar && r.declared == Label::structural)
      fail("every op here is elementwise with Z3 semantics: declare it exact or real (the checker proves it)");
    if (!r.scalar && r.declared == Label::exact)
      fail("a rule over tensor-level ops cannot be proved exact by Z3: declare it structural or real");
  }
};

}  // namespace

void validate(Rule& r) { Validator{r, {}, false}.run(); }

}  // namespace detail

const RuleSet& shipped_rules() {
  static const RuleSet set = parse_rules(shipped_rules_text(), "passes/rules/table.cpp");
  return set;
}

}  // namespace mg::passes::rules
