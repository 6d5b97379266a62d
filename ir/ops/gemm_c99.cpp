// Our GEMM as C99 text, after BLIS/GotoBLAS: A and B packed into micro-panels, an MR x NR
// register tile of C accumulating over them, cache blocks (KC deep, NC wide), threads on
// disjoint column chunks. Standalone exports have no BLAS and no malloc, so B's panels go to
// the arena scratch the emitter planned and A's (MR x KC) to the stack. Invariant: no
// operand is read out of bounds (edge panels are zero-padded when packed).
#include "minigrad/ir/ops/gemm_c99.hpp"

#include <utility>

namespace mg::ir::gemm_c99 {

namespace {

// The register tile per vector width, decided where the C is compiled (-march=...):
//   AVX-512: 8 rows x 2 zmm (f32 8x32, f64 8x16): 16 accumulators + 2 B vectors, A
//     broadcast from memory (a load, not a port-5 shuffle the FMAs need); 8 rows divide the
//     usual sizes (128, 1024): measured against 12 x 32, as fast at 1024^3 and 7% faster at
//     the MLP's 128x784x128 (12 rows leave 4 of 132 padding).
//   AVX2+FMA: 6 rows x 2 ymm (f32 6x16, f64 6x8): 12 accumulators of the 16 registers.
//   otherwise (NEON, scalar, a microcontroller): plain arrays, 4 x 2*16 bytes, loops the
//     compiler vectorises (omp simd), KC 64 for a small stack.
// NC (columns of B per cache block): KC x NC of B packed stays in L2 (512 KiB at AVX-512).
// MG_GEMM_VB: bytes per vector register, when the tile is written with vector extensions.
constexpr const char* kArch = R"(#if defined(__GNUC__) && defined(__AVX512F__)
#define MG_GEMM_VB 64
#define MG_GEMM_MR 8
#define MG_GEMM_KC 256
#define MG_GEMM_NCB (512 * 1024)
#elif defined(__GNUC__) && defined(__AVX2__) && defined(__FMA__)
#define MG_GEMM_VB 32
#define MG_GEMM_MR 6
#define MG_GEMM_KC 256
#define MG_GEMM_NCB (256 * 1024)
#else
#define MG_GEMM_VB 16
#define MG_GEMM_MR 4
#define MG_GEMM_KC 64
#define MG_GEMM_NCB (64 * 1024)
#endif
#ifdef _OPENMP
int omp_get_max_threads(void); /* omp.h's, declared: the export includes no more headers */
#endif
)";

// The intrinsics the kernel texts use (the tiles' FMAs, packing's transpose), apart from
// the macros: <immintrin.h> alone is 0.25 s of every compile with -march=native, which a
// JIT module that calls the library's kernels (c_kernels.hpp) does not pay.
constexpr const char* kIntrinsics = R"(#if defined(__GNUC__) && (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))
#include <immintrin.h>
/* dst[j * ds + i] = src[i * ld + j], i, j < 8: the 8x8 f32 transpose in 24 shuffles. Packing
   interleaves contiguous rows (A's rows, a transposed B's columns); element by element that
   cost 1.4 cycles an element, a quarter of the MLP's GEMM time. */
static inline void mg_gemm_t8x8_f32(const float* src, int64_t ld, float* dst, int64_t ds) {
  const __m256 r0 = _mm256_loadu_ps(src), r1 = _mm256_loadu_ps(src + ld), r2 = _mm256_loadu_ps(src + 2 * ld),
               r3 = _mm256_loadu_ps(src + 3 * ld), r4 = _mm256_loadu_ps(src + 4 * ld),
               r5 = _mm256_loadu_ps(src + 5 * ld), r6 = _mm256_loadu_ps(src + 6 * ld),
               r7 = _mm256_loadu_ps(src + 7 * ld);
  const __m256 t0 = _mm256_unpacklo_ps(r0, r1), t1 = _mm256_unpackhi_ps(r0, r1), t2 = _mm256_unpacklo_ps(r2, r3),
               t3 = _mm256_unpackhi_ps(r2, r3), t4 = _mm256_unpacklo_ps(r4, r5), t5 = _mm256_unpackhi_ps(r4, r5),
               t6 = _mm256_unpacklo_ps(r6, r7), t7 = _mm256_unpackhi_ps(r6, r7);
  const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE),
               u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE),
               u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE),
               u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
  _mm256_storeu_ps(dst, _mm256_permute2f128_ps(u0, u4, 0x20));
  _mm256_storeu_ps(dst + ds, _mm256_permute2f128_ps(u1, u5, 0x20));
  _mm256_storeu_ps(dst + 2 * ds, _mm256_permute2f128_ps(u2, u6, 0x20));
  _mm256_storeu_ps(dst + 3 * ds, _mm256_permute2f128_ps(u3, u7, 0x20));
  _mm256_storeu_ps(dst + 4 * ds, _mm256_permute2f128_ps(u0, u4, 0x31));
  _mm256_storeu_ps(dst + 5 * ds, _mm256_permute2f128_ps(u1, u5, 0x31));
  _mm256_storeu_ps(dst + 6 * ds, _mm256_permute2f128_ps(u2, u6, 0x31));
  _mm256_storeu_ps(dst + 7 * ds, _mm256_permute2f128_ps(u3, u7, 0x31));
}
#define MG_GEMM_T8X8 1
#endif
)";

