// The C text of the convolutions' helper functions (nn_conv_c99.cpp emits the calls):
// im2col and col2im rows, the in-place register-tiled GEMM and the blocks of dot products.
// `$T` is the element type and `$S` its suffix (gemm_c99::substitute fills them).
#include "minigrad/ir/ops/nn_conv_c99_text.hpp"

namespace mg::ir::nn::conv_c99 {

// One (r = (c*kh + p)*kw + q) im2col row of one sample: dst[i*Wo + j] = x[c, i*sh - ph +
// p*dh, j*sw - pw + q*dw] (0 outside); the valid columns [j0, j1) copy without tests.
extern const char* const kIm2col = R"(static void mg_conv_im2col_$S(const $T* x, int64_t r, $T* dst, int64_t H, int64_t W,
                              int64_t Ho, int64_t Wo, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                              int64_t ph, int64_t pw, int64_t dh, int64_t dw) {
  const int64_t c = r / (kh * kw), p = (r / kw) % kh, q = r % kw, off = q * dw - pw;
  const $T* plane = x + c * H * W;
  int64_t i, j, j0 = off >= 0 ? 0 : (-off + sw - 1) / sw, j1 = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;
  if (sh == 1 && sw == 1 && dh == 1 && Wo == W && Ho > 0) {
    /* A "same" convolution: the row is the plane shifted by (p*dh - ph, off), one copy of
       the valid rows (a row's overhang reads its neighbour, inside the plane), then the
       overhang and the rows outside zeroed (14-wide rows: a copy per row cost 3x). */
    const int64_t sh0 = p * dh - ph, i0 = sh0 >= 0 ? 0 : -sh0, i1 = H - sh0 < Ho ? H - sh0 : Ho;
    if (j1 > Wo) j1 = Wo;
    if (i0 >= i1 || j0 >= j1) {
      for (i = 0; i < Ho * Wo; ++i) dst[i] = 0;
      return;
    }
    for (i = 0; i < i0 * Wo; ++i) dst[i] = 0;
    {
      const int64_t e0 = i0 * Wo + j0, e1 = (i1 - 1) * Wo + j1;
      const $T* src = plane + (e0 + sh0 * W + off);
      $T* d = dst + e0;
      for (i = 0; i < e1 - e0; ++i) d[i] = src[i];
    }
    for (i = i0; i < i1; ++i) {
      for (j = 0; j < j0; ++j) dst[i * Wo + j] = 0;
      for (j = j1; j < Wo; ++j) dst[i * Wo + j] = 0;
    }
    for (i = i1 * Wo; i < Ho * Wo; ++i) dst[i] = 0;
    return;
  }
  if (j0 > Wo) j0 = Wo;
  if (j1 > Wo) j1 = Wo;
  if (j1 < j0) j1 = j0;
  for (i = 0; i < Ho; ++i) {
    const int64_t h = i * sh - ph + p * dh;
    $T* row = dst + i * Wo;
    const $T* src;
    if (h < 0 || h >= H) {
      for (j = 0; j < Wo; ++j) row[j] = 0;
      continue;
    }
    src = plane + h * W + off;
    for (j = 0; j < j0; ++j) row[j] = 0;
    if (sw == 1) for (j = j0; j < j1; ++j) row[j] = src[j];
    else for (j = j0; j < j1; ++j) row[j] = src[j * sw];
    for (j = j1; j < Wo; ++j) row[j] = 0;
  }
}
)";

