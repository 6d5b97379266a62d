// jvp and batch columns of the reductions and the softmax family (ir/ops/reduce.cpp,
// softmax.cpp). Batching shifts the reduced axes past the batch axis in front.
#include "minigrad/ir/ops/transforms.hpp"

namespace mg::ir::xf {

namespace {
// sum(v, axis) with keepdim, broadcast back to v's shape.
Value sum_along(Value v, std::int64_t axis) { return broadcast_to(reduce_sum(v, {axis}, true), v.shape()); }
}  // namespace

void register_reduce_transforms() {
  for (const char* name : {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "var", "logsumexp"})
    defined_op(name).batch = batch_axes();
  defined_op("reduce_sum").jvp = jvp_linear();
  defined_op("reduce_mean").jvp = jvp_linear();
  for (const char* name : {"reduce_max", "reduce_min", "reduce_prod", "var", "logsumexp"})
    defined_op(name).jvp = jvp_reduction();

  for (const char* name : {"softmax", "log_softmax", "argmax", "argmin", "softmax_grad"})
    defined_op(name).batch = batch_axis();
  defined_op("softmax").jvp = [](const JvpArgs& a) -> Value {  // y (t - sum(y t))
    if (!a.tangents[0].valid()) return {};
    return make_op(op("softmax_grad"), {a.out, a.tangents[0]}, a.node.attrs);
  };
  // out = y (g - s), s = sum(g y): dy (g - s) - y sum(g dy) + softmax_grad(y, dg).
  defined_op("softmax_grad").jvp = [](const JvpArgs& a) -> Value {
    const std::int64_t axis = a.node.attrs.i64("axis");
    Value y = a.in[0], g = a.in[1], dy = a.tangents[0], dg = a.tangents[1], t;
    if (dy.valid()) t = sub(mul(dy, sub(g, sum_along(mul(g, y), axis))), mul(y, sum_along(mul(g, dy), axis)));
    if (dg.valid()) {
      Value from_g = make_op(op("softmax_grad"), {y, dg}, a.node.attrs);
      t = t.valid() ? add(t, from_g) : from_g;
    }
    return t;
  };
  defined_op("log_softmax").jvp = [](const JvpArgs& a) -> Value {  // t - sum(softmax t)
    if (!a.tangents[0].valid()) return {};
    Value t = a.tangents[0];
    return sub(t, sum_along(mul(exp(a.out), t), a.node.attrs.i64("axis")));
  };
}

}  // namespace mg::ir::xf
