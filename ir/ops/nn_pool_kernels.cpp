// Pooling kernels (NCHW, f32/f64), one (n, c) plane per OpenMP task. Windows are clipped
// to the input; max pooling picks, as PyTorch's CPU kernel, the first maximum in row-major
// window order (a NaN always wins; an all -inf window its first element), and its gradient
// / select kernels recompute that same argmax, so forward, gradient and select agree on
// ties. avg_pool2d divides as PyTorch's: divisor_override, else the window clipped to the
// padded input (count_include_pad) or to the input.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
#include <limits>
#include <type_traits>
#include <vector>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/nn_kernels.hpp"

namespace mg::ir::nn {

namespace {

constexpr std::int64_t kParallelMin = 1 << 15;

template <class F>
void visit_float(const Node& node, DType t, F&& f) {
  if (t == DType::f32) f(float{});
  else if (t == DType::f64) f(double{});
  else MG_ASSERT(false, node.op_name() + ": unsupported dtype " + std::string(name_of(t)));
}

// Output (i, j)'s window: rows [h0, h1), columns [w0, w1) of the input, clipped; hs/ws are
// the unclipped starts (negative inside the padding).
struct Window {
  std::int64_t hs, ws, h0, h1, w0, w1;
};
Window window(const PoolGeom& g, std::int64_t i, std::int64_t j) {
  const std::int64_t hs = i * g.sh - g.ph, ws = j * g.sw - g.pw;
  return {hs, ws, std::max<std::int64_t>(hs, 0), std::min(hs + g.kh, g.H),
          std::max<std::int64_t>(ws, 0), std::min(ws + g.kw, g.W)};
}

// What a window's sum is divided by: divisor_override (0: none), else PyTorch's pool_size
// (padding included, the window clipped to the padded input, so ceil_mode's overhang past
// the right padding does not count) or only the real elements.
struct AvgDivisor {
  bool include_pad;
  std::int64_t override_;
  explicit AvgDivisor(const Attrs& a)
      : include_pad(a.boolean("count_include_pad")), override_(a.i64("divisor_override")) {}
  std::int64_t operator()(const PoolGeom& g, const Window& w) const {
    if (override_ != 0) return override_;
    if (!include_pad) return (w.h1 - w.h0) * (w.w1 - w.w0);
    return (std::min(w.hs + g.kh, g.H + g.ph) - w.hs) * (std::min(w.ws + g.kw, g.W + g.pw) - w.ws);
  }
};

// The first position >= 0 of the dilated positions s, s + d, ..., s + d (k - 1); `size`
// (none) when none lies in [0, size).
std::int64_t first_inside(std::int64_t s, std::int64_t k, std::int64_t d, std::int64_t size) {
  const std::int64_t first = s >= 0 ? s : s + (-s + d - 1) / d * d;
  return first <= s + d * (k - 1) && first < size ? first : size;
}

// f(plane index) for every (n, c) plane, in parallel when the work is large.
template <class F>
void for_planes(const PoolGeom& g, F f) {
  const std::int64_t work = g.planes * g.Ho * g.Wo * g.kh * g.kw;
#pragma omp parallel for schedule(static) if (work >= kParallelMin && g.planes > 1)
  for (std::int64_t p = 0; p < g.planes; ++p) f(p);
}

// `take ? a : b` as bit blends: GCC compiles the ternary on floats to a branch, and on real
// activations the comparison is a coin flip.
template <class U, class X>
X blend(bool take, X a, X b) {
  const U mask = U{0} - U{take};
  return std::bit_cast<X>(static_cast<U>((std::bit_cast<U>(a) & mask) | (std::bit_cast<U>(b) & ~mask)));
}

// One window element (kernel row h, column offset `off`) against the best so far of the
// output columns [j0, j1); a compile-time stride for the usual 1 and 2.
template <class T, class I, std::int64_t SW>
void scan(const T* row, I base, std::int64_t sw, std::int64_t j0, std::int64_t j1, T* bv, I* bi) {
  using U = std::make_unsigned_t<I>;  // same width as T
  if constexpr (SW > 0) sw = SW;
  for (std::int64_t j = j0; j < j1; ++j) {
    const T v = row[j * sw];
    const bool take = (v > bv[j]) | (v != v);  // v != v: NaN wins
    bv[j] = blend<U>(take, v, bv[j]);
    bi[j] = blend<U>(take, static_cast<I>(base + j * sw), bi[j]);
  }
}

// for_window_argmax for 2x2 windows at stride 2 that all lie inside the plane (the usual
// CNN pooling). The sequential rule over a, b, c, d (row-major) equals the tree
// pick(pick(a, b), pick(c, d)) with pick(x, y) = y when y > x or y is NaN: first maximum,
// last NaN, either way. The picks are computed as 0/1 integers and the winners loaded by
// them: no float selects, which compilers turn into branches that mispredict on real
// activations (rows of 7-14 windows are too short for vector loops to pay), and no blends
// chained through every window (the element-by-element scan spent ~30 cycles per window).
template <class T, class I, class F>
void for_window_argmax_2x2(const PoolGeom& g, const T* plane, I* best_i, F f) {
  const I W = static_cast<I>(g.W);
  for (std::int64_t i = 0; i < g.Ho; ++i) {
    const T* r0 = plane + 2 * i * g.W;
    const T* r1 = r0 + g.W;
    const I base = static_cast<I>(2 * i * g.W);
    for (std::int64_t j = 0; j < g.Wo; ++j) {
      const T* p0 = r0 + 2 * j;
      const T* p1 = r1 + 2 * j;
      // Picks as 0/1 integers and values loaded by them: no float select, no branch.
      const I tb = static_cast<I>((p0[1] > p0[0]) | (p0[1] != p0[1]));
      const I td = static_cast<I>((p1[1] > p1[0]) | (p1[1] != p1[1]));
      const T m1 = p0[tb], m2 = p1[td];
      const I t = static_cast<I>((m2 > m1) | (m2 != m2));
      best_i[j] = static_cast<I>(base + 2 * j) + tb + t * (W + td - tb);
    }
    for (std::int64_t j = 0; j < g.Wo; ++j) f(i * g.Wo + j, best_i[j]);
  }
}

// Calls f(window index, flat argmax index in the plane, or -1 for a window that holds no
// input element) for every output window: the one routing rule shared by max pooling, its
// gradient and its select (so ties agree). The argmax is each window's first maximum in
// row-major order, a NaN always winning.
// Why a row of windows at a time, element by element, with blends: a loop per window
// spent its time on bounds and mispredicted branches (pooling was a third of the CNN
// training step; this is 1.6-2.3x faster on its shapes).
template <class T, class F>
void for_window_argmax(const PoolGeom& g, const T* plane, F f) {
  using I = std::conditional_t<sizeof(T) == 4, std::int32_t, std::int64_t>;
  MG_ASSERT(g.H * g.W <= std::numeric_limits<I>::max(), "max_pool2d: plane too large for its index type");
  thread_local std::vector<T> best_v;  // per thread: for_planes calls this once per plane
  thread_local std::vector<I> best_i;
  best_v.resize(static_cast<std::size_t>(g.Wo));
  best_i.resize(static_cast<std::size_t>(g.Wo));
  if (g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 && g.dh == 1 && g.dw == 1 &&
      2 * g.Ho <= g.H && 2 * g.Wo <= g.W)
    return for_window_argmax_2x2<T, I>(g, plane, best_i.data(), f);
  for (std::int64_t i = 0; i < g.Ho; ++i) {
    const std::int64_t hs = i * g.sh - g.ph;  // rows are the same along the output row
    const std::int64_t h0 = first_inside(hs, g.kh, g.dh, g.H);
    for (std::int64_t j = 0; j < g.Wo; ++j) {  // the first element, as if all were -inf
      const std::int64_t w0 = first_inside(j * g.sw - g.pw, g.kw, g.dw, g.W);
      best_v[j] = -std::numeric_limits<T>::infinity();
      best_i[j] = static_cast<I>(h0 < g.H && w0 < g.W ? h0 * g.W + w0 : -1);
    }
    for (std::int64_t t = 0; t < g.kh; ++t) {
      const std::int64_t h = hs + t * g.dh;
      if (h < 0 || h >= g.H) continue;
      for (std::int64_t u = 0; u < g.kw; ++u) {
        // Output columns whose window column j * sw - pw + u dw lies inside the input.
        const std::int64_t off = u * g.dw - g.pw;
        const std::int64_t j0 = off >= 0 ? 0 : (-off + g.sw - 1) / g.sw;
        const std::int64_t j1 = std::min(g.Wo, g.W - off > 0 ? (g.W - off - 1) / g.sw + 1 : 0);
        const T* row = plane + h * g.W + off;
        const I base = static_cast<I>(h * g.W + off);
        if (g.sw == 2) scan<T, I, 2>(row, base, 2, j0, j1, best_v.data(), best_i.data());
        else if (g.sw == 1) scan<T, I, 1>(row, base, 1, j0, j1, best_v.data(), best_i.data());
        else scan<T, I, 0>(row, base, g.sw, j0, j1, best_v.data(), best_i.data());
      }
    }
    for (std::int64_t j = 0; j < g.Wo; ++j) f(i * g.Wo + j, best_i[j]);
  }
}

}  // namespace

PoolGeom pool_geom(const Shape& x, const Shape& y, const Attrs& attrs) {
  const I64List& k = attrs.list("kernel_size");
  const I64List& s = attrs.list("stride");
  const I64List& p = attrs.list("padding");
  const AttrValue* d = attrs.find("dilation");
  const I64List dil = d ? std::get<I64List>(*d) : I64List{1, 1};
  return PoolGeom{x[0] * x[1], x[2], x[3], y[2], y[3], k[0], k[1], s[0], s[1], p[0], p[1], dil[0], dil[1]};
}

void max_pool2d_kernel(const KernelArgs& k) {
  const PoolGeom g = pool_geom(k.in[0]->shape(), k.out.shape(), k.node.attrs);
  visit_float(k.node, k.out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* x = k.in[0]->data<T>();
    T* y = k.out.data<T>();
    for_planes(g, [&](std::int64_t p) {
      const T* plane = x + p * g.H * g.W;
      T* out = y + p * g.Ho * g.Wo;
      for_window_argmax(g, plane, [&](std::int64_t o, std::int64_t a) {
        out[o] = a >= 0 ? plane[a] : -std::numeric_limits<T>::infinity();
      });
    });
  });
}