// The adjoint for one channel: plane[H*W] = the sum of the kh*kw column rows `col` (each
// ld long) at the elements they read. Same order of summation as the interpreter's.
// A "same" convolution (stride 1, as wide out as in): each column row adds to the plane as
// one shifted contiguous run, its overhang columns zeroed first (the columns are scratch),
// so the run adds +0 where a row wraps into its neighbour.
extern const char* const kCol2im = R"(static void mg_conv_col2im_$S($T* col, int64_t ld, $T* plane, int64_t H, int64_t W,
                              int64_t Ho, int64_t Wo, int64_t kh, int64_t kw, int64_t sh, int64_t sw,
                              int64_t ph, int64_t pw, int64_t dh, int64_t dw) {
  int64_t e, p, q, i, j;
  for (e = 0; e < H * W; ++e) plane[e] = 0;
  for (p = 0; p < kh; ++p)
    for (q = 0; q < kw; ++q) {
      $T* src = col + (p * kw + q) * ld;
      const int64_t off = q * dw - pw;
      int64_t j0 = off >= 0 ? 0 : (-off + sw - 1) / sw, j1 = W - off <= 0 ? 0 : (W - off + sw - 1) / sw;
      if (j0 > Wo) j0 = Wo;
      if (j1 > Wo) j1 = Wo;
      if (sh == 1 && sw == 1 && dh == 1 && Wo == W) {
        const int64_t sh0 = p * dh - ph, i0 = sh0 >= 0 ? 0 : -sh0, i1 = H - sh0 < Ho ? H - sh0 : Ho;
        if (i0 >= i1 || j0 >= j1) continue;
        for (i = i0; i < i1; ++i) {
          for (j = 0; j < j0; ++j) src[i * Wo + j] = 0;
          for (j = j1; j < Wo; ++j) src[i * Wo + j] = 0;
        }
        {
          const int64_t e0 = i0 * Wo + j0, e1 = (i1 - 1) * Wo + j1;
          const $T* s = src + e0;
          $T* d = plane + (e0 + sh0 * W + off);
          for (e = 0; e < e1 - e0; ++e) d[e] += s[e];
        }
        continue;
      }
      for (i = 0; i < Ho; ++i) {
        const int64_t h = i * sh - ph + p * dh;
        $T* dst;
        const $T* s = src + i * Wo;
        if (h < 0 || h >= H) continue;
        dst = plane + h * W + off;
        if (sw == 1) for (j = j0; j < j1; ++j) dst[j] += s[j];  /* a vector loop */
        else for (j = j0; j < j1; ++j) dst[j * sw] += s[j];
      }
    }
}
)";

// C[m,n] (row stride ldc) = A @ B, B's rows contiguous (row stride brs) and read in place:
// MR x NR register tiles (gemm_c99.cpp's shape, A broadcast from memory) over the full
// panels, j outer so a k x NR panel of B stays in L1 across the row blocks. With vector
// tiles a last partial panel (k up to MG_CONV_PADK) is copied, zero-padded, to the stack
// and tiled too: the same sums as the scalar edge (row at a time, NR columns), which on a
// 196-wide output (example 05's conv2: 6 panels and 4 columns) took two thirds of the
// tiles' time where the compiler did not know the width. Left-over rows go one at a time.
// For the per-sample GEMMs of small convs (8-72 rows, k 9-72): packing B cost as much as
// the tiles, and the unpacked one-row GEMM re-read B for every row of C (2x OpenBLAS's
// time on example 05's CNN).
extern const char* const kTiles = R"(#if defined(__GNUC__) && (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))
typedef $T mg_conv_v_$S __attribute__((vector_size(MG_GEMM_VB), aligned(sizeof($T)), __may_alias__));
#define MG_CONV_PADK 256 /* the padded edge panel: 32 KiB of stack at AVX-512 */
#if MG_GEMM_VB == 64
#define MG_CONV_FMA_$S(acc, x, y) acc = _mm512_fmadd_p$P(x, y, acc)
#define MG_CONV_SET1_$S(x) _mm512_set1_p$P(x)
#else
#define MG_CONV_FMA_$S(acc, x, y) acc = _mm256_fmadd_p$P(x, y, acc)
#define MG_CONV_SET1_$S(x) _mm256_set1_p$P(x)
#endif
/* Not inlined: inside mg_conv_gemm GCC kept two of the 16 accumulators on the stack. */
__attribute__((noinline)) static void mg_conv_tile_$S(int64_t k, const $T* a, int64_t ars, int64_t acs, const $T* b,
                                                      int64_t brs, $T* c, int64_t ldc) {
  typedef mg_conv_v_$S V;
  enum { MR = MG_GEMM_MR_$S, VL = MG_GEMM_NR_$S / 2 };
  V acc0[MR], acc1[MR];
  int64_t p, r;
  for (r = 0; r < MR; ++r) acc0[r] = acc1[r] = (V){0};
  for (p = 0; p < k; ++p) {
    const V b0 = *(const V*)(b + p * brs), b1 = *(const V*)(b + p * brs + VL);
    for (r = 0; r < MR; ++r) {
      const V ar = MG_CONV_SET1_$S(a[r * ars + p * acs]);
      MG_CONV_FMA_$S(acc0[r], ar, b0);
      MG_CONV_FMA_$S(acc1[r], ar, b1);
    }
  }
  for (r = 0; r < MR; ++r) {
    *(V*)(c + r * ldc) = acc0[r];
    *(V*)(c + r * ldc + VL) = acc1[r];
  }
}
#else
static void mg_conv_tile_$S(int64_t k, const $T* a, int64_t ars, int64_t acs, const $T* b, int64_t brs, $T* c,
                            int64_t ldc) {
  enum { MR = MG_GEMM_MR_$S, NR = MG_GEMM_NR_$S };
  $T acc[MR][NR];
  int64_t p, r, j;
  for (r = 0; r < MR; ++r)
    for (j = 0; j < NR; ++j) acc[r][j] = 0;
  for (p = 0; p < k; ++p)
    for (r = 0; r < MR; ++r) {
      const $T ar = a[r * ars + p * acs];
      MG_OMP(omp simd)
      for (j = 0; j < NR; ++j) MG_GEMM_MAC_$S(acc[r][j], ar, b[p * brs + j]);
    }
  for (r = 0; r < MR; ++r)
    for (j = 0; j < NR; ++j) c[r * ldc + j] = acc[r][j];
}
#endif
/* Rows [0, m) x columns [j0, n) one row at a time, NR columns in registers. */
static void mg_conv_edge_$S(int64_t m, int64_t j0, int64_t n, int64_t k, const $T* a, int64_t ars, int64_t acs,
                            const $T* b, int64_t brs, $T* c, int64_t ldc) {
  enum { NR = MG_GEMM_NR_$S };
  int64_t i, j, p, jb;
  for (i = 0; i < m; ++i)
    for (jb = j0; jb < n; jb += NR) {
      const int64_t w = n - jb < NR ? n - jb : NR;
      $T acc[NR];
      for (j = 0; j < NR; ++j) acc[j] = 0;
      for (p = 0; p < k; ++p) {
        const $T x = a[i * ars + p * acs];
        const $T* bp = b + p * brs + jb;
        for (j = 0; j < w; ++j) MG_GEMM_MAC_$S(acc[j], x, bp[j]);
      }
      for (j = 0; j < w; ++j) c[i * ldc + jb + j] = acc[j];
    }
}
static void mg_conv_gemm_$S(int64_t m, int64_t n, int64_t k, const $T* a, int64_t ars, int64_t acs, const $T* b,
                            int64_t brs, $T* c) {
  enum { MR = MG_GEMM_MR_$S, NR = MG_GEMM_NR_$S };
  const int64_t m1 = m / MR * MR, n1 = n / NR * NR;
  int64_t i, j;
  for (j = 0; j < n1; j += NR)
    for (i = 0; i < m1; i += MR) mg_conv_tile_$S(k, a + i * ars, ars, acs, b + j, brs, c + i * n + j, n);
#ifdef MG_CONV_PADK
  if (n1 < n && m1 > 0 && k <= MG_CONV_PADK) {
    $T bp[MG_CONV_PADK * NR], cp[MR * NR];
    const int64_t w = n - n1;
    int64_t p, r;
    for (p = 0; p < k; ++p)
      for (j = 0; j < NR; ++j) bp[p * NR + j] = j < w ? b[p * brs + n1 + j] : 0;
    for (i = 0; i < m1; i += MR) {
      mg_conv_tile_$S(k, a + i * ars, ars, acs, bp, NR, cp, NR);
      for (r = 0; r < MR; ++r)
        for (j = 0; j < w; ++j) c[(i + r) * n + n1 + j] = cp[r * NR + j];
    }
  } else
#endif
  mg_conv_edge_$S(m1, n1, n, k, a, ars, acs, b, brs, c, n);
  mg_conv_edge_$S(m - m1, 0, n, k, a + m1 * ars, ars, acs, b, brs, c + m1 * n, n);
}
)";

