// The rewrite driver: matching, conditions, replacement building, the walk and the final
// compaction. What each rule means lives in the table; nothing here names an op except
// the few data-movement ops through which a splat constant stays a splat.
#include "minigrad/passes/rewrite.hpp"

#include <chrono>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/rules/conditions.hpp"
#include "minigrad/passes/rules/rule.hpp"

namespace mg::passes {

using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::NodeKind;
using rules::AttrExpr;
using rules::Pattern;
using rules::Rule;

namespace {

// A constant pattern matches a splat of the same value in the node's dtype, bit for bit
// (so `0` matches +0 only and `-0` matches -0 only).
bool same_scalar(double a, double b, DType t) {
  switch (t) {
    case DType::f32: {
      float x = static_cast<float>(a), y = static_cast<float>(b);
      return std::memcmp(&x, &y, sizeof x) == 0;
    }
    case DType::f64: return std::memcmp(&a, &b, sizeof a) == 0;
    case DType::i64: return std::isfinite(a) && std::isfinite(b) && static_cast<std::int64_t>(a) == static_cast<std::int64_t>(b) && a == std::trunc(a);
    case DType::boolean: return (a != 0) == (b != 0);
  }
  return false;
}

bool value_dtype(DType t) { return is_float(t) || t == DType::boolean; }

// Ops whose output elements are all copies of input elements (so a splat stays a splat).
bool moves_data(const ir::OpDef* op) {
  static const ir::OpDef* moving[] = {&ir::op("broadcast_to"), &ir::op("reshape"), &ir::op("permute"),
                                      &ir::op("squeeze"), &ir::op("unsqueeze"), &ir::op("flip"),
                                      &ir::op("slice")};
  for (auto* m : moving)
    if (m == op) return true;
  return false;
}

struct Binding {
  std::vector<NodeId> node;
  std::vector<std::optional<AttrValue>> attr;
};

class Rewriter {
 public:
  Rewriter(const Graph& src, const RewriteOptions& opt, const rules::RuleSet& rs)
      : src_(src), opt_(opt), rules_(rs) {}

  RewriteResult run(std::span<const NodeId> roots_in) {
    auto t0 = std::chrono::steady_clock::now();
    std::vector<NodeId> roots(roots_in.begin(), roots_in.end());
    bool named = roots.empty();
    if (named) roots = src_.outputs;
    std::vector<bool> live = src_.reachable_from(roots);
    for (NodeId in : src_.inputs()) live[in] = true;  // kept; a dead node is skipped unread
    RewriteResult res;
    std::vector<NodeId> to_dst(src_.size(), ir::kNoNode);
    for (NodeId id = 0; id < src_.size(); ++id) {
      if (!live[id]) continue;
      const Node& n = src_.node(id);
      ++res.stats.nodes_before;
      to_dst[id] = n.kind == NodeKind::input ? copy_input(dst_, n) : copy_node(n, to_dst);
    }
    // Compact: only what the rewritten roots need, plus every input.
    std::vector<NodeId> dst_roots;
    for (NodeId r : roots) dst_roots.push_back(to_dst[r]);
    std::vector<NodeId> to_final;
    res.graph = compact(dst_, dst_roots, to_final);
    for (NodeId r : dst_roots) res.graph->outputs.push_back(to_final[r]);
    if (named) res.graph->output_names = src_.output_names;
    res.map.assign(src_.size(), ir::kNoNode);
    for (NodeId id = 0; id < src_.size(); ++id)
      if (to_dst[id] != ir::kNoNode) res.map[id] = to_final[to_dst[id]];
    res.stats.nodes_after = res.graph->size();
    res.stats.rewrites = log_.size();
    res.stats.loops_cut = loops_cut_;
    for (auto& e : log_) ++res.stats.by_rule[e.rule];
    res.log = std::move(log_);
    res.stats.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return res;
  }

