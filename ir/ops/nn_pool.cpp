// The nn family, pooling: max_pool2d and avg_pool2d (NCHW, f32/f64) with PyTorch's options
// (dilation, ceil_mode; count_include_pad, divisor_override) and their adjoint ops, so
// gradients of any order stay closed here: max_pool2d_grad / max_pool2d_select route /
// pick values at each window's argmax (each the other's adjoint); avg_pool2d and
// avg_pool2d_grad are adjoint. Kernels live in nn_pool_kernels.cpp. Output sizes follow
// PyTorch's pooling_output_shape exactly (nn::pool_out_size), through checked arithmetic.
#include <numeric>
#include <random>

#include "minigrad/ir/ops/families.hpp"
#include "minigrad/ir/ops/gemm_c99.hpp"
#include "minigrad/ir/ops/nn.hpp"
#include "minigrad/ir/ops/nn_kernels.hpp"
#include "minigrad/ir/ops/nn_rules.hpp"

namespace mg::ir {

namespace {

using namespace rules;
using nn::f64_4d;
using nn::pair_attr;
using nn::plus;
using nn::require_nchw;
using nn::require_same_dtype;
using nn::spatial;
using nn::with;

// ---- attributes -----------------------------------------------------------------------

// The attributes a VJP passes on (a node's attrs minus any input_size).
Attrs max_attrs(const Attrs& a) {
  return {{"kernel_size", a.list("kernel_size")}, {"stride", a.list("stride")}, {"padding", a.list("padding")},
          {"dilation", a.list("dilation")}, {"ceil_mode", a.boolean("ceil_mode")}};
}
Attrs avg_attrs(const Attrs& a) {
  return {{"kernel_size", a.list("kernel_size")}, {"stride", a.list("stride")},
          {"padding", a.list("padding")},         {"ceil_mode", a.boolean("ceil_mode")},
          {"count_include_pad", a.boolean("count_include_pad")}, {"divisor_override", a.i64("divisor_override")}};
}

std::vector<AttrSpec> window_schema() {
  return {{"kernel_size", AttrKind::i64_list, std::nullopt},
          {"stride", AttrKind::i64_list, std::nullopt},
          {"padding", AttrKind::i64_list, AttrValue{I64List{0, 0}}}};
}
std::vector<AttrSpec> max_schema() {
  return plus(plus(window_schema(), {"dilation", AttrKind::i64_list, AttrValue{I64List{1, 1}}}),
              {"ceil_mode", AttrKind::boolean, AttrValue{false}});
}
std::vector<AttrSpec> avg_schema() {
  return plus(plus(plus(window_schema(), {"ceil_mode", AttrKind::boolean, AttrValue{false}}),
                   {"count_include_pad", AttrKind::boolean, AttrValue{true}}),
              {"divisor_override", AttrKind::i64, AttrValue{std::int64_t{0}}});
}

// ---- shape rules ----------------------------------------------------------------------

// Validates x[N,C,H,W] and the pooling attrs (dilation only where the op has it); returns
// y's shape. PyTorch's checks: padding at most half the kernel (not the dilated one), a
// positive output size.
Shape pool_shape(const Shape& x, const Attrs& attrs) {
  const I64List& k = pair_attr(attrs, "kernel_size", 1);
  const I64List& s = pair_attr(attrs, "stride", 1);
  const I64List& p = pair_attr(attrs, "padding", 0);
  const I64List d = attrs.has("dilation") ? pair_attr(attrs, "dilation", 1) : I64List{1, 1};
  const bool ceil_mode = attrs.boolean("ceil_mode");
  require(p[0] <= k[0] / 2 && p[1] <= k[1] / 2, "expects padding at most half the kernel size (padding " +
                                                    to_string(AttrValue{p}) + ", kernel_size " +
                                                    to_string(AttrValue{k}) + ")");
  require(x[2] >= 1 && x[3] >= 1, "expects a non-empty image (H, W >= 1)");
  const std::int64_t ho = nn::pool_out_size(x[2], k[0], s[0], p[0], d[0], ceil_mode);
  const std::int64_t wo = nn::pool_out_size(x[3], k[1], s[1], p[1], d[1], ceil_mode);
  require(ho >= 1 && wo >= 1, "expects a positive output size (got " + std::to_string(ho) + "x" +
                                  std::to_string(wo) + "): the " + (d[0] * d[1] > 1 ? "dilated " : "") +
                                  "kernel is larger than the padded input");
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

// (g) -> dx[N,C,H,W] with [H,W] = input_size.
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

// ---- test cases -----------------------------------------------------------------------

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

Attrs max_case(I64List kernel, I64List stride, I64List padding, I64List dilation = {1, 1}, bool ceil_mode = false) {
  return {{"kernel_size", kernel}, {"stride", stride}, {"padding", padding}, {"dilation", dilation},
          {"ceil_mode", ceil_mode}};
}
Attrs avg_case(I64List kernel, I64List stride, I64List padding, bool ceil_mode, bool include_pad,
               std::int64_t divisor_override = 0) {
  return {{"kernel_size", kernel}, {"stride", stride}, {"padding", padding}, {"ceil_mode", ceil_mode},
          {"count_include_pad", include_pad}, {"divisor_override", divisor_override}};
}
// The pooled type of x under `attrs` (the shape of g / d inputs of the adjoint ops' cases).
Type pooled(const Type& x, const Attrs& attrs) { return Type{x.dtype, pool_shape(x.shape, attrs)}; }

// The geometries every pooling op is tested on: plain, overlapping windows, dilation,
// ceil_mode (a partial last window, and the rule that drops one starting in the right
// padding: H = 5, k = 2, s = 2, p = 1), a 1x1 image.
std::vector<std::pair<Type, Attrs>> max_geometries() {
  return {
      {f64_4d(2, 2, 5, 5), max_case({2, 2}, {2, 2}, {0, 0})},
      {f64_4d(1, 2, 5, 6), max_case({3, 2}, {1, 2}, {1, 1})},
      {f64_4d(1, 1, 4, 4), max_case({3, 3}, {1, 1}, {1, 1})},
      {f64_4d(1, 2, 7, 6), max_case({3, 2}, {2, 1}, {1, 1}, {2, 2})},
      {f64_4d(1, 1, 5, 5), max_case({2, 2}, {2, 2}, {1, 1}, {1, 1}, true)},
      {f64_4d(1, 2, 6, 7), max_case({3, 3}, {2, 2}, {1, 0}, {1, 2}, true)},
      {f64_4d(1, 1, 1, 1), max_case({1, 1}, {1, 1}, {0, 0})},
  };
}
std::vector<std::pair<Type, Attrs>> avg_geometries() {
  return {
      {f64_4d(2, 2, 5, 5), avg_case({2, 2}, {2, 2}, {0, 0}, false, true)},
      {f64_4d(1, 2, 5, 6), avg_case({3, 2}, {2, 1}, {1, 1}, false, true)},
      {f64_4d(1, 2, 5, 6), avg_case({3, 2}, {2, 1}, {1, 1}, false, false)},
      {f64_4d(1, 2, 5, 6), avg_case({3, 2}, {2, 1}, {1, 1}, true, true)},
      {f64_4d(1, 2, 5, 6), avg_case({3, 2}, {2, 1}, {1, 1}, true, false)},
      {f64_4d(1, 1, 5, 5), avg_case({2, 2}, {2, 2}, {1, 1}, true, false)},
      {f64_4d(1, 1, 6, 7), avg_case({3, 3}, {2, 2}, {1, 1}, true, true, 4)},
      {f64_4d(1, 2, 5, 5), avg_case({2, 3}, {1, 2}, {0, 1}, false, false, -3)},
      {f64_4d(1, 1, 1, 1), avg_case({1, 1}, {1, 1}, {0, 0}, false, true)},
  };
}

// ---- C99 emission ----------------------------------------------------------------------
// One (n, c) plane per iteration, one output element per inner iteration; accumulation in
// the element type, as the kernels.

std::string S(std::int64_t v) { return std::to_string(v); }

// The first dilated position >= 0 of a window starting at `s` (PyTorch's `while (s < 0) s += d`).
std::string c_first(const std::string& s, std::int64_t d) {
  if (d == 1) return s + " > 0 ? " + s + " : 0";
  return s + " >= 0 ? " + s + " : " + s + " + (-" + s + " + " + S(d - 1) + ") / " + S(d) + " * " + S(d);
}

// Opens the window of output o = i * Wo + j: rows [h0, h1) step dh, columns [w0, w1) step
// dw (clipped to the input; empty when h0 >= h1 or w0 >= w1); hs, ws unclipped.
std::string c_window(const nn::PoolGeom& g) {
  return "        const int64_t hs = i * $sh - $ph, ws = j * $sw - $pw;\n"
         "        const int64_t h0 = " + c_first("hs", g.dh) + ", h1 = hs + " + S((g.kh - 1) * g.dh + 1) +
         " < $H ? hs + " + S((g.kh - 1) * g.dh + 1) + " : $H;\n"
         "        const int64_t w0 = " + c_first("ws", g.dw) + ", w1 = ws + " + S((g.kw - 1) * g.dw + 1) +
         " < $W ? ws + " + S((g.kw - 1) * g.dw + 1) + " : $W;\n";
}

// The first maximum `best` (row-major; a NaN wins; -1 for an empty window) and its value m.
// Taking the first element unconditionally equals PyTorch's start at -inf with the first
// element's index.
constexpr const char* kCArgmax =
    "        int64_t best = -1;\n        $T m = -$INF;\n"
    "        for (int64_t h = h0; h < h1; h += $dh)\n          for (int64_t c = w0; c < w1; c += $dw) {\n"
    "            const $T v = x[h * $W + c];\n"
    "            if (best < 0 || v > m || v != v) { m = v; best = h * $W + c; }\n          }\n";

void c_pool(const CLoopArgs& a, const nn::PoolGeom& g, const std::string& pre, const std::string& per_window) {
  const std::vector<std::pair<std::string, std::string>> keys = {
      {"$Ho", S(g.Ho)}, {"$Wo", S(g.Wo)}, {"$H", S(g.H)},   {"$W", S(g.W)},   {"$kh", S(g.kh)},
      {"$kw", S(g.kw)}, {"$sh", S(g.sh)}, {"$sw", S(g.sw)}, {"$ph", S(g.ph)}, {"$pw", S(g.pw)},
      {"$dh", S(g.dh)}, {"$dw", S(g.dw)}, {"$T", c_type(a.node.type.dtype)},
      {"$INF", a.node.type.dtype == f32 ? "INFINITY" : "(double)INFINITY"}};
  if (g.planes == 0) return;
  c_for(a.w, "pl", g.planes, g.planes * g.Ho * g.Wo * g.kh * g.kw, false);
  a.w.raw(nn::c_fill(pre + "    for (int64_t i = 0; i < $Ho; ++i)\n      for (int64_t j = 0; j < $Wo; ++j) {\n" +
                         c_window(g) + per_window + "      }\n",
                     keys));
  a.w.close();
}

// The gradient and select of 2x2 windows at stride 2 inside the plane (the usual CNN
// pooling), a row pair at a time with the interpreter's picks (nn_pool_kernels.cpp,
// max_pool_grad_row_2x2 / max_pool_select_row_2x2: selects on one comparison each, so the
// row loops vectorise; the first maximum, a NaN wins). The gradient writes each of a
// window's elements once: zeroing dx and scattering argmaxes into it (the way before)
// took 1.6x as long on example 05's planes. Restrict pointers: the memory plan never
// gives a result the buffer of an operand (memory_plan.cpp).
constexpr const char* kCPool2x2 = R"(/* vy when pick(x, y) takes y (y > x, or y is NaN), else vx. */
static $T mg_pool_choose_$S($T x, $T y, $T vx, $T vy) {
  const $T t = y > x ? vy : vx;
  return y != y ? vy : t;
}
/* dx of a row pair: the window's gradient at its argmax, 0 at its other three elements
   (0 + g, as a zeroed dx plus g: a -0 lands as +0). */
static void mg_pool_grad_row_$S(const $T* restrict r0, const $T* restrict r1, const $T* restrict gy,
                                $T* restrict d0, $T* restrict d1, int64_t n) {
  int64_t j;
  for (j = 0; j < n; ++j) {
    const $T a = r0[2 * j], b = r0[2 * j + 1], c = r1[2 * j], d = r1[2 * j + 1];
    const $T top = mg_pool_choose_$S(a, b, a, b), bot = mg_pool_choose_$S(c, d, c, d), g = gy[j] + ($T)0;
    const $T g_top = mg_pool_choose_$S(top, bot, g, ($T)0), g_bot = mg_pool_choose_$S(top, bot, ($T)0, g);
    d0[2 * j] = mg_pool_choose_$S(a, b, g_top, ($T)0);
    d0[2 * j + 1] = mg_pool_choose_$S(a, b, ($T)0, g_top);
    d1[2 * j] = mg_pool_choose_$S(c, d, g_bot, ($T)0);
    d1[2 * j + 1] = mg_pool_choose_$S(c, d, ($T)0, g_bot);
  }
}
/* select: the element of d (rows d0, d1) at each window's argmax. */
static void mg_pool_select_row_$S(const $T* restrict r0, const $T* restrict r1, const $T* restrict d0,
                                  const $T* restrict d1, $T* restrict y, int64_t n) {
  int64_t j;
  for (j = 0; j < n; ++j) {
    const $T a = r0[2 * j], b = r0[2 * j + 1], c = r1[2 * j], d = r1[2 * j + 1];
    const $T top = mg_pool_choose_$S(a, b, a, b), bot = mg_pool_choose_$S(c, d, c, d);
    y[j] = mg_pool_choose_$S(top, bot, mg_pool_choose_$S(a, b, d0[2 * j], d0[2 * j + 1]),
                             mg_pool_choose_$S(c, d, d1[2 * j], d1[2 * j + 1]));
  }
}
)";
void c_max_pool_2x2(const CLoopArgs& a, const nn::PoolGeom& g, bool grad) {
  const std::string s(name_of(a.node.type.dtype));
  a.support("mg_pool_2x2_" + s, gemm_c99::substitute(kCPool2x2, a.node.type.dtype));
  const std::vector<std::pair<std::string, std::string>> keys = {{"$Ho", S(g.Ho)}, {"$Wo", S(g.Wo)}, {"$H", S(g.H)},
                                                                 {"$W", S(g.W)},   {"$T", c_type(a.node.type.dtype)},
                                                                 {"$S", s}};
  std::string text = "    const $T* x = " + a.in[0] + " + pl * $H * $W;\n";
  if (grad) {
    text += "    const $T* gy = " + a.in[1] + " + pl * $Ho * $Wo;\n    $T* dx = " + a.out + " + pl * $H * $W;\n";
    text +=
        "    for (int64_t i = 0; i < $Ho; ++i) {\n"
        "      $T* d0 = dx + 2 * i * $W;\n"
        "      mg_pool_grad_row_$S(x + 2 * i * $W, x + (2 * i + 1) * $W, gy + i * $Wo, d0, d0 + $W, $Wo);\n";
    if (2 * g.Wo < g.W)  // a last odd column
      text += "      d0[2 * $Wo] = 0;\n      d0[$W + 2 * $Wo] = 0;\n";
    text += "    }\n";
    if (2 * g.Ho < g.H)  // a last odd row
      text += "    for (int64_t e = 2 * $Ho * $W; e < $H * $W; ++e) dx[e] = 0;\n";
  } else {
    text += "    const $T* d = " + a.in[1] + " + pl * $H * $W;\n    $T* y = " + a.out + " + pl * $Ho * $Wo;\n";
    text +=
        "    for (int64_t i = 0; i < $Ho; ++i)\n"
        "      mg_pool_select_row_$S(x + 2 * i * $W, x + (2 * i + 1) * $W, d + 2 * i * $W, d + (2 * i + 1) * $W,\n"
        "                            y + i * $Wo, $Wo);\n";
  }
  if (g.planes == 0) return;
  c_for(a.w, "pl", g.planes, g.planes * g.Ho * g.Wo * g.kh * g.kw, false);
  a.w.raw(nn::c_fill(text, keys));
  a.w.close();
}

EmitC c_max_pool(int kind) {  // 0: max_pool2d, 1: its grad, 2: select
  return c_loops([kind](const CLoopArgs& a) {
    const Shape& x = a.in_types[0].shape;
    const Shape& y = kind == 1 ? a.in_types[1].shape : a.node.type.shape;
    const nn::PoolGeom g = nn::pool_geom(x, y, a.node.attrs);
    // The forward's window loop vectorises as it is (the general loop was as fast).
    if (kind != 0 && is_2x2(g) && g.Wo > 0) return c_max_pool_2x2(a, g, kind == 1);
    std::string pre = "    const $T* x = " + a.in[0] + " + pl * $H * $W;\n";
    std::string body = kCArgmax;
    if (kind == 0) {
      pre += "    $T* y = " + a.out + " + pl * $Ho * $Wo;\n";
      body += "        y[i * $Wo + j] = m;\n";
    } else if (kind == 1) {
      pre += "    const $T* gy = " + a.in[1] + " + pl * $Ho * $Wo;\n    $T* dx = " + a.out +
             " + pl * $H * $W;\n    for (int64_t e = 0; e < $H * $W; ++e) dx[e] = 0;\n";
      body += "        if (best >= 0) dx[best] += gy[i * $Wo + j];\n";
    } else {
      pre += "    const $T* d = " + a.in[1] + " + pl * $H * $W;\n    $T* y = " + a.out + " + pl * $Ho * $Wo;\n";
      body += "        y[i * $Wo + j] = best >= 0 ? d[best] : 0;\n";
    }
    c_pool(a, g, pre, body);
  });
}

// The divisor of an avg window, as nn_pool_kernels.cpp's AvgDivisor.
std::string c_avg_divisor(const Attrs& attrs) {
  if (const std::int64_t d = attrs.i64("divisor_override"); d != 0) return "(($T)(" + S(d) + "))";
  if (attrs.boolean("count_include_pad"))
    return "(($T)(((hs + $kh < $H + $ph ? hs + $kh : $H + $ph) - hs) * ((ws + $kw < $W + $pw ? ws + $kw : $W + $pw) - ws)))";
  return "(($T)((h1 - h0) * (w1 - w0)))";
}

EmitC c_avg_pool(bool grad) {
  return c_loops([grad](const CLoopArgs& a) {
    const Shape& x = grad ? a.node.type.shape : a.in_types[0].shape;
    const Shape& y = grad ? a.in_types[0].shape : a.node.type.shape;
    const nn::PoolGeom g = nn::pool_geom(x, y, a.node.attrs);
    const std::string div = c_avg_divisor(a.node.attrs);
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
Attrs attrs_of(const MaxPool2dParams& p) {
  return max_case(p.kernel_size, p.stride, p.padding, p.dilation, p.ceil_mode);
}
Attrs attrs_of(const AvgPool2dParams& p) {
  return avg_case(p.kernel_size, p.stride, p.padding, p.ceil_mode, p.count_include_pad, p.divisor_override);
}
}  // namespace

Value max_pool2d(Value x, const MaxPool2dParams& p) { return make_op("max_pool2d", {x}, attrs_of(p)); }
Value max_pool2d_grad(Value x, Value g, const MaxPool2dParams& p) {
  return make_op("max_pool2d_grad", {x, g}, attrs_of(p));
}
Value max_pool2d_select(Value x, Value d, const MaxPool2dParams& p) {
  return make_op("max_pool2d_select", {x, d}, attrs_of(p));
}
Value avg_pool2d(Value x, const AvgPool2dParams& p) { return make_op("avg_pool2d", {x}, attrs_of(p)); }
Value avg_pool2d_grad(Value g, const AvgPool2dParams& p, I64List input_size) {
  return make_op("avg_pool2d_grad", {g}, with(attrs_of(p), "input_size", std::move(input_size)));
}

// ---- registry entries -----------------------------------------------------------------

void register_pool_ops() {
  // Max pooling: y = x at each window's argmax (first maximum; ties as PyTorch). The
  // argmax is piecewise constant in x, so every derivative through it is zero.
  OpDef& mp = define_op("max_pool2d");
  mp.doc =
      "x[N,C,H,W] -> [N,C,Ho,Wo], max over each kh x kw window at rows i*sh - ph + t*dh (padding <= kernel/2 "
      "counts as -inf), Ho = floor((H + 2ph - dh(kh-1) - 1)/sh) + 1, or rounded up with ceil_mode (dropping a "
      "window that would start in the right padding), as PyTorch; NaN propagates; a window holding only padding "
      "gives -inf; f32/f64";
  mp.attrs = max_schema();
  mp.infer = pool_infer;
  mp.kernel = nn::max_pool2d_kernel;
  mp.emit_c = c_max_pool(0);
  mp.vjp = [](const VjpArgs& a) {
    return grads({make_op("max_pool2d_grad", {a.in[0], a.cotangent}, max_attrs(a.node.attrs))});
  };
  mp.test.make_input = pool_test_input;
  for (auto& [x, attrs] : max_geometries()) mp.test.cases.push_back({{x}, attrs});

  OpDef& mpg = define_op("max_pool2d_grad");
  mpg.doc =
      "x[N,C,H,W], g[N,C,Ho,Wo] -> dx shaped like x: each g element added at its window's argmax in x "
      "(first maximum, as max_pool2d; nowhere for a window holding only padding), 0 elsewhere; f32/f64";
  mpg.arity = 2;
  mpg.attrs = max_schema();
  mpg.infer = max_pool2d_grad_infer;
  mpg.kernel = nn::max_pool2d_grad_kernel;
  mpg.emit_c = c_max_pool(1);
  mpg.vjp = [](const VjpArgs& a) {  // linear in g; x only picks positions (zero derivative)
    return grads({Value{}, make_op("max_pool2d_select", {a.in[0], a.cotangent}, max_attrs(a.node.attrs))});
  };
  mpg.test.make_input = pool_test_input;
  for (auto& [x, attrs] : max_geometries()) mpg.test.cases.push_back({{x, pooled(x, attrs)}, attrs});

  OpDef& mps = define_op("max_pool2d_select");
  mps.doc =
      "x[N,C,H,W], d shaped like x -> [N,C,Ho,Wo]: d at each window's argmax in x (first maximum, as "
      "max_pool2d; 0 for a window holding only padding); max_pool2d(x) = max_pool2d_select(x, x) elsewhere; "
      "f32/f64";
  mps.arity = 2;
  mps.attrs = max_schema();
  mps.infer = max_pool2d_select_infer;
  mps.kernel = nn::max_pool2d_select_kernel;
  mps.emit_c = c_max_pool(2);
  mps.vjp = [](const VjpArgs& a) {  // linear in d, adjoint of max_pool2d_grad
    return grads({Value{}, make_op("max_pool2d_grad", {a.in[0], a.cotangent}, max_attrs(a.node.attrs))});
  };
  mps.test.make_input = pool_test_input;
  for (auto& [x, attrs] : max_geometries()) mps.test.cases.push_back({{x, x}, attrs});

  OpDef& ap = define_op("avg_pool2d");
  ap.doc =
      "x[N,C,H,W] -> [N,C,Ho,Wo], mean of each kh x kw window (zero padding <= kernel/2; Ho as max_pool2d "
      "without dilation, ceil_mode included); divisor: divisor_override when not 0, else the window clipped to "
      "the padded input (count_include_pad = true: ceil_mode's overhang is not counted) or to the input; as "
      "PyTorch; f32/f64";
  ap.attrs = avg_schema();
  ap.infer = pool_infer;
  ap.kernel = nn::avg_pool2d_kernel;
  ap.emit_c = c_avg_pool(false);
  ap.vjp = [](const VjpArgs& a) {
    return grads({make_op("avg_pool2d_grad", {a.cotangent},
                          with(avg_attrs(a.node.attrs), "input_size", spatial(a.in[0])))});
  };
  for (auto& [x, attrs] : avg_geometries()) ap.test.cases.push_back({{x}, attrs});

  OpDef& apg = define_op("avg_pool2d_grad");
  apg.doc =
      "g[N,C,Ho,Wo] -> dx[N,C,H,W] with [H,W] = input_size: each g element divided by its window's divisor "
      "and added over the window (the adjoint of avg_pool2d); f32/f64";
  apg.attrs = plus(avg_schema(), {"input_size", AttrKind::i64_list, std::nullopt});
  apg.infer = avg_pool2d_grad_infer;
  apg.kernel = nn::avg_pool2d_grad_kernel;
  apg.emit_c = c_avg_pool(true);
  apg.vjp = [](const VjpArgs& a) {
    return grads({make_op("avg_pool2d", {a.cotangent}, avg_attrs(a.node.attrs))});
  };
  for (auto& [x, attrs] : avg_geometries())
    apg.test.cases.push_back({{pooled(x, attrs)}, with(attrs, "input_size", I64List{x.shape[2], x.shape[3]})});
}

}  // namespace mg::ir
