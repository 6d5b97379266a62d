// Conv kernels: im2col + GEMM (one per group), col2im for the input gradient. Small
// per-sample GEMMs run in one OpenMP loop over the batch with per-thread scratch, on the
// C99 backend's in-place tiles and dot-product blocks where the library has them for this
// CPU (native_kernels.hpp), else on OpenBLAS (which keeps those on one thread); larger
// convs put the columns of a chunk of the batch side by side for wide GEMMs that OpenBLAS
// threads. Pointwise convs (1x1, stride 1, no padding) skip im2col. Scratch is bounded
// (chunks) and reused per thread. Invariant: outputs are fully overwritten, also when a
// summed-over dim (batch, channels) is empty.
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <memory>

#include <omp.h>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/native_kernels.hpp"
#include "minigrad/ir/ops/nn_kernels.hpp"

namespace mg::ir::nn {

namespace {

constexpr std::int64_t kParallelMin = 1 << 15;  // elements touched before OpenMP pays off
constexpr std::int64_t kColBudget = 1 << 21;    // elements of im2col scratch per chunk
// OpenBLAS runs a GEMM on one thread when m*n*k <= 65536 * GEMM_MULTITHREAD_THRESHOLD (4).
constexpr double kBlasSerialMNK = 65536.0 * 4;

// Row-major C[M,N] = op(A)[M,K] op(B)[K,N] + beta C.
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const float* a,
          std::int64_t lda, const float* b, std::int64_t ldb, float beta, float* c, std::int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0f, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}
void gemm(bool ta, bool tb, std::int64_t m, std::int64_t n, std::int64_t k, const double* a,
          std::int64_t lda, const double* b, std::int64_t ldb, double beta, double* c, std::int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
              static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), 1.0, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

// One (sample, group) product of the per-sample path: C[m,n] = op(A)[m,k] @ B[k,n], B's
// rows contiguous. `ours`: the C99 backend's register tiles reading B in place (at 8-72
// rows, packing B cost as much as the tiles; OpenBLAS took twice their time on example
// 05's convs).
template <class T>
void sample_product(const native::Kernels<T>* ours, bool ta, std::int64_t m, std::int64_t n, std::int64_t k,
                    const T* a, std::int64_t lda, const T* b, T* c) {
  if (ours) return ours->conv_tiles(m, n, k, a, ta ? 1 : lda, ta ? lda : 1, b, n, c);
  gemm(ta, false, m, n, k, a, lda, b, n, T(0), c, n);
}

// Per-thread scratch that only grows; uninitialised. Slot 0: a thread's columns; slot 1:
// the calling thread's partial sums (alive while workers use their slot 0).
template <class T, int Slot>
T* scratch(std::int64_t n) {
  thread_local std::unique_ptr<T[]> buf;
  thread_local std::int64_t size = 0;
  if (size < n) {
    buf = std::make_unique_for_overwrite<T[]>(static_cast<std::size_t>(n));
    size = n;
  }
  return buf.get();
}

// scratch() starting on a cache line.
template <class T, int Slot>
T* line_scratch(std::int64_t n) {
  constexpr std::int64_t kLine = 64 / sizeof(T);
  const auto p = reinterpret_cast<std::uintptr_t>(scratch<T, Slot>(n + kLine));
  return reinterpret_cast<T*>((p + 63) / 64 * 64);
}

// A sample's weight gradient on the C99 backend's blocks of dot products (acc += dy_g @
// col_g^T, rows along k = L): where the library has them and each dot product is at least
// 128 long. One Zen 5 core against OpenBLAS: 0.22-0.66 of its time at k = 196-1024,
// 1.7-3.5x at k = 25-49 (every output element sums its vector's lanes once).
constexpr std::int64_t kDotsMinK = 128;

template <class F>
void visit_float(const Node& node, DType t, F&& f) {
  if (t == DType::f32) f(float{});
  else if (t == DType::f64) f(double{});
  else MG_ASSERT(false, node.op_name() + ": unsupported dtype " + std::string(name_of(t)));
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Output columns j whose input column j*s + off lies in [0, W): [j0, j1).
struct ColRange {
  std::int64_t j0, j1;
};
ColRange valid_cols(std::int64_t off, std::int64_t s, std::int64_t W, std::int64_t Wo) {
  const std::int64_t j0 = std::min(Wo, off >= 0 ? 0 : ceil_div(-off, s));
  const std::int64_t j1 = W - off <= 0 ? 0 : std::min(Wo, ceil_div(W - off, s));
  return {j0, std::max(j0, j1)};
}

bool is_pointwise(const ConvGeom& g) {
  return g.kh == 1 && g.kw == 1 && g.sh == 1 && g.sw == 1 && g.ph == 0 && g.pw == 0;
}

struct Dims {
  std::int64_t Cg, Og, K, L, khw;
};
Dims dims_of(const ConvGeom& g) {
  const std::int64_t Cg = g.C / g.G, khw = g.kh * g.kw;
  return {Cg, g.O / g.G, Cg * khw, g.Ho * g.Wo, khw};
}

// Whether one sample's GEMMs are small enough that OpenBLAS runs them single-threaded:
// then an OpenMP loop over the batch is the only threading layer (one parallel region per
// call, no handing work between OpenMP and BLAS threads). Larger convs use wide GEMMs over
// a chunk of the batch and let OpenBLAS thread them.
bool per_sample(const ConvGeom& g) {
  const Dims d = dims_of(g);
  return static_cast<double>(d.Og) * static_cast<double>(d.K) * static_cast<double>(d.L) <= kBlasSerialMNK;
}
// The per-sample path's OpenMP loop runs over (sample, group) pairs: per-sample weight
// gradients under vmap are one sample of B groups, which a loop over samples ran on one thread.
bool parallel_tasks(const ConvGeom& g) {
  const Dims d = dims_of(g);
  return g.N * g.G > 1 && g.N * g.O * d.K * d.L >= kParallelMin;
}


// Samples per chunk so that the columns of a chunk stay within kColBudget.
std::int64_t chunk_of(const ConvGeom& g) {
  const std::int64_t per_sample = std::max<std::int64_t>(1, g.C * g.kh * g.kw * g.Ho * g.Wo);
  return std::clamp<std::int64_t>(kColBudget / per_sample, 1, std::max<std::int64_t>(1, g.N));
}

// Zeroes columns [j0, j1) of rows [i0, i1) (pitch ld): column by column, so the compiler
// makes no memset call of a padding's width per row.
template <class T>
void zero_cols(T* dst, std::int64_t ld, std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
  for (std::int64_t j = j0; j < j1; ++j)
    for (std::int64_t i = i0; i < i1; ++i) dst[i * ld + j] = T(0);
}

// One im2col row r = (c*kh + a)*kw + b of one sample:
// dst[i*Wo + j] = x_n[c, i*sh - ph + a*dh, j*sw - pw + b*dw] (0 outside).
template <class T>
void im2col_row(const T* x_n, const ConvGeom& g, std::int64_t r, T* dst) {
  const std::int64_t khw = g.kh * g.kw;
  const std::int64_t c = r / khw, a = (r / g.kw) % g.kh, b = r % g.kw;
  const T* plane = x_n + c * g.H * g.W;
  const std::int64_t off = b * g.dw - g.pw;
  const auto [j0, j1] = valid_cols(off, g.sw, g.W, g.Wo);
  if (g.sh == 1 && g.sw == 1 && g.Wo == g.W) {
    // "Same" convs (3x3 pad 1): the valid rows are the plane shifted by one offset, one
    // copy; a row at a time was a memmove call per 14 floats (example 05's second conv).
    const std::int64_t top = a * g.dh - g.ph;  // input row of output row 0
    const std::int64_t i0 = std::clamp<std::int64_t>(-top, 0, g.Ho), i1 = std::clamp<std::int64_t>(g.H - top, i0, g.Ho);
    const std::int64_t shift = top * g.W + off;  // input flat index = output flat index + shift
    const std::int64_t t0 = std::max(i0 * g.W, -shift), t1 = std::min(i1 * g.W, g.H * g.W - shift);
    const std::int64_t L = g.Ho * g.W;
    std::fill(dst, dst + std::min(t0, L), T(0));
    if (t1 > t0) std::copy(plane + t0 + shift, plane + t1 + shift, dst + t0);
    std::fill(dst + std::min(std::max(t0, t1), L), dst + L, T(0));
    // Columns a row reads from its neighbour rows: the padding.
    zero_cols(dst, g.W, i0, i1, 0, j0);
    zero_cols(dst, g.W, i0, i1, j1, g.Wo);
    return;
  }
  for (std::int64_t i = 0; i < g.Ho; ++i) {
    T* row = dst + i * g.Wo;
    const std::int64_t hi = i * g.sh - g.ph + a * g.dh;
    if (hi < 0 || hi >= g.H) {
      std::fill(row, row + g.Wo, T(0));
      continue;
    }
    std::fill(row, row + j0, T(0));
    if (j1 > j0) {
      const T* src = plane + hi * g.W + off + j0 * g.sw;  // input of column j0
      if (g.sw == 1) {
        std::copy(src, src + (j1 - j0), row + j0);
      } else {
        for (std::int64_t j = j0; j < j1; ++j) row[j] = src[(j - j0) * g.sw];
      }
    }
    std::fill(row + j1, row + g.Wo, T(0));
  }
}

// Group gi's im2col rows of sample x_n into buf[K][L].
template <class T>
void im2col_group(const T* x_n, const ConvGeom& g, std::int64_t gi, T* buf) {
  const Dims d = dims_of(g);
  for (std::int64_t r = 0; r < d.K; ++r) im2col_row(x_n, g, gi * d.K + r, buf + r * d.L);
}

// The adjoint of im2col for one channel of one sample: plane = the sum of the col entries
// (the channel's kh*kw rows from `col_c`, leading dimension ld) that read each element.
// Every element sums its terms in (a, b) order on both paths below.
template <class T>
void col2im_channel(T* col_c, std::int64_t ld, const ConvGeom& g, T* plane) {
  std::fill(plane, plane + g.H * g.W, T(0));
  const bool same = g.sh == 1 && g.sw == 1 && g.Wo == g.W;  // as im2col_row's "same" convs
  for (std::int64_t a = 0; a < g.kh; ++a) {
    for (std::int64_t b = 0; b < g.kw; ++b) {
      T* src = col_c + (a * g.kw + b) * ld;
      const std::int64_t off = b * g.dw - g.pw;
      const auto [j0, j1] = valid_cols(off, g.sw, g.W, g.Wo);
      if (same) {
        // The valid rows add to the plane as one shifted run (a row at a time was a loop
        // of 14 per row on example 05's second conv); the columns the run takes from
        // neighbour rows (the padding) are zeroed in col first (scratch), so they add +0.
        const std::int64_t top = a * g.dh - g.ph;  // input row of output row 0
        const std::int64_t i0 = std::clamp<std::int64_t>(-top, 0, g.Ho), i1 = std::clamp<std::int64_t>(g.H - top, i0, g.Ho);
        if (i0 == i1 || j0 == j1) continue;
        zero_cols(src, g.W, i0, i1, 0, j0);
        zero_cols(src, g.W, i0, i1, j1, g.Wo);
        const std::int64_t e0 = i0 * g.W + j0, e1 = (i1 - 1) * g.W + j1;
        T* dst = plane + e0 + top * g.W + off;
        const T* s = src + e0;
        for (std::int64_t e = 0; e < e1 - e0; ++e) dst[e] += s[e];
        continue;
      }
      for (std::int64_t i = 0; i < g.Ho; ++i) {
        const std::int64_t hi = i * g.sh - g.ph + a * g.dh;
        if (hi < 0 || hi >= g.H || j1 == j0) continue;
        T* dst = plane + hi * g.W + off + j0 * g.sw;  // input of column j0
        const T* s = src + i * g.Wo + j0;
        for (std::int64_t j = 0; j < j1 - j0; ++j) dst[j * g.sw] += s[j];
      }
    }
  }
}

// Batched layout: col[r][n*L + i*Wo + j] for samples n0 .. n0+nb-1 side by side.
template <class T>
void im2col_batch(const T* x, const ConvGeom& g, std::int64_t n0, std::int64_t nb, T* col) {
  const std::int64_t rows = g.C * g.kh * g.kw, L = g.Ho * g.Wo, tasks = rows * nb;
#pragma omp parallel for schedule(static) if (tasks * L >= kParallelMin)
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t r = t / nb, n = t % nb;
    im2col_row(x + (n0 + n) * g.C * g.H * g.W, g, r, col + r * nb * L + n * L);
  }
}
template <class T>
void col2im_batch(T* col, const ConvGeom& g, std::int64_t n0, std::int64_t nb, T* dx) {
  const std::int64_t L = g.Ho * g.Wo, tasks = nb * g.C;
#pragma omp parallel for schedule(static) if (tasks * g.kh * g.kw * L >= kParallelMin)
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t n = t / g.C, c = t % g.C;
    col2im_channel(col + n * L + c * g.kh * g.kw * nb * L, nb * L, g, dx + ((n0 + n) * g.C + c) * g.H * g.W);
  }
}