 private:
  static NodeId copy_input(Graph& g, const Node& n) {
    NodeId id = g.add_input(n.name, n.type, n.loc).id;
    g.mutable_node(id).role = n.role;
    return id;
  }

  NodeId copy_node(const Node& n, const std::vector<NodeId>& to_dst) {
    LocScope at(n.loc, true);
    ir::RoleScope role(dst_, n.role);
    if (n.kind == NodeKind::constant) return dst_.add_constant(*n.literal, n.loc).id;
    std::vector<ir::Value> ins;
    for (NodeId in : n.inputs) ins.push_back(dst_.value(to_dst[in]));
    NodeId id = ir::make_op(dst_, *n.op, ins, n.attrs).id;
    if (!n.regions.empty()) {  // region bodies are rewritten too, then owned by the copy
      for (auto& body : n.regions) dst_.mutable_node(id).regions.push_back(rewrite(*body, {}, opt_).graph);
      return id;  // a node owning regions is never a rule's root
    }
    return simplify(id, 0);
  }

  // ---- analyses of result-graph nodes: computed forward in id order (inputs first), so
  // no recursion however long a chain is ----
  std::optional<double> splat(NodeId id) {
    analyse_upto(id);
    return splat_[id];
  }
  bool const_valued(NodeId id) {
    analyse_upto(id);
    return constv_[id];
  }
  void analyse_upto(NodeId last) {
    for (; splat_.size() <= last;) {
      const NodeId id = static_cast<NodeId>(splat_.size());
      const Node& n = dst_.node(id);
      std::optional<double> v;
      bool c = n.kind == NodeKind::constant;
      if (n.kind == NodeKind::constant && n.literal->numel() > 0) {
        const Array& a = *n.literal;
        bool all = true;
        const auto* bytes = static_cast<const unsigned char*>(a.raw());
        std::size_t w = size_of(a.dtype());
        for (std::int64_t i = 1; all && i < a.numel(); ++i)
          all = std::memcmp(bytes, bytes + static_cast<std::size_t>(i) * w, w) == 0;
        if (all) v = a.at(0);
      } else if (n.kind == NodeKind::op) {
        if (n.op->name == "full") v = Array::scalar(n.type.dtype, n.attrs.f64("value")).at(0);
        else if (moves_data(n.op) && n.type.numel() > 0) v = splat_[n.inputs[0]];
        c = !n.op->traits.random && n.regions.empty();
        for (NodeId in : n.inputs) c = c && constv_[in];
      }
      splat_.push_back(v);
      constv_.push_back(c);
    }
  }

  // ---- matching (continuation-passing, so commutative choices backtrack) ----
  using Cont = std::function<bool(Binding&)>;

  bool match(const Pattern& p, NodeId id, Binding b, const Cont& k) {
    switch (p.kind) {
      case Pattern::Kind::var: {
        NodeId& slot = b.node[static_cast<std::size_t>(p.slot)];
        if (slot == ir::kNoNode) slot = id;
        else if (slot != id) return false;
        return k(b);
      }
      case Pattern::Kind::constant: {
        auto v = splat(id);
        return v && same_scalar(*v, p.value, dst_.node(id).type.dtype) && k(b);
      }
      case Pattern::Kind::op: break;
    }
    const Node& n = dst_.node(id);
    if (n.kind != NodeKind::op || n.op != p.op || n.inputs.size() != p.args.size()) return false;
    for (auto& [name, e] : p.attrs) {
      const AttrValue* have = n.attrs.find(name);
      if (!have) return false;
      if (e.kind == AttrExpr::Kind::literal) {
        if (!(*have == e.literal)) return false;
      } else {
        auto& slot = b.attr[attr_slot(name_rule_, e.name)];
        if (!slot) slot = *have;
        else if (!(*slot == *have)) return false;
      }
    }
    if (match_args(p.args, n.inputs, 0, b, k)) return true;
    if (p.op->traits.commutative && n.inputs.size() == 2) {
      const NodeId swapped[2] = {n.inputs[1], n.inputs[0]};
      return match_args(p.args, swapped, 0, b, k);
    }
    return false;
  }