// C[m,n] = A @ B^T with A's and B's rows contiguous along k (the weight gradient: dy @
// col^T, col read in place): blocks of 4 x CB dot products, each in vector lanes (4 x 4
// vectors of 16 f32 at AVX-512) that add up as a fixed tree, then the k tail in order; the
// edges one dot product at a time. The one-row dot GEMM loaded 5 vectors per 4 FMAs: 1.1 ms
// of example 05's 4 ms per-sample step.
extern const char* const kDotsRows = R"(#if defined(__GNUC__) && (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))
#define MG_DOTS_RB 4
#else
#define MG_DOTS_RB 1
#endif
)";
extern const char* const kDots = R"(#if defined(__GNUC__) && (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))
typedef $T mg_dots_v_$S __attribute__((vector_size(MG_GEMM_VB), aligned(sizeof($T)), __may_alias__));
#if MG_GEMM_VB == 64
#define MG_DOTS_FMA_$S(acc, x, y) acc = _mm512_fmadd_p$P(x, y, acc)
#define MG_DOTS_CB 4
#else
#define MG_DOTS_FMA_$S(acc, x, y) acc = _mm256_fmadd_p$P(x, y, acc)
#define MG_DOTS_CB 2
#endif
/* The lanes' sum (the dot products are short, k 196: a scalar tree per block cost more
   than its FMAs). */
