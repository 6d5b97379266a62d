// The C99 text of a fused node's elementwise body (fused_body.hpp: c_body, c_names), shared
// by fused.cpp's loop and fused_reduce.cpp's fold: each body op's registry expression into a
// temporary, broadcasts read through their index, uniform constants as literals.
#include <cmath>
#include <optional>

#include "minigrad/ir/ops/fused_body.hpp"

namespace mg::ir::fused {

// The C literal of a body constant whose elements are all the same finite float (the
// zeros a relu's gradient compares with, folded to a full array): read as a scalar, the
// loop indexes no array with `i % n` (a division per element, and a loop by rows).
static std::optional<std::string> c_uniform(const Node& b) {
  if (b.kind != NodeKind::constant || !b.literal || !is_float(b.type.dtype) || b.literal->numel() == 0) return {};
  const Array& a = *b.literal;
  const auto* bytes = static_cast<const unsigned char*>(a.raw());
  const std::size_t sz = size_of(a.dtype());
  for (std::int64_t e = 1; e < a.numel(); ++e)
    if (std::memcmp(bytes, bytes + static_cast<std::size_t>(e) * sz, sz) != 0) return {};
  if (!std::isfinite(a.at(0))) return {};
  return c_lit(a.at(0), a.dtype());
}

CBody c_body(const Graph& body, const BodyPlan& p, const std::vector<std::string>& name, const std::string& i,
             std::int64_t row) {
  CBody c;
  c.value.resize(body.size());
  for (NodeId id = 0; id < body.size(); ++id) {
    const Node& b = body.node(id);
    switch (p.role[id]) {
      case BodyRole::tiled: c.value[id] = c_uniform(b).value_or(name[id] + "[" + i + "]"); break;
      case BodyRole::whole:
      case BodyRole::reduce: break;
      case BodyRole::matmul: c.value[id] = name[id] + "[" + i + "]"; break;
      case BodyRole::broadcast: {
        if (auto lit = c_uniform(body.node(b.inputs[0]))) {
          c.value[id] = *lit;
          break;
        }
        const Shape& src = body.node(b.inputs[0]).type.shape;
        const std::vector<std::int64_t> st = broadcast_strides(src, p.loop.shape);
        std::string off = c_offset(i, p.loop.shape, st);
        if (row > 0) {  // rows of the last t axes (fused_row: no division inside a row)
          std::size_t t = 0;
          for (std::int64_t e = 1; e < row && t < st.size(); ++t) e *= p.loop.shape[st.size() - 1 - t];
          if (t == 0) t = 1;
          const std::size_t k = st.size() - t;
          off = c_offset("io", Shape(p.loop.shape.begin(), p.loop.shape.begin() + k), {st.begin(), st.begin() + k}) +
                " + " + c_offset("ii", Shape(p.loop.shape.begin() + k, p.loop.shape.end()), {st.begin() + k, st.end()});
        }
        c.value[id] = name[b.inputs[0]] + "[" + off + "]";
        break;
      }
      case BodyRole::compute: {
        std::vector<std::string> in;
        std::vector<DType> dts;
        for (NodeId x : b.inputs) {
          in.push_back(c.value[x]);
          dts.push_back(body.node(x).type.dtype);
        }
        const CExprArgs e{b, in, dts, b.type.dtype, i};
        const EmitC& ec = b.op->emit_c;
        const std::string t = "f" + std::to_string(id);
        c.code += "    const " + c_type(b.type.dtype) + " " + t + " = " +
                  (ec.expr_fn ? ec.expr_fn(e) : expand_c_expr(ec.expr, e)) + ";\n";
        c.value[id] = t;
        ++c.ops;
        break;
      }
    }
  }
  return c;
}

std::vector<std::string> c_names(const Graph& body, const CLoopArgs& a) {
  std::vector<std::string> name(body.size());
  const auto& ins = body.inputs();
  for (NodeId id = 0; id < body.size(); ++id) {
    const Node& b = body.node(id);
    if (b.kind == NodeKind::input)
      name[id] = a.in[static_cast<std::size_t>(std::find(ins.begin(), ins.end(), id) - ins.begin())];
    if (b.kind == NodeKind::constant && !c_uniform(b)) {
      name[id] = a.out + "_c" + std::to_string(id);
      a.support(name[id], c_array(name[id], *b.literal));
    }
  }
  return name;
}

}  // namespace mg::ir::fused