// packed[o][n*L + l] = y[n0+n, o, l]: a chunk of y with channels outermost (GEMM layout).
template <class T>
void pack(const T* y, std::int64_t O, std::int64_t L, std::int64_t n0, std::int64_t nb, T* packed) {
  const std::int64_t tasks = O * nb;
#pragma omp parallel for schedule(static) if (tasks * L >= kParallelMin)
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t o = t / nb, n = t % nb;
    std::copy_n(y + ((n0 + n) * O + o) * L, L, packed + o * nb * L + n * L);
  }
}
template <class T>
void unpack(const T* packed, std::int64_t O, std::int64_t L, std::int64_t n0, std::int64_t nb, T* y) {
  const std::int64_t tasks = O * nb;
#pragma omp parallel for schedule(static) if (tasks * L >= kParallelMin)
  for (std::int64_t t = 0; t < tasks; ++t) {
    const std::int64_t o = t / nb, n = t % nb;
    std::copy_n(packed + o * nb * L + n * L, L, y + ((n0 + n) * O + o) * L);
  }
}

void check_blas_range(const Node& node, const ConvGeom& g) {
  const std::int64_t L = g.Ho * g.Wo;
  const std::int64_t widest = std::max({chunk_of(g) * L, g.C * g.kh * g.kw, g.O, g.H * g.W});
  MG_ASSERT(widest <= INT_MAX, node.op_name() + ": a GEMM dimension exceeds the BLAS integer range");
}

