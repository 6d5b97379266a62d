// inline_node; see inline_node.hpp.
#include "minigrad/passes/inline_node.hpp"

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/region.hpp"

namespace mg::passes::detail {

ir::Value inline_node(const ir::Node& n, ir::Graph& dst, std::span<const ir::Value> operands) {
  LocScope at(n.loc, true);
  if (n.kind == ir::NodeKind::constant) return dst.add_constant(*n.literal, n.loc);
  MG_ASSERT(n.kind == ir::NodeKind::op, "inline_node: a region input has no node to copy");
  ir::Value v = ir::make_op(dst, *n.op, std::vector<ir::Value>(operands.begin(), operands.end()), n.attrs);
  // A loop nested in a body (a checkpointed scan's backward) keeps its own regions.
  for (const auto& r : n.regions) dst.mutable_node(v.id).regions.push_back(ir::clone_region(*r));
  return v;
}

}  // namespace mg::passes::detail