// $T element type, $S name suffix, $F/$U the math.h suffixes (f/F for float), $P the
// intrinsics' suffix (s/d).
constexpr const char* kDefs = R"(#define MG_GEMM_MR_$S MG_GEMM_MR
#define MG_GEMM_NR_$S (MG_GEMM_VB / (int)sizeof($T) * 2)
#define MG_GEMM_KC_$S MG_GEMM_KC
#define MG_GEMM_NC_$S (MG_GEMM_NCB / MG_GEMM_KC / (int)sizeof($T))
#if defined(FP_FAST_FMA$U)
#define MG_GEMM_MAC_$S(acc, x, y) acc = fma$F(x, y, acc)
#else
#define MG_GEMM_MAC_$S(acc, x, y) acc += (x) * (y)
#endif
)";

constexpr const char* kPacked = R"(/* dst[p][0,MR) = A(r, p) for r < mr, zero beyond: one MR-row micro-panel, kc deep. */
static void mg_gemm_pack_a_$S(int64_t kc, int64_t mr, const $T* a, int64_t ars, int64_t acs, $T* dst) {
  enum { MR = MG_GEMM_MR_$S };
  int64_t p, r;
  if (mr == MR) {
    p = 0;
#ifdef MG_GEMM_T8X8
    if (sizeof($T) == 4 && MR % 8 == 0 && acs == 1)  /* rows of A contiguous: 8x8 blocks */
      for (; p + 8 <= kc; p += 8)
        for (r = 0; r < MR; r += 8) mg_gemm_t8x8_f32((const float*)a + r * ars + p, ars, (float*)dst + p * MR + r, MR);
#endif
    for (; p < kc; ++p)
      for (r = 0; r < MR; ++r) dst[p * MR + r] = a[r * ars + p * acs];
  } else {
    for (p = 0; p < kc; ++p)
      for (r = 0; r < MR; ++r) dst[p * MR + r] = r < mr ? a[r * ars + p * acs] : 0;
  }
}
/* dst[p][0,NR) = B(p, j) for j < nr, zero beyond: one NR-column micro-panel, kc deep. */
static void mg_gemm_pack_b_$S(int64_t kc, int64_t nr, const $T* b, int64_t brs, int64_t bcs, $T* dst) {
  enum { NR = MG_GEMM_NR_$S };
  int64_t p, j;
  if (nr == NR && bcs == 1) {
    for (p = 0; p < kc; ++p)
      for (j = 0; j < NR; ++j) dst[p * NR + j] = b[p * brs + j];
    return;
  }
#ifdef MG_GEMM_T8X8
  if (sizeof($T) == 4 && NR % 8 == 0 && nr == NR && brs == 1) {  /* B transposed: 8x8 blocks */
    for (p = 0; p + 8 <= kc; p += 8)
      for (j = 0; j < NR; j += 8) mg_gemm_t8x8_f32((const float*)b + j * bcs + p, bcs, (float*)dst + p * NR + j, NR);
    for (; p < kc; ++p)
      for (j = 0; j < NR; ++j) dst[p * NR + j] = b[p + j * bcs];
  } else
#endif
  {
    for (j = 0; j < NR; ++j)
      if (j < nr)
        for (p = 0; p < kc; ++p) dst[p * NR + j] = b[p * brs + j * bcs];
      else
        for (p = 0; p < kc; ++p) dst[p * NR + j] = 0;
  }
}
#if defined(__GNUC__) && (defined(__AVX512F__) || (defined(__AVX2__) && defined(__FMA__)))
/* Vector extensions: MR x 2 vectors of accumulators, which GCC and clang keep in registers;
   the FMA and the broadcast from memory are the intrinsics (-ffp-contract=off leaves a * b + c
   unfused). Unaligned loads: any C row, a scratch the caller did not align. */
