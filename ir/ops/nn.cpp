// The nn family, convolution: conv2d (NCHW, f32/f64) with its adjoint ops. Every VJP is
// another op of this family, so gradients of any order stay closed in it:
//   conv2d(x,w), conv2d_input_grad(g,w), conv2d_weight_grad(x,g) are the three partial
//   derivatives of one trilinear form T(x,w,g) = <g, conv2d(x,w)>; each one's VJP is the
//   other two. Kernels live in nn_conv_kernels.cpp; pooling is in nn_pool.cpp.
#include "minigrad/ir/ops/nn.hpp"

#include <algorithm>

#include "minigrad/ir/ops/families.hpp"
#include "minigrad/ir/ops/nn_conv_c99.hpp"
#include "minigrad/ir/ops/nn_kernels.hpp"
#include "minigrad/ir/ops/nn_rules.hpp"

namespace mg::ir {

namespace {

using namespace rules;
using nn::conv_out_size;
using nn::f64_4d;
using nn::pair_attr;
using nn::plus;
using nn::require_nchw;
using nn::require_same_dtype;
using nn::spatial;
using nn::with;

// ---- attributes -----------------------------------------------------------------------

Attrs conv_attrs(const Attrs& a) {
  return {{"stride", a.list("stride")}, {"padding", a.list("padding")},
          {"dilation", a.list("dilation")}, {"groups", a.i64("groups")}};
}
std::vector<AttrSpec> conv_schema() {
  return {{"stride", AttrKind::i64_list, AttrValue{I64List{1, 1}}},
          {"padding", AttrKind::i64_list, AttrValue{I64List{0, 0}}},
          {"dilation", AttrKind::i64_list, AttrValue{I64List{1, 1}}},
          {"groups", AttrKind::i64, AttrValue{std::int64_t{1}}}};
}

// ---- shape rules ----------------------------------------------------------------------

// Validates x[N,C,H,W], w[O,C/groups,kh,kw] and the conv attrs; returns y's shape.
Shape conv_shape(const Shape& x, const Shape& w, const Attrs& attrs) {
  const I64List& s = pair_attr(attrs, "stride", 1);
  const I64List& p = pair_attr(attrs, "padding", 0);
  const I64List& d = pair_attr(attrs, "dilation", 1);
  const std::int64_t groups = attrs.i64("groups");
  require(groups >= 1, "expects groups >= 1");
  require(x[1] % groups == 0, "expects input channels (" + std::to_string(x[1]) +
                                  ") divisible by groups (" + std::to_string(groups) + ")");
  require(w[0] % groups == 0, "expects output channels (" + std::to_string(w[0]) +
                                  ") divisible by groups (" + std::to_string(groups) + ")");
  require(w[1] == x[1] / groups, "expects weight[O, C/groups, kh, kw] with C/groups = " +
                                     std::to_string(x[1] / groups));
  require(w[2] >= 1 && w[3] >= 1, "expects a kernel of at least 1x1");
  const std::int64_t ho = conv_out_size(x[2], w[2], s[0], p[0], d[0]);
  const std::int64_t wo = conv_out_size(x[3], w[3], s[1], p[1], d[1]);
  require(ho >= 1 && wo >= 1, "expects a positive output size: the dilated kernel is larger than the padded input");
  // The kernels index an unfolded [C/groups*kh*kw, Ho*Wo] matrix per image: it must be addressable.
  checked_mul(checked_mul(checked_mul(checked_mul(w[1], w[2]), w[3]), ho), wo);
  return {x[0], w[0], ho, wo};
}

Type conv2d_infer(std::span<const Type> in, const Attrs& attrs) {
  require_nchw(in[0], "x");
  require_nchw(in[1], "weight");
  require_same_dtype(in[0], in[1]);
  return Type{in[0].dtype, conv_shape(in[0].shape, in[1].shape, attrs)};
}

// (g, w) -> dx[N, C, H, W] with [H, W] = input_size.
Type conv2d_input_grad_infer(std::span<const Type> in, const Attrs& attrs) {
  const Type& g = in[0];
  const Type& w = in[1];
  require_nchw(g, "g");
  require_nchw(w, "weight");
  require_same_dtype(g, w);
  const I64List& hw = pair_attr(attrs, "input_size", 0);
  const Shape x{g.shape[0], w.shape[1] * std::max<std::int64_t>(attrs.i64("groups"), 1), hw[0], hw[1]};
  require(conv_shape(x, w.shape, attrs) == g.shape,
          "expects g shaped like conv2d's output " + to_string(conv_shape(x, w.shape, attrs)) +
              " for an input of shape " + to_string(x));
  return Type{g.dtype, x};
}

// (x, g) -> dw[O, C/groups, kh, kw] with [kh, kw] = kernel_size.
Type conv2d_weight_grad_infer(std::span<const Type> in, const Attrs& attrs) {
  const Type& x = in[0];
  const Type& g = in[1];
  require_nchw(x, "x");
  require_nchw(g, "g");
  require_same_dtype(x, g);
  const I64List& k = pair_attr(attrs, "kernel_size", 1);
  const std::int64_t groups = std::max<std::int64_t>(attrs.i64("groups"), 1);
  const Shape w{g.shape[1], x.shape[1] / groups, k[0], k[1]};
  require(conv_shape(x.shape, w, attrs) == g.shape,
          "expects g shaped like conv2d's output " + to_string(conv_shape(x.shape, w, attrs)));
  return Type{x.dtype, w};
}

// ---- test cases -----------------------------------------------------------------------

Attrs conv_case(I64List stride, I64List padding, I64List dilation, std::int64_t groups) {
  return {{"stride", stride}, {"padding", padding}, {"dilation", dilation}, {"groups", groups}};
}

// ---- C99 emission ----------------------------------------------------------------------
// im2col into the arena scratch and our packed GEMM (nn_conv_c99.cpp). Without planned
// scratch (or for empty dimensions): direct loop nests, one output element per iteration
// so every loop parallelises without races; accumulation in the element type.

std::vector<std::pair<std::string, std::string>> conv_keys(const nn::ConvGeom& g, const CLoopArgs& a) {
  auto S = [](std::int64_t v) { return std::to_string(v); };
  // Longer keys first: $Ho before $H.
  return {{"$OUT", a.out}, {"$Ho", S(g.Ho)}, {"$Wo", S(g.Wo)}, {"$Cg", S(g.C / g.G)}, {"$Og", S(g.O / g.G)}, {"$N", S(g.N)},
          {"$C", S(g.C)}, {"$H", S(g.H)}, {"$W", S(g.W)}, {"$O", S(g.O)}, {"$kh", S(g.kh)}, {"$kw", S(g.kw)},
          {"$sh", S(g.sh)}, {"$sw", S(g.sw)}, {"$ph", S(g.ph)}, {"$pw", S(g.pw)}, {"$dh", S(g.dh)},
          {"$dw", S(g.dw)}, {"$T", c_type(a.node.type.dtype)}};
}

void c_conv_loop(const CLoopArgs& a, const nn::ConvGeom& g, std::int64_t count, const std::string& body) {
  if (count == 0) return;
  c_for(a.w, "t", count, count * g.kh * g.kw * (g.C / g.G), false);
  a.w.raw(nn::c_fill(body, conv_keys(g, a)));
  a.w.close();
}

EmitC c_conv2d() {
  EmitC e = c_loops([](const CLoopArgs& a) {
    if (nn::emit_conv_c99(nn::ConvOp::forward, a)) return;
    const nn::ConvGeom g = nn::conv_geom(a.in_types[0].shape, a.in_types[1].shape, a.node.type.shape, a.node.attrs);
    c_conv_loop(a, g, a.node.type.numel(),
                "    const int64_t n = t / ($O * $Ho * $Wo), o = (t / ($Ho * $Wo)) % $O, i = (t / $Wo) % $Ho, j = t % $Wo;\n"
                "    const int64_t c0 = (o / $Og) * $Cg;\n    $T acc = 0;\n"
                "    for (int64_t c = 0; c < $Cg; ++c)\n      for (int64_t p = 0; p < $kh; ++p) {\n"
                "        const int64_t h = i * $sh - $ph + p * $dh;\n        if (h < 0 || h >= $H) continue;\n"
                "        for (int64_t q = 0; q < $kw; ++q) {\n          const int64_t w = j * $sw - $pw + q * $dw;\n"
                "          if (w >= 0 && w < $W) acc += " + a.in[0] + "[((n * $C + c0 + c) * $H + h) * $W + w] * " + a.in[1] +
                "[((o * $Cg + c) * $kh + p) * $kw + q];\n        }\n      }\n    $OUT[t] = acc;\n");
  });
  e.scratch = [](const Node& n, std::span<const Type> in) { return nn::conv_c99_scratch(nn::ConvOp::forward, n, in); };
  return e;
}

EmitC c_conv2d_input_grad() {
  EmitC e = c_loops([](const CLoopArgs& a) {
    if (nn::emit_conv_c99(nn::ConvOp::input_grad, a)) return;
    const nn::ConvGeom g = nn::conv_geom(a.node.type.shape, a.in_types[1].shape, a.in_types[0].shape, a.node.attrs);
    c_conv_loop(a, g, a.node.type.numel(),
                "    const int64_t n = t / ($C * $H * $W), ch = (t / ($H * $W)) % $C, h = (t / $W) % $H, w = t % $W;\n"
                "    const int64_t o0 = (ch / $Cg) * $Og, c = ch % $Cg;\n    $T acc = 0;\n"
                "    for (int64_t p = 0; p < $kh; ++p) {\n      const int64_t hn = h + $ph - p * $dh;\n"
                "      if (hn < 0 || hn % $sh != 0 || hn / $sh >= $Ho) continue;\n"
                "      for (int64_t q = 0; q < $kw; ++q) {\n        const int64_t wn = w + $pw - q * $dw;\n"
                "        if (wn < 0 || wn % $sw != 0 || wn / $sw >= $Wo) continue;\n"
                "        for (int64_t o = o0; o < o0 + $Og; ++o) acc += " + a.in[0] +
                "[((n * $O + o) * $Ho + hn / $sh) * $Wo + wn / $sw] * " + a.in[1] + "[((o * $Cg + c) * $kh + p) * $kw + q];\n"
                "      }\n    }\n    $OUT[t] = acc;\n");
  });
  e.scratch = [](const Node& n, std::span<const Type> in) { return nn::conv_c99_scratch(nn::ConvOp::input_grad, n, in); };
  return e;
}

EmitC c_conv2d_weight_grad() {
  EmitC e = c_loops([](const CLoopArgs& a) {
    if (nn::emit_conv_c99(nn::ConvOp::weight_grad, a)) return;
    const nn::ConvGeom g = nn::conv_geom(a.in_types[0].shape, a.node.type.shape, a.in_types[1].shape, a.node.attrs);
    c_conv_loop(a, g, a.node.type.numel(),
                "    const int64_t o = t / ($Cg * $kh * $kw), c = (t / ($kh * $kw)) % $Cg, p = (t / $kw) % $kh, q = t % $kw;\n"
                "    const int64_t ch = (o / $Og) * $Cg + c;\n    $T acc = 0;\n"
                "    for (int64_t n = 0; n < $N; ++n)\n      for (int64_t i = 0; i < $Ho; ++i) {\n"
                "        const int64_t h = i * $sh - $ph + p * $dh;\n        if (h < 0 || h >= $H) continue;\n"
                "        for (int64_t j = 0; j < $Wo; ++j) {\n          const int64_t w = j * $sw - $pw + q * $dw;\n"
                "          if (w >= 0 && w < $W) acc += " + a.in[0] + "[((n * $C + ch) * $H + h) * $W + w] * " + a.in[1] +
                "[((n * $O + o) * $Ho + i) * $Wo + j];\n        }\n      }\n    $OUT[t] = acc;\n");
  });
  e.scratch = [](const Node& n, std::span<const Type> in) { return nn::conv_c99_scratch(nn::ConvOp::weight_grad, n, in); };
  return e;
}

}  // namespace

// ---- typed builders (nn.hpp) ----------------------------------------------------------

namespace {
Attrs attrs_of(const Conv2dParams& p) { return conv_case(p.stride, p.padding, p.dilation, p.groups); }
}  // namespace

Value conv2d(Value x, Value w, const Conv2dParams& p) { return make_op("conv2d", {x, w}, attrs_of(p)); }
Value conv2d_input_grad(Value g, Value w, const Conv2dParams& p, I64List input_size) {
  return make_op("conv2d_input_grad", {g, w}, with(attrs_of(p), "input_size", std::move(input_size)));
}
Value conv2d_weight_grad(Value x, Value g, const Conv2dParams& p, I64List kernel_size) {
  return make_op("conv2d_weight_grad", {x, g}, with(attrs_of(p), "kernel_size", std::move(kernel_size)));
}
// ---- registry entries -----------------------------------------------------------------

void register_nn_ops() {
  // T(x, w, g) = <g, conv2d(x, w)>: conv2d = dT/dg, input_grad = dT/dx, weight_grad = dT/dw.
  OpDef& conv = define_op("conv2d");
  conv.doc =
      "x[N,C,H,W] (*) w[O,C/groups,kh,kw] -> [N,O,Ho,Wo], Ho = floor((H + 2ph - dh(kh-1) - 1)/sh) + 1; "
      "cross-correlation with zero padding, as PyTorch's conv2d without bias; f32/f64";
  conv.arity = 2;
  conv.attrs = conv_schema();
  conv.infer = conv2d_infer;
  conv.kernel = nn::conv2d_kernel;
  conv.emit_c = c_conv2d();
  conv.vjp = [](const VjpArgs& a) {
    const Attrs c = conv_attrs(a.node.attrs);
    const Value x = a.in[0], w = a.in[1], dy = a.cotangent;
    return grads({make_op("conv2d_input_grad", {dy, w}, with(c, "input_size", spatial(x))),
                  make_op("conv2d_weight_grad", {x, dy}, with(c, "kernel_size", spatial(w)))});
  };
  conv.test.cases = {
      {{f64_4d(2, 3, 5, 5), f64_4d(4, 3, 3, 3)}, conv_case({1, 1}, {1, 1}, {1, 1}, 1)},
      {{f64_4d(2, 2, 7, 7), f64_4d(3, 2, 2, 2)}, conv_case({2, 2}, {0, 0}, {2, 2}, 1)},
      {{f64_4d(1, 3, 4, 4), f64_4d(3, 1, 2, 2)}, conv_case({1, 1}, {0, 0}, {1, 1}, 3)},
      {{f64_4d(1, 4, 5, 6), f64_4d(4, 2, 3, 2)}, conv_case({2, 1}, {1, 0}, {1, 2}, 2)},
      {{f64_4d(1, 2, 8, 8), f64_4d(3, 2, 1, 1)}, conv_case({1, 1}, {0, 0}, {1, 1}, 1)},  // pointwise path
      {{f64_4d(1, 1, 1, 1), f64_4d(1, 1, 1, 1)}, conv_case({1, 1}, {0, 0}, {1, 1}, 1)},
      // "same" with dilation: im2col's one-copy path, rows and columns read from the padding
      {{f64_4d(2, 2, 5, 6), f64_4d(2, 1, 3, 3)}, conv_case({1, 1}, {2, 2}, {2, 2}, 2)},
  };

  OpDef& cin = define_op("conv2d_input_grad");
  cin.doc =
      "g[N,O,Ho,Wo], w[O,C/groups,kh,kw] -> dx[N,C,H,W] with [H,W] = input_size: the adjoint of conv2d in x "
      "(transposed conv); input rows/columns no window reaches get 0; f32/f64";
  cin.arity = 2;
  cin.attrs = plus(conv_schema(), {"input_size", AttrKind::i64_list, std::nullopt});
  cin.infer = conv2d_input_grad_infer;
  cin.kernel = nn::conv2d_input_grad_kernel;
  cin.emit_c = c_conv2d_input_grad();
  cin.vjp = [](const VjpArgs& a) {  // <dz, input_grad(g, w)> = T(dz, w, g)
    const Attrs c = conv_attrs(a.node.attrs);
    const Value g = a.in[0], w = a.in[1], dz = a.cotangent;
    return grads({make_op("conv2d", {dz, w}, c),
                  make_op("conv2d_weight_grad", {dz, g}, with(c, "kernel_size", spatial(w)))});
  };
  cin.test.cases = {
      {{f64_4d(2, 4, 5, 5), f64_4d(4, 3, 3, 3)},
       with(conv_case({1, 1}, {1, 1}, {1, 1}, 1), "input_size", I64List{5, 5})},
      {{f64_4d(2, 3, 3, 3), f64_4d(3, 2, 2, 2)},  // the last input row and column are never read
       with(conv_case({2, 2}, {0, 0}, {2, 2}, 1), "input_size", I64List{8, 8})},
      {{f64_4d(1, 3, 3, 3), f64_4d(3, 1, 2, 2)},
       with(conv_case({1, 1}, {0, 0}, {1, 1}, 3), "input_size", I64List{4, 4})},
      {{f64_4d(1, 4, 3, 4), f64_4d(4, 2, 3, 2)},
       with(conv_case({2, 1}, {1, 0}, {1, 2}, 2), "input_size", I64List{5, 6})},
      {{f64_4d(1, 3, 8, 8), f64_4d(3, 2, 1, 1)},
       with(conv_case({1, 1}, {0, 0}, {1, 1}, 1), "input_size", I64List{8, 8})},
      {{f64_4d(2, 2, 5, 6), f64_4d(2, 1, 3, 3)},
       with(conv_case({1, 1}, {2, 2}, {2, 2}, 2), "input_size", I64List{5, 6})},
  };

  OpDef& cw = define_op("conv2d_weight_grad");
  cw.doc =
      "x[N,C,H,W], g[N,O,Ho,Wo] -> dw[O,C/groups,kh,kw] with [kh,kw] = kernel_size: the adjoint of conv2d "
      "in w (summed over the batch; zeros for N = 0); f32/f64";
  cw.arity = 2;
  cw.attrs = plus(conv_schema(), {"kernel_size", AttrKind::i64_list, std::nullopt});
  cw.infer = conv2d_weight_grad_infer;
  cw.kernel = nn::conv2d_weight_grad_kernel;
  cw.emit_c = c_conv2d_weight_grad();
  cw.vjp = [](const VjpArgs& a) {  // <du, weight_grad(x, g)> = T(x, du, g)
    const Attrs c = conv_attrs(a.node.attrs);
    const Value x = a.in[0], g = a.in[1], du = a.cotangent;
    return grads({make_op("conv2d_input_grad", {g, du}, with(c, "input_size", spatial(x))),
                  make_op("conv2d", {x, du}, c)});
  };
  cw.test.cases = {
      {{f64_4d(2, 3, 5, 5), f64_4d(2, 4, 5, 5)},
       with(conv_case({1, 1}, {1, 1}, {1, 1}, 1), "kernel_size", I64List{3, 3})},
      {{f64_4d(2, 2, 8, 8), f64_4d(2, 3, 3, 3)},
       with(conv_case({2, 2}, {0, 0}, {2, 2}, 1), "kernel_size", I64List{2, 2})},
      {{f64_4d(1, 4, 5, 6), f64_4d(1, 4, 3, 4)},
       with(conv_case({2, 1}, {1, 0}, {1, 2}, 2), "kernel_size", I64List{3, 2})},
      {{f64_4d(2, 2, 8, 8), f64_4d(2, 3, 8, 8)},
       with(conv_case({1, 1}, {0, 0}, {1, 1}, 1), "kernel_size", I64List{1, 1})},
      {{f64_4d(2, 2, 5, 6), f64_4d(2, 2, 5, 6)},
       with(conv_case({1, 1}, {2, 2}, {2, 2}, 2), "kernel_size", I64List{3, 3})},
  };
}

}  // namespace mg::ir