  bool match_args(const std::vector<Pattern>& ps, std::span<const NodeId> ins, std::size_t i, Binding b,
                  const Cont& k) {
    if (i == ps.size()) return k(b);
    return match(ps[i], ins[i], std::move(b), [&](Binding& b2) { return match_args(ps, ins, i + 1, b2, k); });
  }

  static std::size_t attr_slot(const Rule* r, const std::string& name) {
    for (std::size_t i = 0; i < r->attr_vars.size(); ++i)
      if (r->attr_vars[i] == name) return i;
    MG_ASSERT(false, "rule '" + r->name + "': attribute variable ?" + name + " has no slot");
    return 0;
  }

  rules::BoundArg bound(const Rule& r, const std::string& arg, const Binding& b) {
    rules::BoundArg a;
    if (arg.empty() || arg[0] != '?') {
      a.number = std::stoll(arg);
      return a;
    }
    std::string v = arg.substr(1);
    for (std::size_t i = 0; i < r.node_vars.size(); ++i)
      if (r.node_vars[i] == v) {
        NodeId id = b.node[i];
        a.type = &dst_.node(id).type;
        a.splat = splat(id);
        a.const_valued = const_valued(id);
        return a;
      }
    const auto& slot = b.attr[attr_slot(&r, v)];
    if (slot) a.attr = &*slot;
    return a;
  }

  bool conditions_hold(const Rule& r, const Binding& b) {
    for (const rules::Cond& c : r.conds) {
      std::vector<rules::BoundArg> args;
      for (auto& a : c.args) args.push_back(bound(r, a, b));
      if (!rules::find_condition(c.name)->holds(args)) return false;
    }
    return true;
  }

  std::optional<AttrValue> eval_attr(const Rule& r, const AttrExpr& e, const Binding& b) {
    switch (e.kind) {
      case AttrExpr::Kind::literal: return e.literal;
      case AttrExpr::Kind::var: return b.attr[attr_slot(&r, e.name)];
      case AttrExpr::Kind::call: {
        std::vector<rules::BoundArg> args;
        for (auto& a : e.args) args.push_back(bound(r, "?" + a, b));
        return rules::find_attr_function(e.name)->eval(args);
      }
    }
    return std::nullopt;
  }

  // Builds the replacement; nullopt when it does not type-check here.
  std::optional<NodeId> build(const Rule& r, const Pattern& p, const Binding& b, const Type& root, int depth) {
    switch (p.kind) {
      case Pattern::Kind::var: return b.node[static_cast<std::size_t>(p.slot)];
      case Pattern::Kind::constant: {
        if (!p.computed) return ir::full(dst_, root, p.value).id;
        auto v = eval_attr(r, *p.computed, b);  // a count: f64, or an i64
        if (!v) return std::nullopt;
        if (auto* d = std::get_if<double>(&*v)) return ir::full(dst_, root, *d).id;
        if (auto* i = std::get_if<std::int64_t>(&*v)) return ir::full(dst_, root, static_cast<double>(*i)).id;
        return std::nullopt;
      }
      case Pattern::Kind::op: break;
    }
    std::vector<ir::Value> ins;
    for (const Pattern& a : p.args) {
      auto id = build(r, a, b, root, depth);
      if (!id) return std::nullopt;
      ins.push_back(dst_.value(*id));
    }
    Attrs attrs;
    for (auto& [name, e] : p.attrs) {
      auto v = eval_attr(r, e, b);
      if (!v) return std::nullopt;
      attrs.set(name, *v);
    }
    NodeId id;
    try {
      id = ir::make_op(dst_, *p.op, ins, attrs).id;
    } catch (const UserError&) {
      return std::nullopt;  // e.g. a permutation of the wrong rank: this rule does not fit here
    }
    return simplify(id, depth + 1);
  }