typedef $T mg_gemm_v_$S __attribute__((vector_size(MG_GEMM_VB), aligned(sizeof($T)), __may_alias__));
#if MG_GEMM_VB == 64
#define MG_GEMM_FMA_$S(acc, x, y) acc = _mm512_fmadd_p$P(x, y, acc)
#define MG_GEMM_SET1_$S(x) _mm512_set1_p$P(x)
#else
#define MG_GEMM_FMA_$S(acc, x, y) acc = _mm256_fmadd_p$P(x, y, acc)
#define MG_GEMM_SET1_$S(x) _mm256_set1_p$P(x)
#endif
/* One register tile: c[0,mr) x [0,nr) = (add ? c : 0) + the packed panels' product (kc deep). */
static void mg_gemm_tile_$S(int64_t kc, const $T* ap, int64_t ars, int64_t aps, const $T* bp, $T* c, int64_t ldc,
                            int64_t mr, int64_t nr,
                            int add) {
  typedef mg_gemm_v_$S V;
  enum { MR = MG_GEMM_MR_$S, NR = MG_GEMM_NR_$S, VL = NR / 2 };
  V acc0[MR], acc1[MR];
  int64_t p, r, j;
  for (r = 0; r < MR; ++r) acc0[r] = acc1[r] = (V){0};
  if (nr <= VL) { /* a narrow panel (attention's head dim 16): half the FMAs, none on zero padding */
    for (p = 0; p < kc; ++p) {
      const V b0 = *(const V*)(bp + p * NR);
      for (r = 0; r < MR; ++r) MG_GEMM_FMA_$S(acc0[r], MG_GEMM_SET1_$S(ap[r * ars + p * aps]), b0);
    }
  } else {
    for (p = 0; p < kc; ++p) {
      const V b0 = *(const V*)(bp + p * NR), b1 = *(const V*)(bp + p * NR + VL);
      for (r = 0; r < MR; ++r) {
        const V ar = MG_GEMM_SET1_$S(ap[r * ars + p * aps]);
        MG_GEMM_FMA_$S(acc0[r], ar, b0);
        MG_GEMM_FMA_$S(acc1[r], ar, b1);
      }
    }
  }
  if (mr == MR && nr == NR) {
    for (r = 0; r < MR; ++r) {
      V* c0 = (V*)(c + r * ldc);
      V* c1 = (V*)(c + r * ldc + VL);
      if (add) {
        *c0 += acc0[r];
        *c1 += acc1[r];
      } else {
        *c0 = acc0[r];
        *c1 = acc1[r];
      }
    }
  } else {
    $T t[MR][NR];
    for (r = 0; r < MR; ++r) {
      *(V*)t[r] = acc0[r];
      *(V*)(t[r] + VL) = acc1[r];
    }
    for (r = 0; r < mr; ++r)
      for (j = 0; j < nr; ++j) c[r * ldc + j] = (add ? c[r * ldc + j] : 0) + t[r][j];
  }
}
#else
/* Portable: the same tile as arrays; the j loop vectorises (NEON: 2 q registers a row). */
static void mg_gemm_tile_$S(int64_t kc, const $T* ap, int64_t ars, int64_t aps, const $T* bp, $T* c, int64_t ldc,
                            int64_t mr, int64_t nr,
                            int add) {
  enum { MR = MG_GEMM_MR_$S, NR = MG_GEMM_NR_$S };
  $T acc[MR][NR];
  int64_t p, r, j;
  for (r = 0; r < MR; ++r)
    for (j = 0; j < NR; ++j) acc[r][j] = 0;
  for (p = 0; p < kc; ++p)
    for (r = 0; r < MR; ++r) {
      const $T ar = ap[r * ars + p * aps];
      MG_OMP(omp simd)
      for (j = 0; j < NR; ++j) MG_GEMM_MAC_$S(acc[r][j], ar, bp[p * NR + j]);
    }
  for (r = 0; r < mr; ++r)
    for (j = 0; j < nr; ++j) c[r * ldc + j] = (add ? c[r * ldc + j] : 0) + acc[r][j];
}
#endif
/* C[m,n] (row-major) = A @ B, A(i,p) = a[i*ars + p*acs], B(p,j) = b[p*brs + j*bcs] (a
   transposed operand is read in place): the block of C rows [i0, i1) (i0 a multiple of MR)
   and NR-column panels [t0, t1), run by one thread with no barrier. It walks blocks of NC
   columns; per KC-deep slice it packs its own B panels (into `bpack`, panel jt at
   jt * NR * kcmax; or one panel at a time on the stack when bpack is 0), then for each MR
   rows packs A's micro-panel (stack, L1) and runs the tiles across the block (B in L2).
   The k slices are balanced (784 = 4 x 196, not 3 x 256 + 16). */
