// Single-axis ops of the reduce family: softmax, log_softmax (same shape out) and argmax,
// argmin (the axis reduced to an i64 index). The `axis` attribute arrives normalised
// (0 <= axis < rank, so a 0-d input is rejected). Kernels view the input as
// outer x len x inner around the axis and keep every inner loop contiguous.
#include <cmath>

// GCC 12 flags its own AVX-512 intrinsics (`__m512d __Y = __Y;`) as uninitialised when
// xsimd's exp is not inlined: the false positive meson.build notes, here as -Wuninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <xsimd/xsimd.hpp>

#include "minigrad/ir/ops/elementwise_kernel.hpp"
#pragma GCC diagnostic pop
#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/ops/reduce_kernel.hpp"
#include "minigrad/ir/ops/rules.hpp"

namespace mg::ir {

void register_softmax_ops();

namespace {

using namespace rules;
using kernels::kReduceBlock;
using kernels::kReduceParallel;

// Softmax tiles are wider than reduction tiles: each of their three passes streams whole
// rows of the tile, and longer contiguous runs keep those passes near memory speed.
constexpr std::int64_t kSoftmaxBlock = 1024;

struct AxisView {
  std::int64_t outer = 1, len = 1, inner = 1;
};
AxisView axis_view(const Shape& s, std::int64_t axis) {
  AxisView v;
  for (std::int64_t d = 0; d < static_cast<std::int64_t>(s.size()); ++d)
    (d < axis ? v.outer : d == axis ? v.len : v.inner) *= s[static_cast<std::size_t>(d)];
  return v;
}

std::int64_t checked_axis(const Type& t, const Attrs& attrs) {
  std::int64_t axis = attrs.i64("axis");
  require(t.rank() >= 1, "expects rank >= 1 (an axis to work along)");
  require(normalize_axis(axis, t.rank()) == axis, "expects a normalised axis (0 <= axis < rank)");
  return axis;
}

// ---- softmax / log_softmax ----

// Tiles: (o, block of up to kSoftmaxBlock columns); when inner == 1 a tile is a whole row.
// Pass 1: m = max; pass 2: out = exp(x - m), s = sum (f64); pass 3: normalise.
template <class T, bool Log>
void softmax_tile(const T* x, T* out, std::int64_t len, std::int64_t stride, std::int64_t w) {
  using kernels::adapt;
  T m[kSoftmaxBlock];
  double s[kSoftmaxBlock];
  T* mp = m;  // xt::adapt wants a non-const pointer
  for (std::int64_t i = 0; i < w; ++i) {
    m[i] = -INFINITY;
    s[i] = 0;
  }
  for (std::int64_t r = 0; r < len; ++r)
    for (std::int64_t i = 0; i < w; ++i) m[i] = std::max(m[i], x[r * stride + i]);
  for (std::int64_t r = 0; r < len; ++r) {
    auto o = adapt(out + r * stride, w);
    xt::noalias(o) = xt::exp(adapt(const_cast<T*>(x) + r * stride, w) - adapt(mp, w));
    for (std::int64_t i = 0; i < w; ++i) s[i] += static_cast<double>(out[r * stride + i]);
  }
  if constexpr (Log) {
    T ls[kSoftmaxBlock];
    for (std::int64_t i = 0; i < w; ++i) ls[i] = static_cast<T>(std::log(s[i]));
    for (std::int64_t r = 0; r < len; ++r)
      for (std::int64_t i = 0; i < w; ++i) out[r * stride + i] = (x[r * stride + i] - m[i]) - ls[i];
  } else {
    T inv[kSoftmaxBlock];
    for (std::int64_t i = 0; i < w; ++i) inv[i] = static_cast<T>(1.0 / s[i]);
    for (std::int64_t r = 0; r < len; ++r)
      for (std::int64_t i = 0; i < w; ++i) out[r * stride + i] *= inv[i];
  }
}

// A contiguous row (inner == 1), by explicit SIMD batches (attention's [.., L, S] scores
// land here; the generic folds were twice as slow). Every element goes through xsimd's exp
// (the tail in one padded batch), so a value's result does not depend on its position.
// The max need not propagate NaN: a NaN in the row makes the sum, and so every output, NaN
// anyway, as does +inf (inf - inf) and a row of only -inf.
template <class T, bool Log>
void softmax_row(const T* x, T* out, std::int64_t len) {
  using B = xsimd::batch<T>;
  constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
  const std::int64_t full = len - len % W;
  B m0(-INFINITY), m1(-INFINITY);
  std::int64_t i = 0;
  for (; i + 2 * W <= full; i += 2 * W) {
    m0 = xsimd::max(m0, B::load_unaligned(x + i));
    m1 = xsimd::max(m1, B::load_unaligned(x + i + W));
  }
  for (; i < full; i += W) m0 = xsimd::max(m0, B::load_unaligned(x + i));
  alignas(64) T lanes[W];
  xsimd::max(m0, m1).store_aligned(lanes);
  T m = -INFINITY;
  for (std::int64_t j = 0; j < W; ++j) m = lanes[j] > m ? lanes[j] : m;
  for (std::int64_t j = full; j < len; ++j) m = x[j] > m ? x[j] : m;
  const B mb(m);
  B s0(T(0)), s1(T(0));
  for (i = 0; i + 2 * W <= full; i += 2 * W) {
    const B e0 = xsimd::exp(B::load_unaligned(x + i) - mb), e1 = xsimd::exp(B::load_unaligned(x + i + W) - mb);
    e0.store_unaligned(out + i);
    e1.store_unaligned(out + i + W);
    s0 += e0;
    s1 += e1;
  }
  for (; i < full; i += W) {
    const B e = xsimd::exp(B::load_unaligned(x + i) - mb);
    e.store_unaligned(out + i);
    s0 += e;
  }
  double s = 0;
  (s0 + s1).store_aligned(lanes);
  for (std::int64_t j = 0; j < W; ++j) s += static_cast<double>(lanes[j]);
  if (full < len) {  // the tail, padded with -inf (exp gives 0)
    for (std::int64_t j = 0; j < W; ++j) lanes[j] = full + j < len ? x[full + j] : T(-INFINITY);
    xsimd::exp(B::load_aligned(lanes) - mb).store_aligned(lanes);
    for (std::int64_t j = 0; j < len - full; ++j) {
      out[full + j] = lanes[j];
      s += static_cast<double>(lanes[j]);
    }
  }
  if constexpr (Log) {
    const T ls = static_cast<T>(std::log(s));
    for (std::int64_t j = 0; j < len; ++j) out[j] = (x[j] - m) - ls;
  } else {
    const T inv = static_cast<T>(1.0 / s);
    for (std::int64_t j = 0; j < len; ++j) out[j] *= inv;
  }
}

template <bool Log>
void softmax_kernel(const KernelArgs& k) {
  kernels::visit_numeric<false>(k.out.dtype(), k.node.op_name(), [&](auto tag) {
    using T = decltype(tag);
    const AxisView v = axis_view(k.in[0]->shape(), k.node.attrs.i64("axis"));
    const T* x = k.in[0]->data<T>();
    T* out = k.out.data<T>();
    const std::int64_t n = k.out.numel();
    if (n == 0) return;
    const std::int64_t nblocks = (v.inner + kSoftmaxBlock - 1) / kSoftmaxBlock;
    if (v.inner == 1) {
      kernels::for_each_task(v.outer, n >= kReduceParallel,
                         [&](std::int64_t o) { softmax_row<T, Log>(x + o * v.len, out + o * v.len, v.len); });
      return;
    }
    kernels::for_each_task(v.outer * nblocks, n >= kReduceParallel, [&](std::int64_t t) {
      const std::int64_t o = t / nblocks, i0 = (t % nblocks) * kSoftmaxBlock;
      const std::int64_t off = o * v.len * v.inner + i0;
      softmax_tile<T, Log>(x + off, out + off, v.len, v.inner, std::min(kSoftmaxBlock, v.inner - i0));
    });
  });
}

// ---- softmax_grad: y (g - sum(g y)), softmax's VJP in one pass ----
// Five kernels before (mul, reduce_sum, broadcast_to, sub, mul), each a pass over an
// attention-sized [.., L, S] array; here one read of y and g and one write per row.

template <class T>
void softmax_grad_row(const T* y, const T* g, T* out, std::int64_t len) {
  using B = xsimd::batch<T>;
  constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
  const std::int64_t full = len - len % W;
  B s0(T(0)), s1(T(0));
  std::int64_t i = 0;
  for (; i + 2 * W <= full; i += 2 * W) {
    s0 = xsimd::fma(B::load_unaligned(g + i), B::load_unaligned(y + i), s0);
    s1 = xsimd::fma(B::load_unaligned(g + i + W), B::load_unaligned(y + i + W), s1);
  }
  for (; i < full; i += W) s0 = xsimd::fma(B::load_unaligned(g + i), B::load_unaligned(y + i), s0);
  alignas(64) T lanes[W];
  (s0 + s1).store_aligned(lanes);
  double s = 0;
  for (std::int64_t j = 0; j < W; ++j) s += static_cast<double>(lanes[j]);
  for (std::int64_t j = full; j < len; ++j) s += static_cast<double>(g[j]) * static_cast<double>(y[j]);
  const T st = static_cast<T>(s);
  for (std::int64_t j = 0; j < len; ++j) out[j] = y[j] * (g[j] - st);
}

void softmax_grad_kernel(const KernelArgs& k) {
  kernels::visit_numeric<false>(k.out.dtype(), k.node.op_name(), [&](auto tag) {
    using T = decltype(tag);
    const AxisView v = axis_view(k.in[0]->shape(), k.node.attrs.i64("axis"));
    const T* y = k.in[0]->data<T>();
    const T* g = k.in[1]->data<T>();
    T* out = k.out.data<T>();
    const std::int64_t n = k.out.numel();
    if (n == 0) return;
    if (v.inner == 1) {
      kernels::for_each_task(v.outer, n >= kReduceParallel, [&](std::int64_t o) {
        softmax_grad_row<T>(y + o * v.len, g + o * v.len, out + o * v.len, v.len);
      });
      return;
    }
    const std::int64_t nblocks = (v.inner + kSoftmaxBlock - 1) / kSoftmaxBlock;
    kernels::for_each_task(v.outer * nblocks, n >= kReduceParallel, [&](std::int64_t t) {
      const std::int64_t o = t / nblocks, i0 = (t % nblocks) * kSoftmaxBlock;
      const std::int64_t off = o * v.len * v.inner + i0, w = std::min(kSoftmaxBlock, v.inner - i0);
      double s[kSoftmaxBlock] = {};
      for (std::int64_t r = 0; r < v.len; ++r)
        for (std::int64_t i = 0; i < w; ++i) {
          const std::int64_t e = off + r * v.inner + i;
          s[i] += static_cast<double>(g[e]) * static_cast<double>(y[e]);
        }
      for (std::int64_t r = 0; r < v.len; ++r)
        for (std::int64_t i = 0; i < w; ++i) {
          const std::int64_t e = off + r * v.inner + i;
          out[e] = y[e] * (g[e] - static_cast<T>(s[i]));
        }
    });
  });
}

// ---- argmax / argmin ----

// Whether v replaces the best so far: strictly better, or the first NaN (NaN counts as
// the extreme, as PyTorch). Ties keep the earlier index.
template <bool Max, class T>
bool better(T v, T best) {
  if (v != v) return best == best;
  return Max ? v > best : v < best;
}

// A contiguous row: the extreme first (NaN-propagating, vectorisable), then its first index.
template <bool Max, class T>
std::int64_t arg_row(const T* p, std::int64_t n) {
  using R = std::conditional_t<Max, kernels::MaxOp<T>, kernels::MinOp<T>>;
  const T m = kernels::fold_run<R, false>(R::init(), p, n, T(0));
  for (std::int64_t i = 0; i < n; ++i)
    if (m != m ? p[i] != p[i] : p[i] == m) return i;
  return 0;
}

template <bool Max>
void arg_kernel(const KernelArgs& k) {
  kernels::visit_numeric<true>(k.in[0]->dtype(), k.node.op_name(), [&](auto tag) {
    using T = decltype(tag);
    const AxisView v = axis_view(k.in[0]->shape(), k.node.attrs.i64("axis"));
    const T* x = k.in[0]->data<T>();
    auto* out = k.out.data<std::int64_t>();
    const bool par = v.outer * v.len * v.inner >= kReduceParallel;
    if (v.inner == 1) {
#pragma omp parallel for schedule(static) if (par)
      for (std::int64_t o = 0; o < v.outer; ++o) out[o] = arg_row<Max>(x + o * v.len, v.len);
      return;
    }
    const std::int64_t nblocks = (v.inner + kReduceBlock - 1) / kReduceBlock;
#pragma omp parallel for schedule(static) if (par)
    for (std::int64_t t = 0; t < v.outer * nblocks; ++t) {
      const std::int64_t o = t / nblocks, i0 = (t % nblocks) * kReduceBlock;
      const std::int64_t w = std::min(kReduceBlock, v.inner - i0);
      const T* p = x + o * v.len * v.inner + i0;
      T best[kReduceBlock];
      std::int64_t idx[kReduceBlock];
      for (std::int64_t i = 0; i < w; ++i) {
        best[i] = p[i];
        idx[i] = 0;
      }
      for (std::int64_t r = 1; r < v.len; ++r) {
        const T* row = p + r * v.inner;
        for (std::int64_t i = 0; i < w; ++i) {
          const bool b = better<Max>(row[i], best[i]);
          best[i] = b ? row[i] : best[i];
          idx[i] = b ? r : idx[i];
        }
      }
      for (std::int64_t i = 0; i < w; ++i) out[o * v.inner + i0 + i] = idx[i];
    }
  });
}

OpDef& def_arg(const char* name, const char* doc, KernelFn kernel) {
  OpDef& d = define_op(name);
  d.doc = doc;
  d.attrs = {{"axis", AttrKind::i64, std::nullopt}, {"keepdim", AttrKind::boolean, AttrValue{false}}};
  d.infer = [](std::span<const Type> in, const Attrs& attrs) {
    require(allowed(in[0].dtype, Dtypes::numeric), "expects " + describe(Dtypes::numeric));
    std::int64_t axis = checked_axis(in[0], attrs);
    auto a = static_cast<std::size_t>(axis);
    require(in[0].shape[a] > 0, "cannot take an index over an empty axis");
    Shape s = in[0].shape;
    if (attrs.boolean("keepdim")) s[a] = 1;
    else s.erase(s.begin() + axis);
    return Type{DType::i64, s};
  };
  d.kernel = std::move(kernel);
  d.not_differentiable = "integer output (an index)";
  d.test.grad_order = 0;
  d.test.cases = {
      {{Type{DType::f64, {3, 4}}}, {{"axis", std::int64_t{1}}, {"keepdim", false}}},
      {{Type{DType::f64, {2, 3, 4}}}, {{"axis", std::int64_t{0}}, {"keepdim", true}}},
      {{Type{DType::f64, {5}}}, {{"axis", std::int64_t{0}}, {"keepdim", false}}},
  };
  return d;
}

OpDef& def_softmax(const char* name, const char* doc, KernelFn kernel, VjpFn vjp) {
  OpDef& d = define_op(name);
  d.doc = doc;
  d.attrs = {{"axis", AttrKind::i64, std::nullopt}};
  d.infer = [](std::span<const Type> in, const Attrs& attrs) {
    require(allowed(in[0].dtype, Dtypes::floats), "expects " + describe(Dtypes::floats));
    checked_axis(in[0], attrs);
    return in[0];
  };
  d.kernel = std::move(kernel);
  d.vjp = std::move(vjp);
  d.test.cases = {
      {{Type{DType::f64, {3, 4}}}, {{"axis", std::int64_t{1}}}},
      {{Type{DType::f64, {2, 3, 4}}}, {{"axis", std::int64_t{1}}}},
      {{Type{DType::f64, {5}}}, {{"axis", std::int64_t{0}}}},
  };
  return d;
}

// sum(v, axis) with keepdim, broadcast back to v's shape.
Value sum_along(Value v, std::int64_t axis) {
  return broadcast_to(reduce_sum(v, {axis}, true), v.shape());
}

Value softmax_grad(Value y, Value g, std::int64_t axis) {
  return make_op(op("softmax_grad"), {y, g}, {{"axis", axis}});
}

// ---- C99 emission ----------------------------------------------------------------------

// One (outer, inner) column per iteration: p = x + b walks the axis with stride `inner`.
void c_columns(const CLoopArgs& a, const std::string& body) {
  const AxisView v = axis_view(a.in_types[0].shape, a.node.attrs.i64("axis"));
  if (v.outer * v.inner == 0 || v.len == 0) return;
  c_for(a.w, "t", v.outer * v.inner, v.outer * v.len * v.inner, false);
  a.w.line("const int64_t b = (t / " + std::to_string(v.inner) + ") * " + std::to_string(v.len * v.inner) + " + t % " +
           std::to_string(v.inner) + ";");
  std::string s = body;
  for (auto [key, val] : {std::pair<std::string, std::string>{"$LEN", std::to_string(v.len)},
                          {"$IN", std::to_string(v.inner)}, {"$T", c_type(a.in_types[0].dtype)},
                          {"$X", a.in[0]}, {"$O", a.out}}) {
    for (std::size_t p; (p = s.find(key)) != std::string::npos;) s.replace(p, key.size(), val);
  }
  a.w.raw(s);
  a.w.close();
}

EmitC c_softmax_grad() {
  return c_loops([](const CLoopArgs& a) {
    // simd: the f64 sum reassociated (as the interpreter's SIMD row); scalar, both passes
    // cost attention's backward 40% more.
    const std::string body =
        "    double s = 0;\n    int64_t r;\n"
        "    MG_OMP_GCC(omp simd reduction(+:s))\n"
        "    for (r = 0; r < $LEN; ++r) s += (double)$G[b + r * $IN] * (double)$X[b + r * $IN];\n"
        "    { const $T st = ($T)s;\n"
        "      MG_OMP(omp simd)\n"
        "      for (r = 0; r < $LEN; ++r) $O[b + r * $IN] = $X[b + r * $IN] * ($G[b + r * $IN] - st); }\n";
    std::string with_g = body;
    for (std::size_t p; (p = with_g.find("$G")) != std::string::npos;) with_g.replace(p, 2, a.in[1]);
    c_columns(a, with_g);
  });
}

// softmax's (and log_softmax's) f32 exp, inlined so the exp pass vectorises without a call per vector: glibc's
// 8-wide expf (libmvec) was 60% of C99 attention's softmax, and other libcs have no
// vector expf at all. Cephes' expf (range reduction by ln 2 in two parts, a degree-6
// polynomial, 2^n by the exponent bits): <= 1.5 ulp. Arguments are x - max <= 0: below
// -86.5 it returns 0 (not the subnormal-range 1e-38: the output is relative to the row's
// sum >= 1, so that is far below f32 resolution; it also keeps 2^n normal, as a
// subnormal product costs a microcode assist per lane); NaN stays NaN, +inf gives +inf.
constexpr const char* kSoftmaxExpf =
    "static inline float mg_softmax_expf(float x) {\n"
    "  const float xc = x > -86.5f ? (x < 88.7f ? x : 88.7f) : -86.5f;  /* NaN -> -86.5: n stays finite */\n"
    "  const float n = (xc * 1.44269504088896341f + 12582912.f) - 12582912.f;  /* round(x / ln 2) */\n"
    "  const float r = (xc - n * 0.693359375f) - n * -2.12194440e-4f;\n"
    "  float p = 1.9875691500e-4f;\n"
    "  p = p * r + 1.3981999507e-3f;\n  p = p * r + 8.3334519073e-3f;\n  p = p * r + 4.1665795894e-2f;\n"
    "  p = p * r + 1.6666665459e-1f;\n  p = p * r + 5.0000001201e-1f;\n  p = p * r * r + r + 1.f;\n"
    "  { union { int32_t i; float f; } e;\n    e.i = ((int32_t)n + 127) << 23;\n"
    "    return x != x ? x : x < -86.5f ? 0.f : x > 88.7f ? (float)INFINITY : p * e.f; }\n"
    "}\n";

template <bool Log>
EmitC c_softmax() {
  return c_loops([](const CLoopArgs& a) {
    const DType t = a.node.type.dtype;
    std::string ex = c_math("exp", t);
    if (t == f32) {
      a.support("mg_softmax_expf", kSoftmaxExpf);
      ex = "mg_softmax_expf";
    }
    const std::string inf = t == f32 ? "INFINITY" : "(double)INFINITY";
    // simd reductions (max with a NaN flag, so a NaN still wins; the sum reassociated,
    // as the interpreter's vectorised fold): the scalar passes were a third of attention.
    // GCC only (MG_OMP_GCC): clang vectorises neither a float max nor expf here.
    // The sum: f32 lanes for rows up to 1024 (as the interpreter's SIMD row; the f64
    // conversions cost attention's softmax 30%), f64 for longer rows (a vocabulary), where
    // a scalar f32 sum (clang) would lose digits.
    const bool f32_sum = t == f32 && axis_view(a.in_types[0].shape, a.node.attrs.i64("axis")).len <= 1024;
    const std::string acc = f32_sum ? "float" : "double";
    std::string body =
        "    $T m = -" + inf + ";\n    " + acc + " s = 0;\n    int64_t r;\n    int bad = 0;\n"
        "    MG_OMP_GCC(omp simd reduction(max:m) reduction(|:bad))\n"
        "    for (r = 0; r < $LEN; ++r) { const $T x = $X[b + r * $IN]; m = x > m ? x : m; bad |= x != x; }\n"
        "    if (bad) m = ($T)NAN;\n"
        "    MG_OMP_GCC(omp simd reduction(+:s))\n"
        "    for (r = 0; r < $LEN; ++r) { const $T e = " + ex + "($X[b + r * $IN] - m); $O[b + r * $IN] = e; s += (" + acc + ")e; }\n";
    if (Log)
      body += "    { const $T ls = ($T)log(s);\n      for (r = 0; r < $LEN; ++r) $O[b + r * $IN] = ($X[b + r * $IN] - m) - ls; }\n";
    else
      body += "    { const $T inv = ($T)(1.0 / s);\n      MG_OMP(omp simd)\n      for (r = 0; r < $LEN; ++r) $O[b + r * $IN] *= inv; }\n";
    c_columns(a, body);
  });
}

// argmax/argmin: the first extreme along the axis; a NaN counts as the extreme.
EmitC c_arg(bool max) {
  return c_loops([max](const CLoopArgs& a) {
    const AxisView v = axis_view(a.in_types[0].shape, a.node.attrs.i64("axis"));
    const std::string cmp = max ? ">" : "<";
    // Outputs are laid out (outer, inner): the column index t is the output index.
    c_columns(a, "    $T best = $X[b];\n    int64_t idx = 0, r;\n"
                 "    for (r = 1; r < $LEN; ++r) {\n      const $T x = $X[b + r * $IN];\n"
                 "      if ((x != x) ? (best == best) : (x " + cmp + " best)) { best = x; idx = r; }\n    }\n"
                 "    $O[t] = idx;\n");
    (void)v;
  });
}

}  // namespace

void register_softmax_ops() {
  def_softmax("softmax",
              "exp(x - max) / sum(exp(x - max)) along `axis` (rank >= 1); NaN along a slice with a "
              "NaN, a +inf or only -inf (as PyTorch)",
              softmax_kernel<false>, [](const VjpArgs& a) {  // y (g - sum(g y))
                return grads({softmax_grad(a.out, a.cotangent, a.node.attrs.i64("axis"))});
              });
  defined_op("softmax").emit_c = c_softmax<false>();

  def_softmax("log_softmax",
              "(x - max) - log(sum(exp(x - max))) along `axis` (rank >= 1); NaN along a slice with a "
              "NaN, a +inf or only -inf (as PyTorch)",
              softmax_kernel<true>, [](const VjpArgs& a) {  // g - exp(y) sum(g)
                Value g = a.cotangent;
                return grads({sub(g, mul(exp(a.out), sum_along(g, a.node.attrs.i64("axis"))))});
              });
  defined_op("log_softmax").emit_c = c_softmax<true>();

  OpDef& sg = define_op("softmax_grad");
  sg.doc = "y (g - sum(g y)) along `axis`, y and g of one float type: softmax's VJP (y its output, g the "
           "cotangent) in one pass";
  sg.arity = 2;
  sg.attrs = {{"axis", AttrKind::i64, std::nullopt}};
  sg.infer = [](std::span<const Type> in, const Attrs& attrs) {
    require(allowed(in[0].dtype, Dtypes::floats), "expects " + describe(Dtypes::floats));
    require(in[1] == in[0], "expects y and g of one type, got " + to_string(in[0]) + " and " + to_string(in[1]));
    checked_axis(in[0], attrs);
    return in[0];
  };
  sg.kernel = softmax_grad_kernel;
  // out = y (g - s), s = sum(g y): d/dg = softmax_grad(y, c); d/dy = c (g - s) - g sum(c y).
  sg.vjp = [](const VjpArgs& a) {
    const std::int64_t axis = a.node.attrs.i64("axis");
    Value y = a.in[0], g = a.in[1], c = a.cotangent;
    Value dy = sub(mul(c, sub(g, sum_along(mul(g, y), axis))), mul(g, sum_along(mul(c, y), axis)));
    return grads({dy, softmax_grad(y, c, axis)});
  };
  sg.emit_c = c_softmax_grad();
  sg.test.cases = {
      {{Type{DType::f64, {3, 4}}, Type{DType::f64, {3, 4}}}, {{"axis", std::int64_t{1}}}},
      {{Type{DType::f64, {2, 3, 4}}, Type{DType::f64, {2, 3, 4}}}, {{"axis", std::int64_t{1}}}},
      {{Type{DType::f64, {2, 37}}, Type{DType::f64, {2, 37}}}, {{"axis", std::int64_t{1}}}},  // a SIMD tail
      {{Type{DType::f64, {5}}, Type{DType::f64, {5}}}, {{"axis", std::int64_t{0}}}},
  };

  def_arg("argmax",
          "index (i64) of the first maximum along `axis` (f32/f64/i64 input); NaN counts as the "
          "maximum; rank >= 1 and a non-empty axis required",
          arg_kernel<true>);
  defined_op("argmax").emit_c = c_arg(true);

  def_arg("argmin",
          "index (i64) of the first minimum along `axis` (f32/f64/i64 input); NaN counts as the "
          "minimum; rank >= 1 and a non-empty axis required",
          arg_kernel<false>);
  defined_op("argmin").emit_c = c_arg(false);
}

}  // namespace mg::ir
