// Constant folding with the registry's kernels; see fold.hpp.
#include "minigrad/passes/fold.hpp"

#include <algorithm>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/passes/rewriter.hpp"

namespace mg::passes {

namespace {

// Runs a region on arguments with the registry kernels: what a loop node's kernel calls
// back when its operands are all constants (a small interpreter; no memory plan).
std::vector<Array> run_region(const ir::Graph& body, std::span<const Array> args) {
  std::vector<Array> v(body.size());
  for (std::size_t k = 0; k < body.inputs().size(); ++k) v[body.inputs()[k]] = args[k];
  const std::vector<bool> live = body.reachable_from(body.outputs);
  std::vector<const Array*> ins;
  for (ir::NodeId id = 0; id < body.size(); ++id) {
    const ir::Node& n = body.node(id);
    if (!live[id] || n.kind == ir::NodeKind::input) continue;
    if (n.kind == ir::NodeKind::constant) {
      v[id] = *n.literal;
      continue;
    }
    ins.clear();
    for (ir::NodeId in : n.inputs) ins.push_back(&v[in]);
    const ir::RegionRunner runner = [&n](std::size_t r, std::span<const Array> a) { return run_region(*n.regions.at(r), a); };
    v[id] = Array(n.type);
    n.op->kernel(ir::KernelArgs{ins, n, v[id], n.regions.empty() ? nullptr : &runner});
  }
  std::vector<Array> out;
  for (ir::NodeId o : body.outputs) out.push_back(body.node(o).kind == ir::NodeKind::op ? v[o] : v[o].clone());
  return out;
}

}  // namespace

std::unique_ptr<ir::Graph> fold_constants(const ir::Graph& g, FoldOptions options) {
  bool folded = false;
  std::vector<const Array*> args;  // reused: no allocation per node
  GraphRewriter rw([&](GraphRewriter& r, const ir::Node& n, std::span<const ir::Value> ins) -> ir::Value {
    if (n.kind != ir::NodeKind::op || n.op->traits.random || !n.op->kernel) return {};
    args.clear();
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
      const ir::RegionRunner runner = [&n](std::size_t r, std::span<const Array> a) {
        return run_region(*n.regions.at(r), a);
      };
      n.op->kernel(ir::KernelArgs{args, n, out, n.regions.empty() ? nullptr : &runner});
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
