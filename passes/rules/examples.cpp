// The rule examples (see examples.hpp) and how they become graphs.
#include "minigrad/passes/rules/examples.hpp"

#include <cmath>
#include <map>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"

namespace mg::passes::rules {

namespace {

const Example kExplicit[] = {
    {"div-self-finite", "x: f32[2,3] = 2", "(div ?x ?x)", "1"},
    {"div-self", "x: f32[2,3] = inf", "(div ?x ?x)", "1"},
    {"sub-self-finite", "x: f32[2,3] = 2", "(sub ?x ?x)", "0"},
    {"mul-div-cancel", "y: f32[2,3] = 2", "(mul (div ?x ?y) ?y)", "?x"},
    {"div-mul-cancel", "y: f32[2,3] = 2", "(div (mul ?x ?y) ?y)", "?x"},
    {"exp-log", "x: f32[2,3] = 2", "(exp (log ?x))", "?x"},
    {"square-sqrt", "x: f32[2,3] = 2", "(square (sqrt ?x))", "?x"},
    {"mul-const-assoc", "", "(mul (mul ?x 2) 3)", "(mul ?x (mul 2 3))"},
    {"add-const-assoc", "", "(add (add ?x 2) 3)", "(add ?x (add 2 3))"},
    {"where-same", "c: bool[2,3]", "(where ?c ?x ?x)", "?x"},
    {"where-not", "c: bool[2,3]", "(where (logical_not ?c) ?x ?y)", "(where ?c ?y ?x)"},
    {"not-not", "c: bool[2,3]", "(logical_not (logical_not ?c))", "?c"},
    {"permute-permute", "x: f32[2,3,4]", "(permute (permute ?x {perm = [1, 0, 2]}) {perm = [0, 2, 1]})",
     "(permute ?x {perm = [1, 2, 0]})"},
    {"permute-permute", "x: f32[2,3,4]", "(permute (permute ?x {perm = [1, 2, 0]}) {perm = [2, 0, 1]})", "?x"},
    {"permute-identity", "x: f32[2,3]", "(permute ?x {perm = [0, 1]})", "?x"},
    {"reshape-same", "x: f32[2,3]", "(reshape ?x {shape = [2, 3]})", "?x"},
    {"reshape-reshape", "x: f32[2,3]", "(reshape (reshape ?x {shape = [6]}) {shape = [3, 2]})",
     "(reshape ?x {shape = [3, 2]})"},
    {"reshape-squeeze", "x: f32[2,1,3]", "(reshape (squeeze ?x {axes = [1]}) {shape = [3, 2]})",
     "(reshape ?x {shape = [3, 2]})"},
    {"reshape-unsqueeze", "x: f32[2,3]", "(reshape (unsqueeze ?x {axes = [0]}) {shape = [3, 2]})",
     "(reshape ?x {shape = [3, 2]})"},
    {"squeeze-unsqueeze", "x: f32[2,3]", "(squeeze (unsqueeze ?x {axes = [1]}) {axes = [1]})", "?x"},
    {"broadcast-same", "x: f32[2,3]", "(broadcast_to ?x {shape = [2, 3]})", "?x"},
    {"broadcast-broadcast", "x: f32[3]", "(broadcast_to (broadcast_to ?x {shape = [1, 3]}) {shape = [2, 3]})",
     "(broadcast_to ?x {shape = [2, 3]})"},
    {"broadcast-unit-reshape", "x: f32[]", "(broadcast_to (reshape ?x {shape = [1]}) {shape = [4]})",
     "(broadcast_to ?x {shape = [4]})"},
    {"broadcast-unit-reshape", "x: f32[3]", "(broadcast_to (reshape ?x {shape = [1, 3]}) {shape = [2, 3]})",
     "(broadcast_to ?x {shape = [2, 3]})"},
    {"flip-flip", "x: f32[2,3]", "(flip (flip ?x {axes = [1]}) {axes = [1]})", "?x"},
    {"cast-same", "x: f32[2,3]", "(cast ?x {dtype = f32})", "?x"},
    {"cast-f32-f64-f32", "x: f32[2,3]", "(cast (cast ?x {dtype = f64}) {dtype = f32})", "?x"},
    {"slice-concat-first", "a: f32[2,3], b: f32[4,3]",
     "(slice (concat ?a ?b {axis = 0}) {starts = [0, 0], stops = [2, 3], steps = [1, 1]})", "?a"},
    {"slice-concat-second", "a: f32[2,3], b: f32[4,3]",
     "(slice (concat ?a ?b {axis = 0}) {starts = [2, 0], stops = [6, 3], steps = [1, 1]})", "?b"},
    {"slice-concat3-middle", "a: f32[2,3], b: f32[2,4], c: f32[2,1]",
     "(slice (concat ?a ?b ?c {axis = 1}) {starts = [0, 3], stops = [2, 7], steps = [1, 1]})", "?b"},
    {"neg-broadcast", "x: f32[3]", "(neg (broadcast_to ?x {shape = [2, 3]}))",
     "(broadcast_to (neg ?x) {shape = [2, 3]})"},
    {"sqrt-broadcast", "x: f32[3]", "(sqrt (broadcast_to ?x {shape = [2, 3]}))",
     "(broadcast_to (sqrt ?x) {shape = [2, 3]})"},
    {"exp-broadcast", "x: f32[3]", "(exp (broadcast_to ?x {shape = [2, 3]}))",
     "(broadcast_to (exp ?x) {shape = [2, 3]})"},
    {"reciprocal-broadcast", "x: f32[3]", "(reciprocal (broadcast_to ?x {shape = [2, 3]}))",
     "(broadcast_to (reciprocal ?x) {shape = [2, 3]})"},
    {"cast-broadcast", "x: f32[3]", "(cast (broadcast_to ?x {shape = [2, 3]}) {dtype = f64})",
     "(broadcast_to (cast ?x {dtype = f64}) {shape = [2, 3]})"},
    {"transpose-matmul-transpose", "a: f32[4,2], b: f32[4,3]",
     "(permute (matmul (permute ?a {perm = [1, 0]}) ?b) {perm = [1, 0]})",
     "(matmul (permute ?b {perm = [1, 0]}) ?a)"},
    {"matmul-transposes", "a: f32[3,4], b: f32[2,3]",
     "(matmul (permute ?a {perm = [1, 0]}) (permute ?b {perm = [1, 0]}))",
     "(permute (matmul ?b ?a) {perm = [1, 0]})"},
    {"log-softmax", "x: f32[2,3]", "(log (softmax ?x {axis = 1}))", "(log_softmax ?x {axis = 1})"},
    {"sum-broadcast", "x: f32[3]", "(reduce_sum (broadcast_to ?x {shape = [4, 3]}) {axes = [0]})", "(mul ?x 4)"},
    {"sum-broadcast", "x: f32[2,1]", "(reduce_sum (broadcast_to ?x {shape = [2, 5]}) {axes = [1], keepdim = true})",
     "(mul ?x 5)"},
    {"mean-broadcast", "x: f32[3]", "(reduce_mean (broadcast_to ?x {shape = [4, 3]}) {axes = [0]})", "?x"},
    {"exp-log-softmax", "x: f32[2,3]", "(exp (log_softmax ?x {axis = 1}))", "(softmax ?x {axis = 1})"},
};

struct VarSpec {
  Type type{DType::f32, {2, 3}};
  std::optional<double> splat;
};

Type parse_type(const std::string& s) {
  auto lb = s.find('[');
  auto dt = dtype_from_name(s.substr(0, lb));
  if (!dt || lb == std::string::npos) throw UserError("example: bad type '" + s + "'");
  Type t{*dt, {}};
  std::string inner = s.substr(lb + 1, s.find(']') - lb - 1), cur;
  for (std::size_t i = 0; i <= inner.size(); ++i) {
    if (i == inner.size() || inner[i] == ',') {
      if (!cur.empty()) t.shape.push_back(std::stoll(cur));
      cur.clear();
    } else if (inner[i] != ' ') {
      cur += inner[i];
    }
  }
  return t;
}

std::map<std::string, VarSpec> parse_vars(const std::string& text) {
  std::map<std::string, VarSpec> out;
  // split on commas outside brackets (types contain commas)
  std::vector<std::string> parts;
  std::string cur;
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      parts.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) parts.push_back(cur);
  for (auto& p : parts) {
    auto colon = p.find(':');
    if (colon == std::string::npos) continue;
    std::string name = p.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    std::string rest = p.substr(colon + 1);
    VarSpec v;
    auto eq = rest.find('=');
    std::string ty = rest.substr(0, eq);
    ty.erase(0, ty.find_first_not_of(' '));
    ty.erase(ty.find_last_not_of(' ') + 1);
    v.type = parse_type(ty);
    if (eq != std::string::npos) {
      std::string val = rest.substr(eq + 1);
      val.erase(0, val.find_first_not_of(' '));
      v.splat = val == "inf" ? INFINITY : val == "-inf" ? -INFINITY : std::stod(val);
    }
    out[name] = v;
  }
  return out;
}

struct Builder {
  ir::Graph& g;
  std::map<std::string, ir::Value> vars;
  std::map<std::string, VarSpec> splats;  // made on first use, so an unused one is absent
  std::optional<Type> sibling_type(const Pattern& p, const std::vector<ir::Value>& built) {
    for (std::size_t i = 0; i < p.args.size(); ++i)
      if (p.args[i].kind != Pattern::Kind::constant) return built[i].type();
    return std::nullopt;
  }
  ir::Value build(const Pattern& p, const Type& fallback) {
    switch (p.kind) {
      case Pattern::Kind::var:
        if (!vars.count(p.var)) vars[p.var] = ir::full(g, splats.at(p.var).type, *splats.at(p.var).splat);
        return vars.at(p.var);
      case Pattern::Kind::constant:
        if (p.computed) throw UserError("example: a computed constant needs a match; write its value in the goal");
        return ir::full(g, fallback, p.value);
      case Pattern::Kind::op: break;
    }
    std::vector<ir::Value> ins(p.args.size());
    for (std::size_t i = 0; i < p.args.size(); ++i)
      if (p.args[i].kind != Pattern::Kind::constant) ins[i] = build(p.args[i], fallback);
    Type ct = sibling_type(p, ins).value_or(fallback);
    for (std::size_t i = 0; i < p.args.size(); ++i)
      if (p.args[i].kind == Pattern::Kind::constant) ins[i] = build(p.args[i], ct);
    Attrs attrs;
    for (auto& [name, e] : p.attrs) {
      if (e.kind != AttrExpr::Kind::literal) throw UserError("example: attributes must be literals");
      attrs.set(name, e.literal);
    }
    return ir::make_op(g, *p.op, ins, attrs);
  }
};

}  // namespace

