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

  for (const char* name : {"softmax", "log_softmax", "argmax", "argmin"}) defined_op(name).batch = batch_axis();
  defined_op("softmax").jvp = [](const JvpArgs& a) -> Value {  // y (t - sum(y t))
    if (!a.tangents[0].valid()) return {};
    Value y = a.out, t = a.tangents[0];
    return mul(y, sub(t, sum_along(mul(y, t), a.node.attrs.i64("axis"))));
  };
  defined_op("log_softmax").jvp = [](const JvpArgs& a) -> Value {  // t - sum(softmax t)
    if (!a.tangents[0].valid()) return {};
    Value t = a.tangents[0];
    return sub(t, sum_along(mul(exp(a.out), t), a.node.attrs.i64("axis")));
  };
}

}  // namespace mg::ir::xf