static void mg_gemm_block_$S(int64_t n, int64_t k, const $T* a, int64_t ars, int64_t acs, const $T* b,
                             int64_t brs, int64_t bcs, $T* c, $T* bpack, int64_t i0, int64_t i1, int64_t t0,
                             int64_t t1) {
  enum { MR = MG_GEMM_MR_$S, NR = MG_GEMM_NR_$S, KC = MG_GEMM_KC_$S, NCP = MG_GEMM_NC_$S / MG_GEMM_NR_$S };
  const int64_t panels = (n + NR - 1) / NR, slices = (k + KC - 1) / KC, kcmax = (k + slices - 1) / slices;
  {
    $T apack[MR * KC];
    int64_t jb, pc, ir, jt;
    for (jb = t0; jb < t1; jb += NCP) {
      const int64_t jb1 = t1 - jb < NCP ? t1 : jb + NCP;
      for (pc = 0; pc < k; pc += kcmax) {
        const int64_t kc = k - pc < kcmax ? k - pc : kcmax;
        if (bpack) {
          for (jt = jb; jt < jb1; ++jt)
            mg_gemm_pack_b_$S(kc, n - jt * NR < NR ? n - jt * NR : NR, b + pc * brs + jt * NR * bcs, brs, bcs,
                              bpack + jt * NR * kcmax);
          for (ir = i0; ir < i1; ir += MR) {
            /* One panel (n <= NR: attention's head dims): A's rows are read once, so the tile
               reads them in place; packing them cost as much as the FMAs. */
            const int direct = panels == 1 && i1 - ir >= MR;
            if (!direct) mg_gemm_pack_a_$S(kc, i1 - ir < MR ? i1 - ir : MR, a + ir * ars + pc * acs, ars, acs, apack);
            for (jt = jb; jt < jb1; ++jt)
              mg_gemm_tile_$S(kc, direct ? a + ir * ars + pc * acs : apack, direct ? ars : 1, direct ? acs : MR,
                              bpack + jt * NR * kcmax, c + ir * n + jt * NR, n, i1 - ir < MR ? i1 - ir : MR,
                              n - jt * NR < NR ? n - jt * NR : NR, pc > 0);
          }
        } else {
          $T bstack[KC * NR];
          for (jt = jb; jt < jb1; ++jt) {
            mg_gemm_pack_b_$S(kc, n - jt * NR < NR ? n - jt * NR : NR, b + pc * brs + jt * NR * bcs, brs, bcs, bstack);
            for (ir = i0; ir < i1; ir += MR) {
              const int direct = panels == 1 && i1 - ir >= MR; /* as above */
              if (!direct) mg_gemm_pack_a_$S(kc, i1 - ir < MR ? i1 - ir : MR, a + ir * ars + pc * acs, ars, acs, apack);
              mg_gemm_tile_$S(kc, direct ? a + ir * ars + pc * acs : apack, direct ? ars : 1, direct ? acs : MR, bstack,
                              c + ir * n + jt * NR, n, i1 - ir < MR ? i1 - ir : MR, n - jt * NR < NR ? n - jt * NR : NR,
                              pc > 0);
            }
          }
        }
      }
    }
  }
}
/* The threads split C into a grid of blocks, rows first: row blocks write disjoint runs
   of C's memory, while threads on column chunks of the same rows slowed each other down
   (128x784x128 on 2 Zen 5 threads: 108 us with column chunks, 85 with row blocks, 140 on
   one thread). Each row group packs the B panels it reads into a slice of its own
   (`nb` slices of KC x roundup(n, 32) in `bpack`, the next slice 64-byte aligned), so
   there is still no barrier inside; fewer slices than threads: column chunks within a
   group. One thread runs without OpenMP: a parallel region costs a futex call even when
   it runs on one thread (microseconds on a VM), and attention's batches call this per
   head matrix. */
