// Elementwise and reduction fusion; see fuse.hpp. Knows the three structural ops the
// fused-node contract names (broadcast_to, full, matmul); everything else is asked of the
// registry (the `elementwise` trait, the `fold` column of reductions).
#include "minigrad/passes/fuse.hpp"

#include <algorithm>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/passes/rewriter.hpp"
#include "minigrad/passes/transpose_product.hpp"

namespace mg::passes {

namespace {

using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::NodeKind;
using ir::Value;

enum class Member : std::uint8_t { none, elementwise, broadcast, full, matmul, reduce };

struct Group {
  NodeId root;
  std::vector<NodeId> members;  // including root; ascending ids after close()
  std::vector<Member> kinds;    // parallel to members
  std::vector<NodeId> params;   // outside operands, in first-use order
  NodeId matmul = ir::kNoNode;
};

bool is(const Node& n, const ir::OpDef* def) { return n.kind == NodeKind::op && n.op == def; }

class Fuser {
 public:
  explicit Fuser(const Graph& g)
      : g_(g), bcast_(&ir::op("broadcast_to")), full_(&ir::op("full")), matmul_(&ir::op("matmul")),
        fused_(&ir::op("fused")) {}

  std::unique_ptr<Graph> run() {
    const std::size_t size = g_.size();
    std::vector<bool> live = g_.reachable_from(g_.outputs);
    // Distinct live consumers per node; outputs count as an outside consumer.
    std::vector<std::uint32_t> uses(size, 0);
    for (NodeId id = 0; id < size; ++id) {
      if (!live[id]) continue;
      const Node& n = g_.node(id);
      for (std::size_t i = 0; i < n.inputs.size(); ++i)
        if (std::find(n.inputs.begin(), n.inputs.begin() + static_cast<std::ptrdiff_t>(i), n.inputs[i]) ==
            n.inputs.begin() + static_cast<std::ptrdiff_t>(i))
          ++uses[n.inputs[i]];
    }
    for (NodeId o : g_.outputs) uses[o] += 1u << 16;

    group_of_.assign(size, kNone);
    kind_.assign(size, Member::none);
    stamp_of_.assign(size, 0);
    in_body_.assign(size, ir::kNoNode);
    for (NodeId id = static_cast<NodeId>(size); id-- > 0;) {
      if (!live[id] || group_of_[id] != kNone) continue;
      if (elementwise(g_.node(id)) || fusable_reduction(g_.node(id), uses)) grow(id, uses);
    }

    // Liveness after fusion: a fused root needs its params, absorbed members nothing.
    std::vector<bool> keep(size, false);
    for (NodeId o : g_.outputs) keep[o] = true;
    for (NodeId id = static_cast<NodeId>(size); id-- > 0;) {
      if (!keep[id]) continue;
      std::size_t gi = group_of_[id];
      if (gi != kNone && groups_[gi].root == id) {
        for (NodeId p : groups_[gi].params) keep[p] = true;
      } else {
        for (NodeId in : g_.node(id).inputs) keep[in] = true;
      }
    }

    GraphRewriter rw([this](GraphRewriter& r, const Node& n, std::span<const Value> ins) -> Value {
      if (!r.at_top()) return {};
      if (!n.regions.empty() && n.op != fused_) {  // a loop's body: fused on its own
        Value v = r.copy(n, ins);
        for (std::size_t k = 0; k < n.regions.size(); ++k)
          r.dst().mutable_node(v.id).regions[k] = Fuser(*n.regions[k]).run();
        return v;
      }
      std::size_t gi = group_of_[n.id];
      if (gi == kNone || groups_[gi].root != n.id) return {};
      return emit(r, groups_[gi]);
    });
    rw.set_keep(std::move(keep));
    return rw.run(g_);
  }

 private:
  static constexpr std::size_t kNone = ~std::size_t{0};

  bool elementwise(const Node& n) const {
    return n.kind == NodeKind::op && n.op->traits.elementwise && !n.op->traits.random && n.regions.empty();
  }