// y = conv(x, w).
template <class T>
void forward(const T* x, const T* w, T* y, const ConvGeom& g) {
  // Plain copies, not a structured binding: clang 16 crashes on structured bindings used
  // inside an OpenMP region of a template (the libFuzzer build, scripts/fuzz.sh).
  const Dims d = dims_of(g);
  [[maybe_unused]] const std::int64_t Cg = d.Cg, Og = d.Og, K = d.K, L = d.L, khw = d.khw;
  const std::int64_t xs = g.C * g.H * g.W, ys = g.O * L;
  if (g.N == 0 || g.O == 0 || L == 0) return;
  if (K == 0) {
    std::fill(y, y + g.N * ys, T(0));
    return;
  }
  const bool pw = is_pointwise(g);
  if (per_sample(g) || pw) {
    const native::Kernels<T>* ours = per_sample(g) ? native::kernels<T>() : nullptr;
    // pointwise: the sample is its own column matrix; otherwise im2col into thread scratch
#pragma omp parallel for schedule(static) if (per_sample(g) && parallel_tasks(g))
    for (std::int64_t t = 0; t < g.N * g.G; ++t) {
      const std::int64_t n = t / g.G, gi = t % g.G;
      const T* col = x + n * xs + gi * K * L;
      if (!pw) {
        T* buf = scratch<T, 0>(K * L);
        im2col_group(x + n * xs, g, gi, buf);
        col = buf;
      }
      sample_product(ours, false, Og, L, K, w + gi * Og * K, K, col, y + n * ys + gi * Og * L);
    }
    return;
  }
  const std::int64_t nb = chunk_of(g);
  T* col = scratch<T, 0>(g.C * khw * nb * L + g.O * nb * L);
  T* tmp = col + g.C * khw * nb * L;
  for (std::int64_t n0 = 0; n0 < g.N; n0 += nb) {
    const std::int64_t b = std::min(nb, g.N - n0), NL = b * L;
    im2col_batch(x, g, n0, b, col);
    for (std::int64_t gi = 0; gi < g.G; ++gi)
      gemm(false, false, Og, NL, K, w + gi * Og * K, K, col + gi * K * NL, NL, T(0), tmp + gi * Og * NL, NL);
    unpack(tmp, g.O, L, n0, b, y);
  }
}

