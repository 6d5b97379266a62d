// OpDef::flops for every family (telemetry, runtime/glassbox/telemetry.hpp). Exact where it
// matters for throughput: matmul and the convolutions count every multiply-add as 2. Every
// other computing op is estimated at one operation per element it computes (elementwise:
// per output element; reductions and scans: per input element); data movement (shape
// ops, gather, cast, creation) is 0. A fused node is the sum over its region.
#include <algorithm>

#include "minigrad/ir/op_registry.hpp"
#include "minigrad/ir/ops/families.hpp"

namespace mg::ir {

namespace {

std::int64_t product(const Shape& s, std::size_t from) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < s.size(); ++i) p *= s[i];
  return p;
}

std::int64_t region_flops(const Node& n, std::span<const Type>) {
  std::int64_t total = 0;
  for (const auto& body : n.regions)
    for (NodeId id = 0; id < body->size(); ++id) {
      const Node& b = body->node(id);
      if (b.kind != NodeKind::op || !b.op->flops) continue;
      std::vector<Type> in;
      for (NodeId x : b.inputs) in.push_back(body->node(x).type);
      total += b.op->flops(b, in);
    }
  return total;
}

}  // namespace

void register_flop_counts() {
  const auto per_output = [](const Node& n, std::span<const Type>) { return n.type.numel(); };
  const auto per_input = [](const Node&, std::span<const Type> in) { return in.empty() ? 0 : in[0].numel(); };
  const auto none = [](const Node&, std::span<const Type>) { return std::int64_t{0}; };
  for (OpDef* d : defined_ops()) {
    OpDef& op = *d;
    if (op.traits.elementwise) op.flops = per_output;
    else if (op.fold != Fold::none) op.flops = per_input;
    else op.flops = none;
  }
  for (const char* name : {"var", "logsumexp", "softmax", "log_softmax", "softmax_grad", "cumsum", "argmax", "argmin", "scatter_add",
                           "index_add", "max_pool2d", "avg_pool2d", "max_pool2d_grad", "avg_pool2d_grad"})
    defined_op(name).flops = per_input;
  // Data movement, though elementwise in shape: no arithmetic.
  for (const char* name : {"cast", "stop_gradient", "where", "broadcast_to"}) defined_op(name).flops = none;
  // a[..., m, k] @ b[..., k, n]: k multiply-adds per output element.
  defined_op("matmul").flops = [](const Node& n, std::span<const Type> in) {
    return 2 * n.type.numel() * in[0].shape.back();
  };
  // x[N,C,H,W] (*) w[O,C/groups,kh,kw] -> [N,O,Ho,Wo]: C/groups*kh*kw multiply-adds per output.
  defined_op("conv2d").flops = [](const Node& n, std::span<const Type> in) {
    return 2 * n.type.numel() * product(in[1].shape, 1);
  };
  // g[N,O,Ho,Wo], w[O,C/groups,kh,kw] -> dx: the forward's multiply-adds, transposed.
  defined_op("conv2d_input_grad").flops = [](const Node&, std::span<const Type> in) {
    return 2 * in[0].numel() * product(in[1].shape, 1);
  };
  // x, g[N,O,Ho,Wo] -> dw[O,C/groups,kh,kw]: likewise.
  defined_op("conv2d_weight_grad").flops = [](const Node& n, std::span<const Type> in) {
    return 2 * in[1].numel() * product(n.type.shape, 1);
  };
  defined_op("fused").flops = region_flops;
}

}  // namespace mg::ir