static $T mg_dots_sum_$S(mg_dots_v_$S v) {
#if MG_GEMM_VB == 64
  return _mm512_reduce_add_p$P(v);
#else
  enum { VL = MG_GEMM_VB / (int)sizeof($T) };
  $T t[VL];
  int h, l;
  *(mg_dots_v_$S*)t = v;
  for (h = VL / 2; h > 0; h /= 2)
    for (l = 0; l < h; ++l) t[l] += t[l + h];
  return t[0];
#endif
}
static void mg_dots_block_$S(int64_t k, const $T* a, int64_t ars, const $T* b, int64_t bcs, $T* c, int64_t ldc) {
  typedef mg_dots_v_$S V;
  enum { VL = MG_GEMM_VB / (int)sizeof($T), RB = 4, CB = MG_DOTS_CB };
  V acc[RB][CB];
  int64_t p, r, j;
  for (r = 0; r < RB; ++r)
    for (j = 0; j < CB; ++j) acc[r][j] = (V){0};
  for (p = 0; p + VL <= k; p += VL) {
    V bv[CB];
    for (j = 0; j < CB; ++j) bv[j] = *(const V*)(b + j * bcs + p);
    for (r = 0; r < RB; ++r) {
      const V av = *(const V*)(a + r * ars + p);
      for (j = 0; j < CB; ++j) MG_DOTS_FMA_$S(acc[r][j], av, bv[j]);
    }
  }
#if MG_GEMM_VB == 64
  if (p < k) { /* the k tail as one masked step (196 = 12 x 16 + 4: scalar, a quarter of the FMAs) */
    const unsigned mk = (1u << (k - p)) - 1u;
    V bv[CB];
    for (j = 0; j < CB; ++j) bv[j] = _mm512_maskz_loadu_p$P(mk, b + j * bcs + p);
    for (r = 0; r < RB; ++r) {
      const V av = _mm512_maskz_loadu_p$P(mk, a + r * ars + p);
      for (j = 0; j < CB; ++j) MG_DOTS_FMA_$S(acc[r][j], av, bv[j]);
    }
    p = k;
  }
#endif
  for (r = 0; r < RB; ++r)
    for (j = 0; j < CB; ++j) {
      $T s = mg_dots_sum_$S(acc[r][j]);
      int64_t q;
      for (q = p; q < k; ++q) MG_GEMM_MAC_$S(s, a[r * ars + q], b[j * bcs + q]);
      c[r * ldc + j] = s;
    }
}
#else
#define MG_DOTS_CB 1
static void mg_dots_block_$S(int64_t k, const $T* a, int64_t ars, const $T* b, int64_t bcs, $T* c, int64_t ldc) {
  enum { L = 16 };
  $T s[L];
  int64_t p, l, h;
  (void)ars;
  (void)ldc;
  for (l = 0; l < L; ++l) s[l] = 0;
  for (p = 0; p + L <= k; p += L)
    for (l = 0; l < L; ++l) MG_GEMM_MAC_$S(s[l], a[p + l], b[p + l]);
  for (h = L / 2; h > 0; h /= 2)
    for (l = 0; l < h; ++l) s[l] += s[l + h];
  for (; p < k; ++p) MG_GEMM_MAC_$S(s[0], a[p], b[p]);
  (void)bcs;
  c[0] = s[0];
}
#endif
/* One dot product, as a 1 x 1 block would compute it where blocks are vectors. */
static void mg_dots_one_$S(int64_t k, const $T* a, const $T* b, $T* c) {
#if MG_DOTS_RB > 1
  typedef mg_dots_v_$S V;
  enum { VL = MG_GEMM_VB / (int)sizeof($T) };
  V acc = (V){0};
  int64_t p;
  $T s;
  for (p = 0; p + VL <= k; p += VL) MG_DOTS_FMA_$S(acc, *(const V*)(a + p), *(const V*)(b + p));
  s = mg_dots_sum_$S(acc);
  for (; p < k; ++p) MG_GEMM_MAC_$S(s, a[p], b[p]);
  *c = s;
#else
  mg_dots_block_$S(k, a, 0, b, 0, c, 0);
#endif
}
static void mg_conv_dots_$S(int64_t m, int64_t n, int64_t k, const $T* a, int64_t ars, const $T* b, int64_t bcs,
                            $T* c) {
  enum { RB = MG_DOTS_RB, CB = MG_DOTS_CB };
  const int64_t m1 = m / RB * RB, n1 = n / CB * CB;
  int64_t i, j;
  for (i = 0; i < m1; i += RB)
    for (j = 0; j < n1; j += CB) mg_dots_block_$S(k, a + i * ars, ars, b + j * bcs, bcs, c + i * n + j, n);
  for (i = 0; i < m; ++i)
    for (j = i < m1 ? n1 : 0; j < n; ++j) mg_dots_one_$S(k, a + i * ars, b + j * bcs, c + i * n + j);
}
)";

}  // namespace mg::ir::nn::conv_c99