void max_pool2d_grad_kernel(const KernelArgs& k) {
  const PoolGeom g = pool_geom(k.in[0]->shape(), k.in[1]->shape(), k.node.attrs);
  visit_float(k.node, k.out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* x = k.in[0]->data<T>();
    const T* dy = k.in[1]->data<T>();
    T* dx = k.out.data<T>();
    for_planes(g, [&](std::int64_t p) {
      const T* plane = x + p * g.H * g.W;
      const T* gp = dy + p * g.Ho * g.Wo;
      T* out = dx + p * g.H * g.W;
      std::fill(out, out + g.H * g.W, T(0));
      for_window_argmax(g, plane, [&](std::int64_t o, std::int64_t a) {
        if (a >= 0) out[a] += gp[o];
      });
    });
  });
}

void max_pool2d_select_kernel(const KernelArgs& k) {
  const PoolGeom g = pool_geom(k.in[0]->shape(), k.out.shape(), k.node.attrs);
  visit_float(k.node, k.out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* x = k.in[0]->data<T>();
    const T* d = k.in[1]->data<T>();
    T* y = k.out.data<T>();
    for_planes(g, [&](std::int64_t p) {
      const T* plane = x + p * g.H * g.W;
      const T* dp = d + p * g.H * g.W;
      T* out = y + p * g.Ho * g.Wo;
      for_window_argmax(g, plane, [&](std::int64_t o, std::int64_t a) { out[o] = a >= 0 ? dp[a] : T(0); });
    });
  });
}