  // A plain-fold reduction (registry `fold`) roots a group only where that pays: its
  // operand is an elementwise op read by nothing else (so it need never be stored: the
  // group folds it as it is computed) or a broadcast (never materialised). An operand
  // with other readers is stored anyway; fusing would compute it twice.
  bool fusable_reduction(const Node& n, const std::vector<std::uint32_t>& uses) const {
    if (n.kind != NodeKind::op || n.op->fold == ir::Fold::none || n.inputs.size() != 1) return false;
    const Node& x = g_.node(n.inputs[0]);
    return (elementwise(x) && uses[x.id] == 1 && group_of_[x.id] == kNone) || is(x, bcast_);
  }

  void grow(NodeId root, const std::vector<std::uint32_t>& uses) {
    Group grp;
    grp.root = root;
    const bool reduce = !elementwise(g_.node(root));
    // The loop runs over the root's elements, or over a reduction's operand.
    const Type& loop = reduce ? g_.node(g_.node(root).inputs[0]).type : g_.node(root).type;
    const std::size_t gi = groups_.size();
    // Membership of this group: kind_[x] where stamp_of_[x] is this grow's stamp (dense
    // arrays indexed by id, reset by bumping the stamp: no map and no allocation a node).
    const std::uint32_t stamp = ++stamp_;
    auto in_group = [&](NodeId x) { return stamp_of_[x] == stamp; };
    auto set_kind = [&](NodeId x, Member k) { stamp_of_[x] = stamp, kind_[x] = k; };
    work_.assign(1, root);
    std::vector<NodeId>& members = members_;  // scratch: a root that fuses nothing allocates nothing
    members.assign(1, root);
    set_kind(root, reduce ? Member::reduce : Member::elementwise);
    while (!work_.empty()) {
      NodeId m = work_.back();
      work_.pop_back();
      for (NodeId x : g_.node(m).inputs) {
        if (in_group(x)) continue;
        const Node& xn = g_.node(x);
        Member k = Member::none;
        if (group_of_[x] == kNone && uses[x] == 1 && elementwise(xn) && xn.type.shape == loop.shape) {
          k = Member::elementwise;
        } else if (is(xn, bcast_) && xn.type.shape == loop.shape && kind_[m] != Member::matmul) {
          k = Member::broadcast;
        } else if (is(xn, full_) && xn.type.shape == loop.shape) {
          k = Member::full;
        } else if (!reduce && grp.matmul == ir::kNoNode && group_of_[x] == kNone && uses[x] == 1 && is(xn, matmul_) &&
                   xn.type == loop && g_.node(xn.inputs[0]).kind != NodeKind::constant &&
                   g_.node(xn.inputs[1]).kind != NodeKind::constant) {
          k = Member::matmul;
          grp.matmul = x;
        }
        if (k == Member::none) continue;  // a param (or a constant copied into the body)
        set_kind(x, k);
        members.push_back(x);
        if (k == Member::elementwise) work_.push_back(x);
      }
    }
    if (members.size() < 2) return;
    std::sort(members.begin(), members.end());
    // Params: outside operands, the matmul's first, then in first-use order (constants
    // are copied into the body).
    if (grp.matmul != ir::kNoNode)
      for (NodeId x : g_.node(grp.matmul).inputs)
        if (std::find(grp.params.begin(), grp.params.end(), x) == grp.params.end()) grp.params.push_back(x);
    for (NodeId m : members) {
      if (kind_[m] == Member::full) continue;
      for (NodeId x : g_.node(m).inputs) {
        if (in_group(x) || g_.node(x).kind == NodeKind::constant) continue;
        if (std::find(grp.params.begin(), grp.params.end(), x) == grp.params.end()) grp.params.push_back(x);
      }
    }
    if (grp.params.empty()) return;  // all constant: fold's business
    for (NodeId m : members)
      if (kind_[m] == Member::elementwise || kind_[m] == Member::matmul || kind_[m] == Member::reduce)
        group_of_[m] = gi;
    group_of_[root] = gi;
    grp.kinds.reserve(members.size());
    for (NodeId m : members) grp.kinds.push_back(kind_[m]);
    grp.members = members;
    groups_.push_back(std::move(grp));
  }

