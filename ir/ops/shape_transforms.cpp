// jvp and batch columns of the shape family (ir/ops/shape.cpp). Every shape op is linear
// (pad affine: its tangent pads with 0), so its tangent is the op applied to the tangent.
// Batching puts the batch axis in front and extends each shape attribute by it.
#include "minigrad/ir/ops/transforms.hpp"

namespace mg::ir::xf {

namespace {
I64List prepend(std::int64_t first, const I64List& rest) {
  I64List out{first};
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}
}  // namespace

void register_shape_transforms() {
  for (const char* name : {"reshape", "squeeze", "unsqueeze", "permute", "broadcast_to", "slice", "concat", "flip"})
    defined_op(name).jvp = jvp_linear();
  defined_op("pad").jvp = [](const JvpArgs& a) -> Value {
    if (!a.tangents[0].valid()) return {};
    return make_op(*a.node.op, {a.tangents[0]}, with(a.node.attrs, "value", 0.0));
  };

  for (const char* name : {"squeeze", "unsqueeze", "flip"}) defined_op(name).batch = batch_axes();
  defined_op("concat").batch = batch_axis();
  defined_op("reshape").batch = [](const BatchArgs& a) {
    return rebuild(a, {to_front(a, 0)}, with(a.node.attrs, "shape", prepend(a.size, a.node.attrs.list("shape"))));
  };
  defined_op("permute").batch = [](const BatchArgs& a) -> Batched {
    Value x = to_front(a, 0);
    const I64List perm = prepend(0, shifted(a.node.attrs.list("perm")));
    // A batched product, transposed (per-example weight gradients of a Linear: (x^T g)^T):
    // the product of the transposes, which the GEMM reads in place, instead of a strided
    // copy of the whole [B, m, n] result.
    const Node& n = x.node();
    bool swap_last2 = perm.size() >= 3;
    for (std::size_t d = 0; swap_last2 && d + 2 < perm.size(); ++d) swap_last2 = perm[d] == static_cast<std::int64_t>(d);
    const auto r = static_cast<std::int64_t>(perm.size());
    swap_last2 = swap_last2 && perm[r - 2] == r - 1 && perm[r - 1] == r - 2;
    if (swap_last2 && n.kind == NodeKind::op && n.op == &op("matmul") && is_float(n.type.dtype)) {
      Graph& g = *x.graph;
      return {matmul(transpose_last2(g.value(n.inputs[1])), transpose_last2(g.value(n.inputs[0]))), 0};
    }
    return rebuild(a, {x}, with(a.node.attrs, "perm", perm));
  };
  defined_op("broadcast_to").batch = [](const BatchArgs& a) {
    // Broadcasting aligns from the right: give x the target's rank first, so the batch
    // axis stays in front.
    Value x = to_front(a, 0);
    const I64List& target = a.node.attrs.list("shape");
    Shape s = x.shape();
    s.insert(s.begin() + 1, target.size() + 1 - s.size(), 1);
    return rebuild(a, {reshape(x, s)}, with(a.node.attrs, "shape", prepend(a.size, target)));
  };
  defined_op("slice").batch = [](const BatchArgs& a) {
    Attrs at = with(a.node.attrs, "starts", prepend(0, a.node.attrs.list("starts")));
    at = with(at, "stops", prepend(a.size, a.node.attrs.list("stops")));
    at = with(at, "steps", prepend(1, a.node.attrs.list("steps")));
    return rebuild(a, {to_front(a, 0)}, at);
  };
  defined_op("pad").batch = [](const BatchArgs& a) {
    Attrs at = a.node.attrs;
    for (const char* k : {"low", "high", "interior"}) at = with(at, k, prepend(0, a.node.attrs.list(k)));
    return rebuild(a, {to_front(a, 0)}, at);
  };
}

}  // namespace mg::ir::xf