// dx = conv's adjoint in x applied to dy.
template <class T>
void input_grad(const T* dy, const T* w, T* dx, const ConvGeom& g) {
  // Plain copies, not a structured binding: clang 16 crashes on structured bindings used
  // inside an OpenMP region of a template (the libFuzzer build, scripts/fuzz.sh).
  const Dims d = dims_of(g);
  [[maybe_unused]] const std::int64_t Cg = d.Cg, Og = d.Og, K = d.K, L = d.L, khw = d.khw;
  const std::int64_t xs = g.C * g.H * g.W, ys = g.O * L;
  if (g.N * xs == 0) return;
  if (Og == 0) {
    std::fill(dx, dx + g.N * xs, T(0));
    return;
  }
  const bool pw = is_pointwise(g);
  if (per_sample(g) || pw) {
    const native::Kernels<T>* ours = per_sample(g) ? native::kernels<T>() : nullptr;
#pragma omp parallel for schedule(static) if (per_sample(g) && parallel_tasks(g))
    for (std::int64_t t = 0; t < g.N * g.G; ++t) {
      const std::int64_t n = t / g.G, gi = t % g.G;
      T* col = pw ? dx + n * xs + gi * K * L : scratch<T, 0>(K * L);
      sample_product(ours, true, K, L, Og, w + gi * Og * K, K, dy + n * ys + gi * Og * L, col);
      if (!pw)
        for (std::int64_t c = 0; c < Cg; ++c) col2im_channel(col + c * khw * L, L, g, dx + n * xs + (gi * Cg + c) * g.H * g.W);
    }
    return;
  }
  const std::int64_t nb = chunk_of(g);
  T* col = scratch<T, 0>(g.C * khw * nb * L + g.O * nb * L);
  T* packed = col + g.C * khw * nb * L;
  for (std::int64_t n0 = 0; n0 < g.N; n0 += nb) {
    const std::int64_t b = std::min(nb, g.N - n0), NL = b * L;
    pack(dy, g.O, L, n0, b, packed);
    for (std::int64_t gi = 0; gi < g.G; ++gi)
      gemm(true, false, K, NL, Og, w + gi * Og * K, K, packed + gi * Og * NL, NL, T(0), col + gi * K * NL, NL);
    col2im_batch(col, g, n0, b, dx);
  }
}

