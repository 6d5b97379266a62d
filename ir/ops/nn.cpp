// The nn family: conv2d and pooling (NCHW, f32/f64) with their adjoint ops. Every VJP is
// another op of this family, so gradients of any order stay closed in it:
//   conv2d(x,w), conv2d_input_grad(g,w), conv2d_weight_grad(x,g) are the three partial
//   derivatives of one trilinear form T(x,w,g) = <g, conv2d(x,w)>; each one's VJP is the
//   other two. max_pool2d_grad / max_pool2d_select route / pick values at each window's
//   argmax (each the other's adjoint); avg_pool2d and avg_pool2d_grad are adjoint.
// Kernels live in nn_conv_kernels.cpp and nn_pool_kernels.cpp.
#include "minigrad/ir/ops/nn.hpp"

#include <algorithm>
#include <numeric>
#include <random>

#include "minigrad/ir/ops/nn_kernels.hpp"
#include "minigrad/ir/ops/rules.hpp"

namespace mg::ir {

namespace {

using namespace rules;
using nn::conv_out_size;

// ---- attributes -----------------------------------------------------------------------

const I64List& pair_attr(const Attrs& attrs, const char* name, std::int64_t min) {
  const I64List& v = attrs.list(name);
  require(v.size() == 2, std::string("expects ") + name + " as two values [h, w]");
  require(v[0] >= min && v[1] >= min,
          std::string("expects ") + name + " >= " + std::to_string(min) + " (got " + to_string(AttrValue{v}) + ")");
  return v;
}

Attrs with(Attrs a, const char* name, AttrValue v) {
  a.set(name, std::move(v));
  return a;
}
Attrs conv_attrs(const Attrs& a) {
  return {{"stride", a.list("stride")}, {"padding", a.list("padding")},
          {"dilation", a.list("dilation")}, {"groups", a.i64("groups")}};
}
Attrs pool_attrs(const Attrs& a) {
  return {{"kernel_size", a.list("kernel_size")}, {"stride", a.list("stride")}, {"padding", a.list("padding")}};
}
Attrs avg_attrs(const Attrs& a) {
  return with(pool_attrs(a), "count_include_pad", a.boolean("count_include_pad"));
}
I64List spatial(const Value& v) { return {v.shape()[2], v.shape()[3]}; }

std::vector<AttrSpec> conv_schema() {
  return {{"stride", AttrKind::i64_list, AttrValue{I64List{1, 1}}},
          {"padding", AttrKind::i64_list, AttrValue{I64List{0, 0}}},
          {"dilation", AttrKind::i64_list, AttrValue{I64List{1, 1}}},
          {"groups", AttrKind::i64, AttrValue{std::int64_t{1}}}};
}
std::vector<AttrSpec> pool_schema() {
  return {{"kernel_size", AttrKind::i64_list, std::nullopt},
          {"stride", AttrKind::i64_list, std::nullopt},
          {"padding", AttrKind::i64_list, AttrValue{I64List{0, 0}}}};
}
std::vector<AttrSpec> plus(std::vector<AttrSpec> s, AttrSpec extra) {
  s.push_back(std::move(extra));
  return s;
}

// ---- shape rules ----------------------------------------------------------------------

void require_nchw(const Type& t, const char* what) {
  require(allowed(t.dtype, Dtypes::floats), std::string("expects ") + what + " of " + describe(Dtypes::floats));
  require(t.rank() == 4, std::string("expects ") + what + " of rank 4 (N, C, H, W)");
}
void require_same_dtype(const Type& a, const Type& b) {
  require(a.dtype == b.dtype, "expects operands of the same dtype");
}

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

// Validates x[N,C,H,W] and the pooling attrs; returns y's shape.
Shape pool_shape(const Shape& x, const Attrs& attrs) {
  const I64List& k = pair_attr(attrs, "kernel_size", 1);
  const I64List& s = pair_attr(attrs, "stride", 1);
  const I64List& p = pair_attr(attrs, "padding", 0);
  require(p[0] <= k[0] / 2 && p[1] <= k[1] / 2, "expects padding at most half the kernel size");
  require(x[2] >= 1 && x[3] >= 1, "expects a non-empty image (H, W >= 1)");
  const std::int64_t ho = conv_out_size(x[2], k[0], s[0], p[0], 1);
  const std::int64_t wo = conv_out_size(x[3], k[1], s[1], p[1], 1);
  require(ho >= 1 && wo >= 1, "expects a positive output size: the kernel is larger than the padded input");
  // The kernels' work estimate is planes * Ho * Wo * kh * kw: it must be representable.
  checked_mul(checked_mul(numel(Shape{x[0], x[1], ho, wo}), k[0]), k[1]);
  return {x[0], x[1], ho, wo};
}

Type pool_infer(std::span<const Type> in, const Attrs& attrs) {
  require_nchw(in[0], "x");
  return Type{in[0].dtype, pool_shape(in[0].shape, attrs)};
}

// (x, g) -> dx shaped like x; g must be shaped like the pool's output.
Type max_pool2d_grad_infer(std::span<const Type> in, const Attrs& attrs) {
  require_nchw(in[0], "x");
  require_same_dtype(in[0], in[1]);
  require(pool_shape(in[0].shape, attrs) == in[1].shape,
          "expects g shaped like max_pool2d's output " + to_string(pool_shape(in[0].shape, attrs)));
  return in[0];
}

// (x, d) -> pooled shape; d must be shaped like x.
Type max_pool2d_select_infer(std::span<const Type> in, const Attrs& attrs) {
  require_nchw(in[0], "x");
  require(in[1] == in[0], "expects d of x's type");
  return Type{in[0].dtype, pool_shape(in[0].shape, attrs)};
}

Type avg_pool2d_grad_infer(std::span<const Type> in, const Attrs& attrs) {
  const Type& g = in[0];
  require_nchw(g, "g");
  const I64List& hw = pair_attr(attrs, "input_size", 1);
  const Shape x{g.shape[0], g.shape[1], hw[0], hw[1]};
  require(pool_shape(x, attrs) == g.shape,
          "expects g shaped like avg_pool2d's output " + to_string(pool_shape(x, attrs)) +
              " for an input of shape " + to_string(x));
  return Type{g.dtype, x};
}

// ---- test inputs ----------------------------------------------------------------------

// Max pooling is piecewise linear in x: x gets distinct values 0.05 apart (a random
// permutation), so no window's argmax flips under a finite-difference step. Other inputs
// are standard normal.
Array pool_test_input(std::size_t input, const Type& t, std::uint64_t seed) {
  Array a(t);
  std::mt19937_64 rng(seed);
  if (input == 0) {
    std::vector<std::int64_t> perm(static_cast<std::size_t>(a.numel()));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    for (std::int64_t i = 0; i < a.numel(); ++i)
      a.set(i, 0.05 * static_cast<double>(perm[static_cast<std::size_t>(i)] - a.numel() / 2));
  } else {
    std::normal_distribution<double> normal(0.0, 1.0);
    for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, normal(rng));
  }
  return a;
}

Type f64_4d(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) { return Type{f64, {n, c, h, w}}; }

Attrs conv_case(I64List stride, I64List padding, I64List dilation, std::int64_t groups) {
  return {{"stride", stride}, {"padding", padding}, {"dilation", dilation}, {"groups", groups}};
}
Attrs pool_case(I64List kernel, I64List stride, I64List padding) {
  return {{"kernel_size", kernel}, {"stride", stride}, {"padding", padding}};
}

// ---- C99 emission ----------------------------------------------------------------------
// Direct loop nests (no im2col scratch: the exported C allocates nothing), one output
// element per iteration so every loop parallelises without races; accumulation in the
// element type, as the BLAS kernels.

// Replaces $NAME keys of `s` by geometry numbers.
std::string c_fill(std::string s, const std::vector<std::pair<std::string, std::string>>& keys) {
  for (auto& [k, v] : keys)
    for (std::size_t p; (p = s.find(k)) != std::string::npos;) s.replace(p, k.size(), v);
  return s;
}
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
  a.w.raw(c_fill(body, conv_keys(g, a)));
  a.w.close();
}

