// inline_node; see inline_node.hpp.
#include "minigrad/passes/inline_node.hpp"

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::passes::detail {

ir::Value inline_node(const ir::Node& n, ir::Graph& dst, std::span<const ir::Value> operands) {
  LocScope at(n.loc, true);
  if (n.kind == ir::NodeKind::constant) return dst.add_constant(*n.literal, n.loc);
  MG_ASSERT(n.kind == ir::NodeKind::op, "inline_node: a region input has no node to copy");
  MG_ASSERT(n.regions.empty(), "inline_node: nested regions are not inlined (op '" + n.op->name + "')");
  return ir::make_op(dst, *n.op, std::vector<ir::Value>(operands.begin(), operands.end()), n.attrs);
}

}  // namespace mg::passes::detail