// dw = conv's adjoint in w applied to dy (summed over the batch).
template <class T>
void weight_grad(const T* x, const T* dy, T* dw, const ConvGeom& g) {
  // Plain copies, not a structured binding: clang 16 crashes on structured bindings used
  // inside an OpenMP region of a template (the libFuzzer build, scripts/fuzz.sh).
  const Dims d = dims_of(g);
  [[maybe_unused]] const std::int64_t Cg = d.Cg, Og = d.Og, K = d.K, L = d.L, khw = d.khw;
  const std::int64_t xs = g.C * g.H * g.W, ys = g.O * L, size = g.O * K;
  if (size == 0) return;
  if (g.N == 0 || L == 0) {
    std::fill(dw, dw + size, T(0));
    return;
  }
  const bool pw = is_pointwise(g);
  if (per_sample(g) || pw) {
    // Each thread sums its samples into its own partial dw; the partials are added in
    // thread order afterwards (deterministic for a given thread count).
    const bool par = per_sample(g) && parallel_tasks(g);
    const native::Kernels<T>* ours = per_sample(g) && !pw && L >= kDotsMinK ? native::kernels<T>() : nullptr;
    // The dot blocks' rows padded to whole cache lines: at 196 floats a row, every vector
    // load straddled two lines (72 against 108 GFLOP/s at 16x72, k = 196).
    constexpr std::int64_t kLine = 64 / sizeof(T);
    const std::int64_t ld = (L + kLine - 1) / kLine * kLine;
    const int max_threads = par ? omp_get_max_threads() : 1;
    T* partial = scratch<T, 1>(max_threads * size);
    int threads = 1;
#pragma omp parallel num_threads(max_threads) if (par)
    {
#pragma omp single
      threads = omp_get_num_threads();
      T* acc = partial + omp_get_thread_num() * size;
      std::fill(acc, acc + size, T(0));
      // ours: columns and dy rows at stride ld, then the sample's product; else columns.
      T* buf = ours ? line_scratch<T, 0>((K + Og) * ld + Og * K) : pw ? nullptr : scratch<T, 0>(K * L);
#pragma omp for schedule(static)
      for (std::int64_t t = 0; t < g.N * g.G; ++t) {
        const std::int64_t n = t / g.G, gi = t % g.G;
        const T* dy_g = dy + n * ys + gi * Og * L;
        T* acc_g = acc + gi * Og * K;
        if (ours) {
          T* dyp = buf + K * ld;
          T* prod = dyp + Og * ld;
          for (std::int64_t r = 0; r < K; ++r) im2col_row(x + n * xs, g, gi * K + r, buf + r * ld);
          for (std::int64_t o = 0; o < Og; ++o) std::copy_n(dy_g + o * L, L, dyp + o * ld);
          ours->conv_dots(Og, K, L, dyp, ld, buf, ld, prod);
          for (std::int64_t e = 0; e < Og * K; ++e) acc_g[e] += prod[e];
          continue;
        }
        const T* col = x + n * xs + gi * K * L;
        if (!pw) {
          im2col_group(x + n * xs, g, gi, buf);
          col = buf;
        }
        gemm(false, true, Og, K, L, dy_g, L, col, L, T(1), acc_g, K);
      }
    }
    std::copy_n(partial, size, dw);
    for (int t = 1; t < threads; ++t)
      for (std::int64_t e = 0; e < size; ++e) dw[e] += partial[t * size + e];
    return;
  }
  const std::int64_t nb = chunk_of(g);
  T* col = scratch<T, 0>(g.C * khw * nb * L + g.O * nb * L);
  T* packed = col + g.C * khw * nb * L;
  for (std::int64_t n0 = 0; n0 < g.N; n0 += nb) {
    const std::int64_t b = std::min(nb, g.N - n0), NL = b * L;
    im2col_batch(x, g, n0, b, col);
    pack(dy, g.O, L, n0, b, packed);
    for (std::int64_t gi = 0; gi < g.G; ++gi)
      gemm(false, true, Og, K, NL, packed + gi * Og * NL, NL, col + gi * K * NL, NL, n0 == 0 ? T(0) : T(1),
           dw + gi * Og * K, K);
  }
}

}  // namespace

