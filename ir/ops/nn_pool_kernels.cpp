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

// 2x2 windows (nn_kernels.hpp's is_2x2). The sequential rule over a window's a, b (top row), c, d (bottom row) equals the tree
// pick(pick(a, b), pick(c, d)), pick(x, y) taking y when y > x or y is NaN: the first
// maximum, a later NaN replacing an earlier one. The 2x2 kernels below make the picks
// along an output row as selects of loaded values, each on one comparison (GCC does not
// vectorise a select on two comparisons or'ed), so the row loops vectorise: no branch, no
// load that depends on a comparison, no argmax index. (Scalar, with index arithmetic,
// they took 1.4 ns a window: a quarter of the interpreter's CNN step was its pools.)
// vy when pick(x, y) takes y, else vx.
template <class T>
T choose(T x, T y, T vx, T vy) {
  const T t = y > x ? vy : vx;
  return y != y ? vy : t;
}
template <class T>
T pick(T x, T y) {
  return choose(x, y, x, y);
}

template <class T>
void max_pool_row_2x2(const T* __restrict r0, const T* __restrict r1, T* __restrict y, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) y[j] = pick(pick(r0[2 * j], r0[2 * j + 1]), pick(r1[2 * j], r1[2 * j + 1]));
}

// dx of a row pair: the window's gradient at its argmax, 0 at its other three elements.
template <class T>
void max_pool_grad_row_2x2(const T* __restrict r0, const T* __restrict r1, const T* __restrict gy, T* __restrict d0,
                           T* __restrict d1, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) {
    const T a = r0[2 * j], b = r0[2 * j + 1], c = r1[2 * j], d = r1[2 * j + 1];
    // 0 + g, as PyTorch (and the C99 backend) add g into a zeroed dx: a -0 lands as +0.
    const T top = pick(a, b), bot = pick(c, d), g = gy[j] + T(0);
    const T g_top = choose(top, bot, g, T(0)), g_bot = choose(top, bot, T(0), g);
    d0[2 * j] = choose(a, b, g_top, T(0));
    d0[2 * j + 1] = choose(a, b, T(0), g_top);
    d1[2 * j] = choose(c, d, g_bot, T(0));
    d1[2 * j + 1] = choose(c, d, T(0), g_bot);
  }
}

// select: the element of `d` at the window's argmax (d0, d1: d's rows at the window's).
template <class T>
void max_pool_select_row_2x2(const T* __restrict r0, const T* __restrict r1, const T* __restrict d0,
                             const T* __restrict d1, T* __restrict y, std::int64_t n) {
  for (std::int64_t j = 0; j < n; ++j) {
    const T a = r0[2 * j], b = r0[2 * j + 1], c = r1[2 * j], d = r1[2 * j + 1];
    const T top = pick(a, b), bot = pick(c, d);
    y[j] = choose(top, bot, choose(a, b, d0[2 * j], d0[2 * j + 1]), choose(c, d, d1[2 * j], d1[2 * j + 1]));
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
      if (is_2x2(g)) {
        for (std::int64_t i = 0; i < g.Ho; ++i)
          max_pool_row_2x2(plane + 2 * i * g.W, plane + (2 * i + 1) * g.W, out + i * g.Wo, g.Wo);
        return;
      }
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
      if (is_2x2(g)) {  // every element in at most one window: written once, no scatter
        for (std::int64_t i = 0; i < g.Ho; ++i) {
          T* d0 = out + 2 * i * g.W;
          T* d1 = d0 + g.W;
          max_pool_grad_row_2x2(plane + 2 * i * g.W, plane + (2 * i + 1) * g.W, gp + i * g.Wo, d0, d1, g.Wo);
          std::fill(d0 + 2 * g.Wo, d0 + g.W, T(0));  // a last odd column
          std::fill(d1 + 2 * g.Wo, d1 + g.W, T(0));
        }
        std::fill(out + 2 * g.Ho * g.W, out + g.H * g.W, T(0));  // a last odd row
        return;
      }
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
      if (is_2x2(g)) {
        for (std::int64_t i = 0; i < g.Ho; ++i)
          max_pool_select_row_2x2(plane + 2 * i * g.W, plane + (2 * i + 1) * g.W, dp + 2 * i * g.W,
                                  dp + (2 * i + 1) * g.W, out + i * g.Wo, g.Wo);
        return;
      }
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