EmitC c_conv2d() {
  return c_loops([](const CLoopArgs& a) {
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
}

EmitC c_conv2d_input_grad() {
  return c_loops([](const CLoopArgs& a) {
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
}

EmitC c_conv2d_weight_grad() {
  return c_loops([](const CLoopArgs& a) {
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
}

// Pooling: one (n, c) plane per iteration; `win` opens the window (h0, h1, w0, w1 clipped,
// hs, ws unclipped) of output o = i * Wo + j; `amax` finds its first maximum `best`.
constexpr const char* kCWindow =
    "        const int64_t hs = i * $sh - $ph, ws = j * $sw - $pw;\n"
    "        const int64_t h0 = hs > 0 ? hs : 0, h1 = hs + $kh < $H ? hs + $kh : $H;\n"
    "        const int64_t w0 = ws > 0 ? ws : 0, w1 = ws + $kw < $W ? ws + $kw : $W;\n";
constexpr const char* kCArgmax =
    "        int64_t best = h0 * $W + w0;\n        $T m = -$INF;\n"
    "        for (int64_t h = h0; h < h1; ++h)\n          for (int64_t c = w0; c < w1; ++c) {\n"
    "            const $T v = x[h * $W + c];\n            if (v > m || v != v) { m = v; best = h * $W + c; }\n          }\n";

void c_pool(const CLoopArgs& a, const nn::PoolGeom& g, const std::string& pre, const std::string& per_window) {
  auto S = [](std::int64_t v) { return std::to_string(v); };
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"$Ho", S(g.Ho)}, {"$Wo", S(g.Wo)}, {"$H", S(g.H)}, {"$W", S(g.W)}, {"$kh", S(g.kh)}, {"$kw", S(g.kw)},
      {"$sh", S(g.sh)}, {"$sw", S(g.sw)}, {"$ph", S(g.ph)}, {"$pw", S(g.pw)}, {"$T", c_type(a.node.type.dtype)},
      {"$INF", a.node.type.dtype == f32 ? "INFINITY" : "(double)INFINITY"}};
  if (g.planes == 0) return;
  c_for(a.w, "pl", g.planes, g.planes * g.Ho * g.Wo * g.kh * g.kw, false);
  a.w.raw(c_fill(pre + "    for (int64_t i = 0; i < $Ho; ++i)\n      for (int64_t j = 0; j < $Wo; ++j) {\n" + kCWindow +
                     per_window + "      }\n",
                 keys));
  a.w.close();
}

EmitC c_max_pool(int kind) {  // 0: max_pool2d, 1: its grad, 2: select
  return c_loops([kind](const CLoopArgs& a) {
    const Shape& x = a.in_types[0].shape;
    const Shape& y = kind == 1 ? a.in_types[1].shape : a.node.type.shape;
    const nn::PoolGeom g = nn::pool_geom(x, y, a.node.attrs);
    std::string pre = "    const $T* x = " + a.in[0] + " + pl * $H * $W;\n";
    std::string body = kCArgmax;
    if (kind == 0) {
      pre += "    $T* y = " + a.out + " + pl * $Ho * $Wo;\n";
      body += "        y[i * $Wo + j] = x[best];\n";
    } else if (kind == 1) {
      pre += "    const $T* gy = " + a.in[1] + " + pl * $Ho * $Wo;\n    $T* dx = " + a.out +
             " + pl * $H * $W;\n    for (int64_t e = 0; e < $H * $W; ++e) dx[e] = 0;\n";
      body += "        dx[best] += gy[i * $Wo + j];\n";
    } else {
      pre += "    const $T* d = " + a.in[1] + " + pl * $H * $W;\n    $T* y = " + a.out + " + pl * $Ho * $Wo;\n";
      body += "        y[i * $Wo + j] = d[best];\n";
    }
    c_pool(a, g, pre, body);
  });
}

EmitC c_avg_pool(bool grad) {
  return c_loops([grad](const CLoopArgs& a) {
    const Shape& x = grad ? a.node.type.shape : a.in_types[0].shape;
    const Shape& y = grad ? a.in_types[0].shape : a.node.type.shape;
    const nn::PoolGeom g = nn::pool_geom(x, y, a.node.attrs);
    const std::string div = a.node.attrs.boolean("count_include_pad")
        ? "(($T)(((hs + $kh < $H + $ph ? hs + $kh : $H + $ph) - hs) * ((ws + $kw < $W + $pw ? ws + $kw : $W + $pw) - ws)))"
        : "(($T)((h1 - h0) * (w1 - w0)))";
    if (!grad) {
      c_pool(a, g, "    const $T* x = " + a.in[0] + " + pl * $H * $W;\n    $T* y = " + a.out + " + pl * $Ho * $Wo;\n",
             "        $T s = 0;\n        for (int64_t h = h0; h < h1; ++h)\n"
             "          for (int64_t c = w0; c < w1; ++c) s += x[h * $W + c];\n        y[i * $Wo + j] = s / " + div + ";\n");
    } else {
      c_pool(a, g, "    const $T* gy = " + a.in[0] + " + pl * $Ho * $Wo;\n    $T* dx = " + a.out +
                       " + pl * $H * $W;\n    for (int64_t e = 0; e < $H * $W; ++e) dx[e] = 0;\n",
             "        const $T v = gy[i * $Wo + j] / " + div + ";\n        for (int64_t h = h0; h < h1; ++h)\n"
             "          for (int64_t c = w0; c < w1; ++c) dx[h * $W + c] += v;\n");
    }
  });
}

}  // namespace

// ---- typed builders (nn.hpp) ----------------------------------------------------------

namespace {
Attrs attrs_of(const Conv2dParams& p) { return conv_case(p.stride, p.padding, p.dilation, p.groups); }
Attrs attrs_of(const Pool2dParams& p) { return pool_case(p.kernel_size, p.stride, p.padding); }
}  // namespace

Value conv2d(Value x, Value w, const Conv2dParams& p) { return make_op("conv2d", {x, w}, attrs_of(p)); }
Value conv2d_input_grad(Value g, Value w, const Conv2dParams& p, I64List input_size) {
  return make_op("conv2d_input_grad", {g, w}, with(attrs_of(p), "input_size", std::move(input_size)));
}
Value conv2d_weight_grad(Value x, Value g, const Conv2dParams& p, I64List kernel_size) {
  return make_op("conv2d_weight_grad", {x, g}, with(attrs_of(p), "kernel_size", std::move(kernel_size)));
}
Value max_pool2d(Value x, const Pool2dParams& p) { return make_op("max_pool2d", {x}, attrs_of(p)); }
Value max_pool2d_grad(Value x, Value g, const Pool2dParams& p) {
  return make_op("max_pool2d_grad", {x, g}, attrs_of(p));
}
Value max_pool2d_select(Value x, Value d, const Pool2dParams& p) {
  return make_op("max_pool2d_select", {x, d}, attrs_of(p));
}
Value avg_pool2d(Value x, const Pool2dParams& p, bool count_include_pad) {
  return make_op("avg_pool2d", {x}, with(attrs_of(p), "count_include_pad", count_include_pad));
}
Value avg_pool2d_grad(Value g, const Pool2dParams& p, bool count_include_pad, I64List input_size) {
  Attrs a = with(attrs_of(p), "count_include_pad", count_include_pad);
  return make_op("avg_pool2d_grad", {g}, with(std::move(a), "input_size", std::move(input_size)));
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
  };

  // Max pooling: y = x at each window's argmax (first maximum; ties as PyTorch). The
  // argmax is piecewise constant in x, so every derivative through it is zero.
  OpDef& mp = define_op("max_pool2d");
  mp.doc =
      "x[N,C,H,W] -> [N,C,Ho,Wo], max over each kh x kw window (stride, padding <= kernel/2 counts as -inf, "
      "Ho = floor((H + 2ph - kh)/sh) + 1); no dilation or ceil_mode; NaN propagates; f32/f64";
  mp.attrs = pool_schema();
  mp.infer = pool_infer;
  mp.kernel = nn::max_pool2d_kernel;
  mp.emit_c = c_max_pool(0);
  mp.vjp = [](const VjpArgs& a) {
    return grads({make_op("max_pool2d_grad", {a.in[0], a.cotangent}, pool_attrs(a.node.attrs))});
  };
  mp.test.make_input = pool_test_input;
  mp.test.cases = {
      {{f64_4d(2, 2, 5, 5)}, pool_case({2, 2}, {2, 2}, {0, 0})},
      {{f64_4d(1, 2, 5, 6)}, pool_case({3, 2}, {1, 2}, {1, 1})},
      {{f64_4d(1, 1, 4, 4)}, pool_case({3, 3}, {1, 1}, {1, 1})},  // overlapping windows
      {{f64_4d(1, 1, 1, 1)}, pool_case({1, 1}, {1, 1}, {0, 0})},
  };

  OpDef& mpg = define_op("max_pool2d_grad");
  mpg.doc =
      "x[N,C,H,W], g[N,C,Ho,Wo] -> dx shaped like x: each g element added at its window's argmax in x "
      "(first maximum, as max_pool2d), 0 elsewhere; f32/f64";
  mpg.arity = 2;
  mpg.attrs = pool_schema();
  mpg.infer = max_pool2d_grad_infer;
  mpg.kernel = nn::max_pool2d_grad_kernel;
  mpg.emit_c = c_max_pool(1);
  mpg.vjp = [](const VjpArgs& a) {  // linear in g; x only picks positions (zero derivative)
    return grads({Value{}, make_op("max_pool2d_select", {a.in[0], a.cotangent}, pool_attrs(a.node.attrs))});
  };
  mpg.test.make_input = pool_test_input;
  mpg.test.cases = {
      {{f64_4d(2, 2, 5, 5), f64_4d(2, 2, 2, 2)}, pool_case({2, 2}, {2, 2}, {0, 0})},
      {{f64_4d(1, 2, 5, 6), f64_4d(1, 2, 5, 4)}, pool_case({3, 2}, {1, 2}, {1, 1})},
      {{f64_4d(1, 1, 4, 4), f64_4d(1, 1, 4, 4)}, pool_case({3, 3}, {1, 1}, {1, 1})},
  };

  OpDef& mps = define_op("max_pool2d_select");
  mps.doc =
      "x[N,C,H,W], d shaped like x -> [N,C,Ho,Wo]: d at each window's argmax in x (first maximum, as "
      "max_pool2d); max_pool2d(x) = max_pool2d_select(x, x); f32/f64";
  mps.arity = 2;
  mps.attrs = pool_schema();
  mps.infer = max_pool2d_select_infer;
  mps.kernel = nn::max_pool2d_select_kernel;
  mps.emit_c = c_max_pool(2);
  mps.vjp = [](const VjpArgs& a) {  // linear in d, adjoint of max_pool2d_grad
    return grads({Value{}, make_op("max_pool2d_grad", {a.in[0], a.cotangent}, pool_attrs(a.node.attrs))});
  };
  mps.test.make_input = pool_test_input;
  mps.test.cases = {
      {{f64_4d(2, 2, 5, 5), f64_4d(2, 2, 5, 5)}, pool_case({2, 2}, {2, 2}, {0, 0})},
      {{f64_4d(1, 2, 5, 6), f64_4d(1, 2, 5, 6)}, pool_case({3, 2}, {1, 2}, {1, 1})},
      {{f64_4d(1, 1, 4, 4), f64_4d(1, 1, 4, 4)}, pool_case({3, 3}, {1, 1}, {1, 1})},
  };

  OpDef& ap = define_op("avg_pool2d");
  ap.doc =
      "x[N,C,H,W] -> [N,C,Ho,Wo], mean of each kh x kw window (zero padding <= kernel/2; divisor kh*kw, "
      "or the number of real elements when count_include_pad = false); no ceil_mode; f32/f64";
  ap.attrs = plus(pool_schema(), {"count_include_pad", AttrKind::boolean, AttrValue{true}});
  ap.infer = pool_infer;
  ap.kernel = nn::avg_pool2d_kernel;
  ap.emit_c = c_avg_pool(false);
  ap.vjp = [](const VjpArgs& a) {
    return grads({make_op("avg_pool2d_grad", {a.cotangent},
                          with(avg_attrs(a.node.attrs), "input_size", spatial(a.in[0])))});
  };
  ap.test.cases = {
      {{f64_4d(2, 2, 5, 5)}, with(pool_case({2, 2}, {2, 2}, {0, 0}), "count_include_pad", true)},
      {{f64_4d(1, 2, 5, 6)}, with(pool_case({3, 2}, {2, 1}, {1, 1}), "count_include_pad", true)},
      {{f64_4d(1, 2, 5, 6)}, with(pool_case({3, 2}, {2, 1}, {1, 1}), "count_include_pad", false)},
      {{f64_4d(1, 1, 1, 1)}, with(pool_case({1, 1}, {1, 1}, {0, 0}), "count_include_pad", true)},
  };

  OpDef& apg = define_op("avg_pool2d_grad");
  apg.doc =
      "g[N,C,Ho,Wo] -> dx[N,C,H,W] with [H,W] = input_size: each g element divided by its window's divisor "
      "and added over the window (the adjoint of avg_pool2d); f32/f64";
  apg.attrs = plus(plus(pool_schema(), {"count_include_pad", AttrKind::boolean, AttrValue{true}}),
                   {"input_size", AttrKind::i64_list, std::nullopt});
  apg.infer = avg_pool2d_grad_infer;
  apg.kernel = nn::avg_pool2d_grad_kernel;
  apg.emit_c = c_avg_pool(true);
  apg.vjp = [](const VjpArgs& a) {
    return grads({make_op("avg_pool2d", {a.cotangent}, avg_attrs(a.node.attrs))});
  };
  apg.test.cases = {
      {{f64_4d(2, 2, 2, 2)},
       with(with(pool_case({2, 2}, {2, 2}, {0, 0}), "count_include_pad", true), "input_size", I64List{5, 5})},
      {{f64_4d(1, 2, 3, 7)},
       with(with(pool_case({3, 2}, {2, 1}, {1, 1}), "count_include_pad", true), "input_size", I64List{5, 6})},
      {{f64_4d(1, 2, 3, 7)},
       with(with(pool_case({3, 2}, {2, 1}, {1, 1}), "count_include_pad", false), "input_size", I64List{5, 6})},
  };
}

}  // namespace mg::ir
