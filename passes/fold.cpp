// Constant folding with the registry's kernels; see fold.hpp.
#include "minigrad/passes/fold.hpp"

#include <algorithm>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/passes/rewriter.hpp"

namespace mg::passes {

std::unique_ptr<ir::Graph> fold_constants(const ir::Graph& g, FoldOptions options) {
  bool folded = false;
  GraphRewriter rw([&](GraphRewriter& r, const ir::Node& n, std::span<const ir::Value> ins) -> ir::Value {
    if (n.kind != ir::NodeKind::op || n.op->traits.random || !n.regions.empty() || !n.op->kernel) return {};
    std::vector<const Array*> args;
    std::int64_t largest_operand = 0;
    for (const ir::Value& v : ins) {
      const ir::Node& in = v.node();
      if (in.kind != ir::NodeKind::constant) return {};
      args.push_back(in.literal.get());
      largest_operand = std::max(largest_operand, in.type.numel());
    }
    if (n.type.numel() > std::max(options.max_elements, largest_operand)) return {};
    Array out(n.type);
    try {
      n.op->kernel(ir::KernelArgs{args, n, out, nullptr});
    } catch (const std::exception&) {
      return {};  // e.g. an index out of range: keep the node, the run reports it
    }
    ir::Value c = r.dst().add_constant(std::move(out), n.loc);
    r.dst().mutable_node(c.id).role = n.role;
    folded = true;
    return c;
  }, /*only_live=*/true);  // a dead constant subgraph is not worth a kernel run
  auto out = rw.run(g);
  // The operands of a folded node were copied before it folded and are now dead.
  if (folded) out->retain_live();
  return out;
}

}  // namespace mg::passes
