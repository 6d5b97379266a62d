// The family defaults of the jvp and batch columns (transforms.hpp), and the one call that
// fills both columns after every family has registered its entries.
#include "minigrad/ir/ops/transforms.hpp"

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/families.hpp"

namespace mg::ir::xf {

Value add_tangents(Value a, Value b) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  return add(a, b);
}

Value tangent_or_zeros(Value t, Value like) { return t.valid() ? t : zeros_like(like); }

JvpFn jvp_diagonal() {
  return [](const JvpArgs& a) {
    Value sum;
    for (std::size_t k = 0; k < a.in.size(); ++k) {
      if (!a.tangents[k].valid()) continue;
      MG_ASSERT(a.tangents[k].type() == a.out.type(), "jvp_diagonal: operand type differs from the output's");
      std::vector<Value> gs = a.node.op->vjp(VjpArgs{a.node, a.out, a.in, a.tangents[k]});
      sum = add_tangents(sum, gs[k]);
    }
    return sum;
  };
}

JvpFn jvp_linear() {
  return [](const JvpArgs& a) {
    bool any = false;
    std::vector<Value> in(a.in.begin(), a.in.end());
    for (std::size_t k = 0; k < in.size(); ++k) {
      if (!is_float(in[k].dtype())) continue;
      any = any || a.tangents[k].valid();
      in[k] = tangent_or_zeros(a.tangents[k], in[k]);
    }
    if (!any) return Value{};
    return make_op(*a.node.op, std::move(in), a.node.attrs);
  };
}

JvpFn jvp_multilinear() {
  return [](const JvpArgs& a) {
    Value sum;
    for (std::size_t k = 0; k < a.in.size(); ++k) {
      if (!a.tangents[k].valid()) continue;
      std::vector<Value> in(a.in.begin(), a.in.end());
      in[k] = a.tangents[k];
      sum = add_tangents(sum, make_op(*a.node.op, std::move(in), a.node.attrs));
    }
    return sum;
  };
}

JvpFn jvp_reduction() {
  return [](const JvpArgs& a) {
    if (!a.tangents[0].valid()) return Value{};
    Value d = a.node.op->vjp(VjpArgs{a.node, a.out, a.in, full_like(a.out, 1.0)})[0];
    return reduce_sum(mul(a.tangents[0], d), a.node.attrs.list("axes"), a.node.attrs.boolean("keepdim"));
  };
}

Value move_to_front(Value v, int axis) {
  if (axis == 0) return v;
  I64List perm{axis};
  for (int d = 0; d < v.rank(); ++d)
    if (d != axis) perm.push_back(d);
  return permute(v, perm);
}

Value to_front(const BatchArgs& a, std::size_t k) {
  if (a.axes[k] >= 0) return move_to_front(a.in[k], a.axes[k]);
  Shape s = a.in[k].shape();
  s.insert(s.begin(), a.size);
  return broadcast_to(a.in[k], s);  // numpy broadcasting aligns from the right
}

std::vector<Value> all_to_front(const BatchArgs& a) {
  std::vector<Value> in;
  for (std::size_t k = 0; k < a.in.size(); ++k) in.push_back(to_front(a, k));
  return in;
}

Batched rebuild(const BatchArgs& a, std::vector<Value> in, Attrs attrs) {
  return {make_op(*a.node.op, std::move(in), std::move(attrs)), 0};
}

I64List shifted(const I64List& axes) {
  I64List out;
  for (auto x : axes) out.push_back(x + 1);
  return out;
}

Attrs with(Attrs attrs, const std::string& name, AttrValue v) {
  attrs.set(name, std::move(v));
  return attrs;
}

BatchFn batch_elementwise() {
  return [](const BatchArgs& a) { return rebuild(a, all_to_front(a), a.node.attrs); };
}

BatchFn batch_axes() {
  return [](const BatchArgs& a) {
    return rebuild(a, all_to_front(a), with(a.node.attrs, "axes", shifted(a.node.attrs.list("axes"))));
  };
}

BatchFn batch_axis() {
  return [](const BatchArgs& a) {
    return rebuild(a, all_to_front(a), with(a.node.attrs, "axis", a.node.attrs.i64("axis") + 1));
  };
}

BatchFn batch_merge_n() {
  return [](const BatchArgs& a) {
    std::vector<Value> in;
    for (std::size_t k = 0; k < a.in.size(); ++k) {
      Value v = to_front(a, k);
      Shape s(v.shape().begin() + 1, v.shape().end());
      s[0] *= a.size;
      in.push_back(reshape(v, s));
    }
    Value out = make_op(*a.node.op, std::move(in), a.node.attrs);
    Shape s = a.node.type.shape;
    s.insert(s.begin(), a.size);
    return Batched{reshape(out, s), 0};
  };
}

}  // namespace mg::ir::xf

namespace mg::ir {

void register_transform_rules() {
  xf::register_elementwise_transforms();
  xf::register_reduce_transforms();
  xf::register_shape_transforms();
  xf::register_index_transforms();
  xf::register_linalg_nn_transforms();
  xf::register_creation_transforms();
  xf::register_loop_transforms();
}

}  // namespace mg::ir