static void mg_gemm_$S(int64_t m, int64_t n, int64_t k, const $T* a, int64_t ars, int64_t acs, const $T* b,
                       int64_t brs, int64_t bcs, $T* c, $T* bpack, int64_t nb) {
  enum { MR = MG_GEMM_MR_$S, NR = MG_GEMM_NR_$S, KC = MG_GEMM_KC_$S };
  const int64_t panels = (n + NR - 1) / NR, row_blocks = (m + MR - 1) / MR;
  const int64_t slice = ((k < KC ? k : KC) * panels * NR + 15) / 16 * 16;
  int64_t nch = 1, rg, cg, ch;
#ifdef _OPENMP
  if (m * n * k >= MG_GEMM_THREAD_MIN) nch = omp_get_max_threads();
#endif
  if (bpack) bpack = ($T*)(((uintptr_t)bpack + 63) & ~(uintptr_t)63);
  if (!bpack) nb = 1; /* panels on the stack: A is packed once per panel, so column chunks */
  rg = nch < row_blocks ? nch : row_blocks;
  if (rg > nb) rg = nb > 1 ? nb : 1;
  while (nch % rg) --rg; /* whole rows of the grid: 6 threads, 4 slices -> 3 x 2 */
  cg = nch / rg < panels ? nch / rg : panels;
  if (rg * cg <= 1) {
    mg_gemm_block_$S(n, k, a, ars, acs, b, brs, bcs, c, bpack, 0, m, 0, panels);
    return;
  }
  MG_OMP(omp parallel for schedule(static))
  for (ch = 0; ch < rg * cg; ++ch) {
    const int64_t g = ch / cg, j = ch % cg, i0 = g * row_blocks / rg * MR, i1 = (g + 1) * row_blocks / rg * MR;
    mg_gemm_block_$S(n, k, a, ars, acs, b, brs, bcs, c, bpack ? bpack + g * slice : 0, i0, i1 < m ? i1 : m,
                     j * panels / cg, (j + 1) * panels / cg);
  }
}
)";

constexpr const char* kSmall = R"(/* A few rows (batch-1 inference), no packing. B with contiguous rows: blocks of W columns
   of C accumulate in registers over B's rows. B with contiguous columns (weight.T) and A
   with contiguous rows: 4 dot products at a time, each in 16 independent lanes (so they
   vectorise without reassociating a sum; the lanes add up as a fixed tree; no simd
   pragma: with one GCC keeps the lanes on the stack). */