  NodeId simplify(NodeId id, int depth) {
    const Node& n = dst_.node(id);
    if (n.kind != NodeKind::op) return id;
    if (depth > opt_.max_depth) {
      ++loops_cut_;
      return id;
    }
    for (const Rule* r : rules_.for_root(n.op)) {
      if (!enabled(*r)) continue;
      const Node& m = dst_.node(id);
      if (r->scalar && !value_dtype(m.type.dtype)) continue;
      Binding b{std::vector<NodeId>(r->node_vars.size(), ir::kNoNode),
                std::vector<std::optional<AttrValue>>(r->attr_vars.size())};
      std::optional<NodeId> result;
      const Type& root = m.type;  // stays valid while dst_ grows (nodes never move)
      const SourceLoc loc = m.loc;
      const ir::Role role_of = m.role;
      name_rule_ = r;
      bool fired = match(r->lhs, id, b, [&](Binding& got) {
        if (r->scalar)
          for (NodeId v : got.node)
            if (!value_dtype(dst_.node(v).type.dtype)) return false;
        if (!conditions_hold(*r, got)) return false;
        LocScope at(loc, true);
        ir::RoleScope role(dst_, role_of);
        auto built = build(*r, r->rhs, got, root, depth);
        name_rule_ = r;
        if (!built || dst_.node(*built).type != root) return false;
        result = built;
        return true;
      });
      if (fired && result) {
        log_.push_back({r->name, id, dst_.node(id).op->name, loc});
        return *result;
      }
    }
    return id;
  }

  bool enabled(const Rule& r) const {
    switch (r.declared) {
      case rules::Label::exact:
      case rules::Label::structural: return true;
      case rules::Label::real: return opt_.mode == RewriteMode::fast_math;
      default: return false;
    }
  }

  // Copies the nodes `roots` need (and every input) into a fresh graph.
  static std::unique_ptr<Graph> compact(Graph& g, const std::vector<NodeId>& roots, std::vector<NodeId>& map) {
    auto out = std::make_unique<Graph>();
    std::vector<bool> live = g.reachable_from(roots);
    for (NodeId in : g.inputs()) live[in] = true;
    map.assign(g.size(), ir::kNoNode);
    std::vector<NodeId> ins;
    for (NodeId id = 0; id < g.size(); ++id) {
      if (!live[id]) continue;  // unread: most of a big scratch graph can be dead
      Node& n = g.mutable_node(id);
      if (n.kind == NodeKind::input) {
        map[id] = copy_input(*out, n);
        continue;
      }
      // `g` is the pass's scratch graph, dropped after this copy: its node's parts move
      // (no allocation for the shape or attributes of each node kept).
      Node c;
      c.kind = n.kind;
      c.op = n.op;
      ins.clear();
      for (NodeId in : n.inputs) ins.push_back(map[in]);
      c.attrs = std::move(n.attrs);
      c.type = std::move(n.type);
      c.loc = n.loc;
      c.name = std::move(n.name);
      c.literal = std::move(n.literal);
      c.regions = std::move(n.regions);
      ir::Role role = n.role;
      map[id] = out->append(std::move(c), ins).id;
      out->mutable_node(map[id]).role = role;
    }
    return out;
  }

  const Graph& src_;
  const RewriteOptions& opt_;
  const rules::RuleSet& rules_;
  Graph dst_;
  std::vector<std::optional<double>> splat_;  // per result-graph node, filled in id order
  std::vector<bool> constv_;
  std::vector<RewriteEvent> log_;
  std::size_t loops_cut_ = 0;
  const Rule* name_rule_ = nullptr;  // the rule being matched (attribute slots)
};

}  // namespace

RewriteResult rewrite(const Graph& g, std::span<const NodeId> roots, const RewriteOptions& options) {
  const rules::RuleSet& rs = options.rules ? *options.rules : rules::shipped_rules();
  return Rewriter(g, options, rs).run(roots);
}

}  // namespace mg::passes