  // Builds the fused node for `grp` in r.dst().
  Value emit(GraphRewriter& r, const Group& grp) {
    const Node& root = g_.node(grp.root);
    // The group's kinds and its body values, in dense arrays under a fresh stamp.
    const std::uint32_t stamp = ++stamp_;
    for (std::size_t i = 0; i < grp.members.size(); ++i) kind_[grp.members[i]] = grp.kinds[i];
    auto body = std::make_unique<Graph>();
    auto set_body = [&](NodeId x, Value v) { stamp_of_[x] = stamp, in_body_[x] = v.id; };
    std::vector<Value> outer;
    outer.reserve(grp.params.size());
    for (std::size_t i = 0; i < grp.params.size(); ++i) {
      set_body(grp.params[i], body->add_input(std::string(1, 'a').append(std::to_string(i)), g_.node(grp.params[i]).type));
      outer.push_back(r.mapped(grp.params[i]));
    }
    auto operand = [&](NodeId x) -> Value {
      if (stamp_of_[x] == stamp) return body->value(in_body_[x]);
      const Node& c = g_.node(x);
      MG_ASSERT(c.kind == NodeKind::constant, "fuse: operand neither member, param nor constant");
      Value v = copy_node(*body, c, {});
      set_body(x, v);
      return v;
    };
    std::vector<Value> ins;  // one member's operands, reused
    auto add_member = [&](NodeId m) {
      const Node& n = g_.node(m);
      LocScope at(n.loc, true);
      Value v;
      if (kind_[m] == Member::full) {
        Array splat(Type{n.type.dtype, {}});  // the full kernel's own conversion, on one element
        n.op->kernel(ir::KernelArgs{{}, n, splat, nullptr});
        Value c = body->add_constant(std::move(splat), n.loc);
        body->mutable_node(c.id).role = n.role;
        v = ir::make_op(*bcast_, {c}, {{"shape", n.type.shape}});
      } else {
        ins.clear();
        for (NodeId x : n.inputs) ins.push_back(operand(x));
        v = copy_node(*body, n, ins);
      }
      body->mutable_node(v.id).role = n.role;
      set_body(m, v);
    };
    if (grp.matmul != ir::kNoNode) add_member(grp.matmul);  // the GEMM prologue comes first
    for (NodeId m : grp.members)
      if (m != grp.matmul) add_member(m);
    MG_ASSERT(stamp_of_[grp.root] == stamp, "fuse: the root was not built");
    body->outputs = {in_body_[grp.root]};
    LocScope at(root.loc, true);
    Value f = ir::make_op(r.dst(), *fused_, outer,
                          {{"kind", std::string(kind_[grp.root] == Member::reduce ? "reduce"
                                                : grp.matmul != ir::kNoNode            ? "matmul"
                                                                                        : "elementwise")},
                           {"shape", root.type.shape},
                           {"dtype", root.type.dtype}});
    r.dst().mutable_node(f.id).role = root.role;
    r.dst().mutable_node(f.id).regions.push_back(std::move(body));
    return f;
  }

  const Graph& g_;
  const ir::OpDef *bcast_, *full_, *matmul_, *fused_;
  std::vector<std::size_t> group_of_;
  std::vector<Group> groups_;
  // Scratch indexed by node id, valid where stamp_of_[id] == the current stamp_ (grow: the
  // group's members; emit: the nodes already in the body).
  std::vector<Member> kind_;
  std::vector<std::uint32_t> stamp_of_;
  std::vector<NodeId> in_body_;
  std::vector<NodeId> work_;
  std::vector<NodeId> members_;
  std::uint32_t stamp_ = 0;
};

}  // namespace

std::unique_ptr<ir::Graph> fuse_elementwise(const ir::Graph& g) {
  if (std::unique_ptr<Graph> t = transpose_products(g)) return Fuser(*t).run();
  return Fuser(g).run();
}

}  // namespace mg::passes