ConvGeom conv_geom(const Shape& x, const Shape& w, const Shape& y, const Attrs& attrs) {
  const I64List& s = attrs.list("stride");
  const I64List& p = attrs.list("padding");
  const I64List& d = attrs.list("dilation");
  return ConvGeom{x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3],
                  s[0], s[1], p[0], p[1], d[0], d[1], attrs.i64("groups")};
}

void conv2d_kernel(const KernelArgs& k) {
  const ConvGeom g = conv_geom(k.in[0]->shape(), k.in[1]->shape(), k.out.shape(), k.node.attrs);
  check_blas_range(k.node, g);
  visit_float(k.node, k.out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    forward(k.in[0]->data<T>(), k.in[1]->data<T>(), k.out.data<T>(), g);
  });
}

void conv2d_input_grad_kernel(const KernelArgs& k) {
  const ConvGeom g = conv_geom(k.out.shape(), k.in[1]->shape(), k.in[0]->shape(), k.node.attrs);
  check_blas_range(k.node, g);
  visit_float(k.node, k.out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    input_grad(k.in[0]->data<T>(), k.in[1]->data<T>(), k.out.data<T>(), g);
  });
}

void conv2d_weight_grad_kernel(const KernelArgs& k) {
  const ConvGeom g = conv_geom(k.in[0]->shape(), k.out.shape(), k.in[1]->shape(), k.node.attrs);
  check_blas_range(k.node, g);
  visit_float(k.node, k.out.dtype(), [&](auto zero) {
    using T = decltype(zero);
    weight_grad(k.in[0]->data<T>(), k.in[1]->data<T>(), k.out.data<T>(), g);
  });
}

}  // namespace mg::ir::nn