void avg_pool2d_kernel(const KernelArgs& k) {
  const PoolGeom g = pool_geom(k.in[0]->shape(), k.out.shape(), k.node.attrs);
  const AvgDivisor divisor(k.node.attrs);
  visit_float(k.node, k.out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* x = k.in[0]->data<T>();
    T* y = k.out.data<T>();
    for_planes(g, [&](std::int64_t p) {
      const T* plane = x + p * g.H * g.W;
      T* out = y + p * g.Ho * g.Wo;
      for (std::int64_t i = 0; i < g.Ho; ++i)
        for (std::int64_t j = 0; j < g.Wo; ++j) {
          const Window w = window(g, i, j);
          T sum = 0;
          for (std::int64_t h = w.h0; h < w.h1; ++h)
            for (std::int64_t c = w.w0; c < w.w1; ++c) sum += plane[h * g.W + c];
          out[i * g.Wo + j] = sum / static_cast<T>(divisor(g, w));
        }
    });
  });
}

void avg_pool2d_grad_kernel(const KernelArgs& k) {
  const PoolGeom g = pool_geom(k.out.shape(), k.in[0]->shape(), k.node.attrs);
  const AvgDivisor divisor(k.node.attrs);
  visit_float(k.node, k.out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const T* dy = k.in[0]->data<T>();
    T* dx = k.out.data<T>();
    for_planes(g, [&](std::int64_t p) {
      const T* gp = dy + p * g.Ho * g.Wo;
      T* out = dx + p * g.H * g.W;
      std::fill(out, out + g.H * g.W, T(0));
      for (std::int64_t i = 0; i < g.Ho; ++i)
        for (std::int64_t j = 0; j < g.Wo; ++j) {
          const Window w = window(g, i, j);
          const T v = gp[i * g.Wo + j] / static_cast<T>(divisor(g, w));
          for (std::int64_t h = w.h0; h < w.h1; ++h)
            for (std::int64_t c = w.w0; c < w.w1; ++c) out[h * g.W + c] += v;
        }
    });
  });
}

}  // namespace mg::ir::nn
