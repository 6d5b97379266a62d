// jvp and batch columns of matmul (ir/ops/linalg.cpp) and the conv/pool family
// (ir/ops/nn.cpp). matmul and the convolutions are bilinear; max pooling's tangent is the
// tangent read at each window's argmax (max_pool2d_select), average pooling is linear.
// Batching: an unbatched weight with batched data folds the batch into the data's leading
// dimension (one GEMM / one conv over B*N); a batched weight (per-example weights, as in
// per-sample gradients) becomes B groups of a grouped convolution.
#include "minigrad/ir/ops/transforms.hpp"

namespace mg::ir::xf {

namespace {

// `from`'s attributes that `target` takes (an op's VJP partner may take fewer).
Attrs attrs_for(const OpDef& target, const Attrs& from) {
  Attrs out;
  for (auto& spec : target.attrs)
    if (const AttrValue* v = from.find(spec.name)) out.set(spec.name, *v);
  return out;
}

Value pool_op(const char* name, const JvpArgs& a, std::vector<Value> in) {
  const OpDef& d = op(name);
  return make_op(d, std::move(in), attrs_for(d, a.node.attrs));
}

// [B, N, C, ...] -> [N, B*C, ...]: the batch as groups of channels.
Value batch_as_channels(Value v) {
  Value t = permute(v, [&] {
    I64List p{1, 0};
    for (int d = 2; d < v.rank(); ++d) p.push_back(d);
    return p;
  }());
  Shape s(t.shape().begin() + 1, t.shape().end());
  s[0] = t.shape()[0];
  s[1] *= t.shape()[1];
  return reshape(t, s);
}
// [B, O, ...] -> [B*O, ...].
Value merge_front(Value v) {
  Shape s(v.shape().begin() + 1, v.shape().end());
  s[0] *= v.shape()[0];
  return reshape(v, s);
}
// [N, B*C, ...] -> [N, B, C, ...] (batch axis 1).
Batched split_channels(Value v, std::int64_t b) {
  Shape s = v.shape();
  s.insert(s.begin() + 1, b);
  s[2] /= b;
  return {reshape(v, s), 1};
}
Attrs grouped(const Attrs& attrs, std::int64_t b) { return with(attrs, "groups", attrs.i64("groups") * b); }

Batched batch_matmul(const BatchArgs& a) {
  const Value x = a.in[0], y = a.in[1];
  if (a.axes[1] < 0 && y.rank() == 2 && y.shape()[0] > 0) {  // [B, ..., m, k] @ [k, n]: one GEMM over B*...*m rows
    Value xf = to_front(a, 0);
    const std::int64_t k = y.shape()[0];
    Value out = matmul(reshape(xf, {xf.type().numel() / k, k}), y);
    Shape s = a.node.type.shape;
    s.insert(s.begin(), a.size);
    return {reshape(out, s), 0};
  }
  if (a.axes[0] < 0 && x.rank() == 2 && y.rank() == 3) {  // [m, k] @ [B, k, n] as [m, k] @ [k, B*n]
    Value yb = to_front(a, 1);
    const std::int64_t k = yb.shape()[1], n = yb.shape()[2];
    Value out = matmul(x, reshape(permute(yb, {1, 0, 2}), {k, a.size * n}));
    return {reshape(out, {x.shape()[0], a.size, n}), 1};
  }
  return rebuild(a, all_to_front(a), a.node.attrs);
}

}  // namespace

void register_linalg_nn_transforms() {
  OpDef& mm = defined_op("matmul");
  mm.jvp = jvp_multilinear();
  mm.batch = batch_matmul;

  for (const char* name : {"conv2d", "conv2d_input_grad", "conv2d_weight_grad"}) defined_op(name).jvp = jvp_multilinear();
  // conv2d(x, w) and conv2d_input_grad(g, w): data batched alone -> merge B into N; a
  // batched weight -> B groups.
  for (const char* name : {"conv2d", "conv2d_input_grad"}) {
    defined_op(name).batch = [](const BatchArgs& a) -> Batched {
      if (a.axes[1] < 0) {  // [B, N, ...] -> [B*N, ...], the op, and back
        Value out = make_op(*a.node.op, {merge_front(to_front(a, 0)), a.in[1]}, a.node.attrs);
        Shape s = a.node.type.shape;
        s.insert(s.begin(), a.size);
        return Batched{reshape(out, s), 0};
      }
      Value data = batch_as_channels(to_front(a, 0)), w = merge_front(to_front(a, 1));
      return split_channels(make_op(*a.node.op, {data, w}, grouped(a.node.attrs, a.size)), a.size);
    };
  }
  defined_op("conv2d_weight_grad").batch = [](const BatchArgs& a) -> Batched {
    // Per-example weight gradients: B groups, dw' = [B*O, C/g, kh, kw].
    Value x = batch_as_channels(to_front(a, 0)), g = batch_as_channels(to_front(a, 1));
    Value dw = make_op(*a.node.op, {x, g}, grouped(a.node.attrs, a.size));
    Shape s = a.node.type.shape;
    s.insert(s.begin(), a.size);
    return {reshape(dw, s), 0};
  };

  for (const char* name : {"max_pool2d", "max_pool2d_grad", "max_pool2d_select", "avg_pool2d", "avg_pool2d_grad"})
    defined_op(name).batch = batch_merge_n();
  defined_op("avg_pool2d").jvp = jvp_linear();
  defined_op("avg_pool2d_grad").jvp = jvp_linear();
  // The argmax is piecewise constant in x: only the tangent of the selected values moves.
  defined_op("max_pool2d").jvp = [](const JvpArgs& a) -> Value {
    if (!a.tangents[0].valid()) return {};
    return pool_op("max_pool2d_select", a, {a.in[0], a.tangents[0]});
  };
  defined_op("max_pool2d_grad").jvp = [](const JvpArgs& a) -> Value {
    if (!a.tangents[1].valid()) return {};
    return pool_op("max_pool2d_grad", a, {a.in[0], a.tangents[1]});
  };
  defined_op("max_pool2d_select").jvp = [](const JvpArgs& a) -> Value {
    if (!a.tangents[1].valid()) return {};
    return pool_op("max_pool2d_select", a, {a.in[0], a.tangents[1]});
  };
}

}  // namespace mg::ir::xf