std::vector<Example> examples() {
  std::vector<Example> out;
  for (const Rule& r : shipped_rules().rules) {
    auto mine = examples_of(r.name);
    out.insert(out.end(), mine.begin(), mine.end());
  }
  return out;
}

std::vector<Example> examples_of(std::string_view rule) {
  std::vector<Example> out;
  for (const Example& e : kExplicit)
    if (e.rule == rule) out.push_back(e);
  if (out.empty())
    if (const Rule* r = shipped_rules().find(rule)) out.push_back({r->name, "", to_string(r->lhs), to_string(r->rhs)});
  return out;
}

ExampleGraphs build_example(const Example& e) {
  RuleSet parsed = parse_rules("rule \"" + e.rule + "\" [real]: " + e.start + " => " + e.goal + ";", "<example>");
  const Rule& r = parsed.rules.at(0);
  auto specs = parse_vars(e.vars);
  ExampleGraphs out;
  Type root_type{DType::f32, {2, 3}};
  for (int side = 0; side < 2; ++side) {
    auto g = std::make_unique<ir::Graph>();
    Builder b{*g, {}, {}};
    for (const std::string& v : r.node_vars) {
      VarSpec s = specs.count(v) ? specs[v] : VarSpec{};
      if (s.splat) b.splats[v] = s;
      else b.vars[v] = g->add_input(v, s.type);
    }
    ir::Value result = b.build(side == 0 ? r.lhs : r.rhs, root_type);
    if (side == 0) root_type = result.type();
    g->outputs = {result.id};
    g->output_names = {"out"};
    (side == 0 ? out.start : out.goal) = std::move(g);
  }
  return out;
}

}  // namespace mg::passes::rules