static void mg_gemm_small_$S(int64_t m, int64_t n, int64_t k, const $T* a, int64_t ars, int64_t acs, const $T* b,
                             int64_t brs, int64_t bcs, $T* c) {
  enum { W = MG_GEMM_NR_$S * 4, L = 16 };
  int64_t i, j, j0, p, l, h;
  for (i = 0; i < m; ++i) {
    const $T* ai = a + i * ars;
    $T* ci = c + i * n;
    if (bcs == 1) {
      for (j0 = 0; j0 < n; j0 += W) {
        $T acc[W];
        if (n - j0 >= W) {
          for (j = 0; j < W; ++j) acc[j] = 0;
          for (p = 0; p < k; ++p) {
            const $T aip = ai[p * acs];
            const $T* bp = b + p * brs + j0;
            MG_OMP(omp simd)
            for (j = 0; j < W; ++j) MG_GEMM_MAC_$S(acc[j], aip, bp[j]);
          }
          for (j = 0; j < W; ++j) ci[j0 + j] = acc[j];
        } else {
          for (j = 0; j < n - j0; ++j) acc[j] = 0;
          for (p = 0; p < k; ++p) {
            const $T aip = ai[p * acs];
            const $T* bp = b + p * brs + j0;
            for (j = 0; j < n - j0; ++j) MG_GEMM_MAC_$S(acc[j], aip, bp[j]);
          }
          for (j = 0; j < n - j0; ++j) ci[j0 + j] = acc[j];
        }
      }
    } else if (brs == 1 && acs == 1) {
      for (j0 = 0; j0 + 4 <= n; j0 += 4) {
        const $T* b0 = b + j0 * bcs;
        const $T* b1 = b0 + bcs;
        const $T* b2 = b1 + bcs;
        const $T* b3 = b2 + bcs;
        $T s0[L], s1[L], s2[L], s3[L];
        for (l = 0; l < L; ++l) s0[l] = s1[l] = s2[l] = s3[l] = 0;
        for (p = 0; p + L <= k; p += L)
          for (l = 0; l < L; ++l) {
            MG_GEMM_MAC_$S(s0[l], ai[p + l], b0[p + l]);
            MG_GEMM_MAC_$S(s1[l], ai[p + l], b1[p + l]);
            MG_GEMM_MAC_$S(s2[l], ai[p + l], b2[p + l]);
            MG_GEMM_MAC_$S(s3[l], ai[p + l], b3[p + l]);
          }
        for (l = 0; p + l < k; ++l) {
          MG_GEMM_MAC_$S(s0[l], ai[p + l], b0[p + l]);
          MG_GEMM_MAC_$S(s1[l], ai[p + l], b1[p + l]);
          MG_GEMM_MAC_$S(s2[l], ai[p + l], b2[p + l]);
          MG_GEMM_MAC_$S(s3[l], ai[p + l], b3[p + l]);
        }
        for (h = L / 2; h > 0; h /= 2)  /* lanes summed as a tree: 4 dependent adds, not 16 */
          for (l = 0; l < h; ++l) {
            s0[l] += s0[l + h];
            s1[l] += s1[l + h];
            s2[l] += s2[l + h];
            s3[l] += s3[l + h];
          }
        ci[j0] = s0[0];
        ci[j0 + 1] = s1[0];
        ci[j0 + 2] = s2[0];
        ci[j0 + 3] = s3[0];
      }
      for (j = j0; j < n; ++j) {  /* the last columns one at a time, still in lanes */
        const $T* bj = b + j * bcs;
        $T s0[L];
        for (l = 0; l < L; ++l) s0[l] = 0;
        for (p = 0; p + L <= k; p += L)
          for (l = 0; l < L; ++l) MG_GEMM_MAC_$S(s0[l], ai[p + l], bj[p + l]);
        for (l = 0; p + l < k; ++l) MG_GEMM_MAC_$S(s0[l], ai[p + l], bj[p + l]);
        for (h = L / 2; h > 0; h /= 2)
          for (l = 0; l < h; ++l) s0[l] += s0[l + h];
        ci[j] = s0[0];
      }
    } else {
      for (j = 0; j < n; ++j) {
        $T sum = 0;
        for (p = 0; p < k; ++p) MG_GEMM_MAC_$S(sum, ai[p * acs], b[p * brs + j * bcs]);
        ci[j] = sum;
      }
    }
  }
}
)";

// Float dtypes only (i64 has its own loop in linalg.cpp).
std::string substitute_impl(std::string s, DType t) {
  const bool f = t == DType::f32;
  for (auto [k, v] : {std::pair<std::string, std::string>{"$S", std::string(name_of(t))}, {"$T", f ? "float" : "double"},
                      {"$F", f ? "f" : ""}, {"$U", f ? "F" : ""}, {"$P", f ? "s" : "d"}})
    for (std::size_t p; (p = s.find(k)) != std::string::npos;) s.replace(p, k.size(), v);
  return s;
}

}  // namespace

std::string arch_text() { return kArch + ("#define MG_GEMM_THREAD_MIN " + std::to_string(kThreadMin) + "\n"); }
std::string intrinsics_text() { return kIntrinsics; }
std::string substitute(std::string text, DType t) { return substitute_impl(std::move(text), t); }
std::string defs_text(DType t) { return substitute(kDefs, t); }
std::string packed_text(DType t) { return substitute(kPacked, t); }
std::string small_text(DType t) { return substitute(kSmall, t); }

}  // namespace mg::ir::gemm_c99
