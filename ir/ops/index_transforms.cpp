// jvp and batch columns of the index family (ir/ops/index.cpp). All are linear in their
// float operands. Batching: operands in front, axis + 1; a batched 1-D index of
// index_select / index_add (one index list per example) becomes a gather / scatter_add
// with the index broadcast over the other axes.
#include "minigrad/ir/ops/transforms.hpp"

namespace mg::ir::xf {

namespace {
// A batched 1-D index [B, K] as a full index of `shape` = [B, ..., K (at axis), ...].
Value full_index(Value index, const Shape& shape, std::int64_t axis) {
  Shape s(shape.size(), 1);
  s[0] = index.shape()[0];
  s[static_cast<std::size_t>(axis)] = index.shape()[1];
  return broadcast_to(reshape(index, s), shape);
}
}  // namespace

void register_index_transforms() {
  for (const char* name : {"gather", "scatter_add", "index_select", "index_add", "cumsum"})
    defined_op(name).jvp = jvp_linear();
  for (const char* name : {"gather", "scatter_add", "cumsum"}) defined_op(name).batch = batch_axis();
  defined_op("one_hot").batch = batch_elementwise();

  defined_op("index_select").batch = [](const BatchArgs& a) -> Batched {
    const std::int64_t axis = a.node.attrs.i64("axis") + 1;
    Value x = to_front(a, 0);
    if (a.axes[1] < 0) return rebuild(a, {x, a.in[1]}, with(a.node.attrs, "axis", axis));
    Shape out = a.node.type.shape;
    out.insert(out.begin(), a.size);
    return {gather(x, full_index(to_front(a, 1), out, axis), axis), 0};
  };
  defined_op("index_add").batch = [](const BatchArgs& a) -> Batched {
    const std::int64_t axis = a.node.attrs.i64("axis") + 1;
    Value base = to_front(a, 0), src = to_front(a, 2);
    if (a.axes[1] < 0) return rebuild(a, {base, a.in[1], src}, with(a.node.attrs, "axis", axis));
    return {scatter_add(base, full_index(to_front(a, 1), src.shape(), axis), src, axis), 0};
  };
}

}  // namespace mg::ir::xf
