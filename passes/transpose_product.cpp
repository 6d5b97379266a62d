// Transposed products become products of transposes; see transpose_product.hpp. Knows the
// two structural ops of the identity (matmul, permute); nothing else.
#include "minigrad/passes/transpose_product.hpp"

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/op_registry.hpp"
#include "minigrad/passes/rewriter.hpp"

namespace mg::passes {

namespace {

using ir::Graph;
using ir::Node;
using ir::NodeId;
using ir::Value;

bool is_transpose(const Node& n, const ir::OpDef* permute) {
  if (n.kind != ir::NodeKind::op || n.op != permute) return false;
  const I64List& p = n.attrs.list("perm");
  return p.size() == 2 && p[0] == 1 && p[1] == 0;
}

}  // namespace

std::unique_ptr<Graph> transpose_products(const Graph& g) {
  const ir::OpDef* permute = &ir::op("permute");
  const ir::OpDef* matmul = &ir::op("matmul");
  const std::size_t size = g.size();
  const std::vector<bool> live = g.reachable_from(g.outputs);
  std::vector<std::uint32_t> uses(size, 0);
  for (NodeId id = 0; id < size; ++id)
    if (live[id])
      for (NodeId in : g.node(id).inputs) ++uses[in];
  for (NodeId o : g.outputs) uses[o] += 2;  // an output is read outside: never rewritten
  // The transposes whose operand is a rank-2 matmul read only by them.
  std::vector<bool> hit(size, false);
  bool any = false;
  for (NodeId id = 0; id < size; ++id) {
    const Node& n = g.node(id);
    if (!live[id] || !is_transpose(n, permute)) continue;
    const Node& m = g.node(n.inputs[0]);
    if (m.kind != ir::NodeKind::op || m.op != matmul || uses[m.id] != 1 || !m.regions.empty()) continue;
    if (g.node(m.inputs[0]).type.shape.size() != 2 || g.node(m.inputs[1]).type.shape.size() != 2) continue;
    hit[id] = any = true;
  }
  if (!any) return nullptr;

  GraphRewriter rw(
      [&](GraphRewriter& r, const Node& n, std::span<const Value>) -> Value {
        if (!r.at_top() || !hit[n.id]) return {};
        const Node& m = g.node(n.inputs[0]);
        LocScope at(n.loc, true);
        // The transpose of a mapped operand: its source when it is a transpose itself.
        auto transposed = [&](NodeId old) {
          const Value v = r.mapped(old);
          const Node& vn = r.dst().node(v.id);
          if (is_transpose(vn, permute)) return r.dst().value(vn.inputs[0]);
          Value t = ir::make_op(*permute, {v}, {{"perm", I64List{1, 0}}});
          r.dst().mutable_node(t.id).role = n.role;
          return t;
        };
        Value p = ir::make_op(*matmul, {transposed(m.inputs[1]), transposed(m.inputs[0])});
        r.dst().mutable_node(p.id).role = n.role;
        return p;
      },
      /*only_live=*/true);
  return rw.run(g);
}

}  // namespace mg::passes
