// Linear-algebra ops: matmul over equal batch dims (the DSL broadcasts batch dims and
// promotes 1-D operands with unsqueeze/squeeze before it gets here). Float kernels call
// OpenBLAS gemm once per batch matrix; i64 uses a plain row-parallel loop with wrapping
// arithmetic (no signed-overflow UB). Invariant: a k = 0 product is all zeros.
#include <cblas.h>

#include <climits>
#include <cstring>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/gemv.hpp"
#include "minigrad/ir/ops/rules.hpp"

namespace mg::ir {

namespace {

using namespace rules;

struct MatmulDims {
  std::int64_t batch, m, k, n;
};

// Which operands are read transposed (their buffers hold the [..., k, m] / [..., n, k]
// matrices: a transpose view the interpreter did not materialise).
struct Transposed {
  bool a = false, b = false;
};

// Dimensions from the operands' buffers; a transposed operand's buffer holds [..., k, m]
// (or [..., n, k]): the view node's operand.
MatmulDims matmul_dims(const Node& node, const Shape& as, const Shape& bs, Transposed t) {
  const std::size_t r = as.size();
  MatmulDims d{1, as[r - (t.a ? 1 : 2)], as[r - (t.a ? 2 : 1)], bs[r - (t.b ? 2 : 1)]};
  for (std::size_t i = 0; i + 2 < r; ++i) d.batch *= as[i];
  MG_ASSERT(d.m <= INT_MAX && d.k <= INT_MAX && d.n <= INT_MAX,
            node.op_name() + ": matrix dimension exceeds the BLAS integer range");
  return d;
}

// C[m,n] = A[m,k] @ B[k,n], row-major, for one batch matrix.
void gemm(const float* a, const float* b, float* c, const MatmulDims& d, Transposed t) {
  const int m = static_cast<int>(d.m), n = static_cast<int>(d.n), k = static_cast<int>(d.k);
  cblas_sgemm(CblasRowMajor, t.a ? CblasTrans : CblasNoTrans, t.b ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a,
              t.a ? m : k, b, t.b ? k : n, 0.0f, c, n);
}
void gemm(const double* a, const double* b, double* c, const MatmulDims& d, Transposed t) {
  const int m = static_cast<int>(d.m), n = static_cast<int>(d.n), k = static_cast<int>(d.k);
  cblas_dgemm(CblasRowMajor, t.a ? CblasTrans : CblasNoTrans, t.b ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a,
              t.a ? m : k, b, t.b ? k : n, 0.0, c, n);
}
// i64: i-k-j order (contiguous inner loop over B's and C's rows); wraps on overflow. Reads
// no views (kernel_reads_view says so for integers).
void gemm(const std::int64_t* a, const std::int64_t* b, std::int64_t* c, const MatmulDims& d, Transposed) {
  const std::int64_t m = d.m, k = d.k, n = d.n;
#pragma omp parallel for schedule(static) if (m * n * k >= (1 << 16))
  for (std::int64_t i = 0; i < m; ++i) {
    auto* ci = reinterpret_cast<std::uint64_t*>(c + i * n);
    for (std::int64_t j = 0; j < n; ++j) ci[j] = 0;
    for (std::int64_t p = 0; p < k; ++p) {
      const auto aip = static_cast<std::uint64_t>(a[i * k + p]);
      const auto* bp = reinterpret_cast<const std::uint64_t*>(b + p * n);
      for (std::int64_t j = 0; j < n; ++j) ci[j] += aip * bp[j];
    }
  }
}

// A view that reads a contiguous buffer with the last two axes swapped (a batch of
// transposed matrices, which BLAS reads in place); `shape` is the view's own.
bool is_matrix_transpose(const CView& v, const Shape& shape) {
  const std::size_t r = shape.size();
  if (r < 2 || v.offset != 0 || v.strides.size() != r) return false;
  if (v.strides[r - 2] != 1 || v.strides[r - 1] != shape[r - 2]) return false;
  std::int64_t s = shape[r - 2] * shape[r - 1];
  for (std::size_t i = r - 2; i-- > 0;) {
    if (shape[i] != 1 && v.strides[i] != s) return false;
    s *= shape[i];
  }
  return true;
}

bool matmul_reads_view(const Node&, std::size_t operand, const CView& v, std::span<const Type> in) {
  return operand < 2 && is_float(in[operand].dtype) && is_matrix_transpose(v, in[operand].shape);
}

void matmul_kernel(const KernelArgs& args) {
  const auto transposed = [&](std::size_t k) { return k < args.in_views.size() && !args.in_views[k].contiguous(); };
  const Transposed t{transposed(0), transposed(1)};
  const Array& a = *args.in[0];
  const Array& b = *args.in[1];
  const MatmulDims d = matmul_dims(args.node, a.shape(), b.shape(), t);
  if (args.out.numel() == 0) return;
  if (d.k == 0) {  // empty sum: BLAS rejects lda = 0, and the answer is zeros anyway
    std::memset(args.out.raw(), 0, args.out.nbytes());
    return;
  }
  visit_dtype(args.out.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, std::uint8_t>) {
      MG_ASSERT(false, "matmul: unsupported dtype bool");
    } else {
      const T* pa = a.data<T>();
      const T* pb = b.data<T>();
      T* pc = args.out.data<T>();
      // One row (batch-1 inference): a pass over B at the cache's bandwidth (ops/gemv.hpp).
      constexpr bool kFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;
      for (std::int64_t i = 0; i < d.batch; ++i) {
        if constexpr (kFloat) {
          if (d.m == 1) {
            gemv::gemv(pa + i * d.k, pb + i * d.k * d.n, t.b ? 1 : d.n, t.b ? d.k : 1, pc + i * d.n, d.n, d.k);
            continue;
          }
        }
        gemm(pa + i * d.m * d.k, pb + i * d.k * d.n, pc + i * d.m * d.n, d, t);
      }
    }
  });
}

Type matmul_infer(std::span<const Type> in, const Attrs&) {
  const Type& a = in[0];
  const Type& b = in[1];
  require(allowed(a.dtype, Dtypes::numeric), "expects " + describe(Dtypes::numeric));
  require(a.dtype == b.dtype, "expects operands of the same dtype");
  require(a.rank() >= 2 && b.rank() >= 2,
          "expects operands of rank >= 2 (the DSL promotes 1-D operands)");
  require(a.rank() == b.rank(), "expects operands of equal rank (broadcast batch dims explicitly)");
  const std::size_t r = a.shape.size();
  for (std::size_t i = 0; i + 2 < r; ++i)
    require(a.shape[i] == b.shape[i], "expects identical batch dims (broadcast explicitly)");
  require(a.shape[r - 1] == b.shape[r - 2],
          "expects a[..., m, k] and b[..., k, n] with matching k");
  Type out = a;
  out.shape[r - 1] = b.shape[r - 1];
  return out;
}

// ---- C99 emission ----------------------------------------------------------------------

// Our own GEMM (standalone exports have no BLAS; the JIT uses it too, being faster here
// than Debian's OpenBLAS), after BLIS/GotoBLAS: any
// operand strides (A(i,p) = a[i*ars + p*acs], B(p,j) = b[p*brs + j*bcs]), so a transposed
// operand (a Linear's weight.T, the backward pass's x.T) is read in place; B is packed per
// KC-deep slice into contiguous NR-column panels (in the arena scratch the emitter
// planned; A is read in place: its MR x KC block stays in L1, and packing it per chunk
// cost as much as the FMAs at MLP sizes), and an MR x NR register tile accumulates
// over them, written so compilers vectorise it (-O3 -march=...). MR/NR/KC suit the
// target's vector registers (and a microcontroller's stack); FMA where the target has a
// fast one (C99's FP_FAST_FMA[F]). Threads take disjoint column chunks: no barrier inside,
// so a busy machine (or BLAS threads spinning in the same process) cannot stall them.
// Fewer than kGemmSmallM rows (batch-1 inference) skip packing. $T element type, $S name
// suffix, $F/$U the math.h suffixes (f/F for float).
constexpr const char* kCGemm = R"(#if defined(__AVX512F__)
#define MG_GEMM_MR_$S 8
#define MG_GEMM_NR_$S (64 / (int)sizeof($T) * 2)
#define MG_GEMM_KC_$S 256
#elif defined(__AVX__)
#define MG_GEMM_MR_$S 6
#define MG_GEMM_NR_$S (32 / (int)sizeof($T) * 2)
#define MG_GEMM_KC_$S 256
#else
#define MG_GEMM_MR_$S 4
#define MG_GEMM_NR_$S (16 / (int)sizeof($T) * 2)
#define MG_GEMM_KC_$S 64
#endif
#if defined(FP_FAST_FMA$U)
#define MG_GEMM_MAC_$S(acc, x, y) acc = fma$F(x, y, acc)
#else
#define MG_GEMM_MAC_$S(acc, x, y) acc += (x) * (y)
#endif
)";
constexpr const char* kCGemmPacked = R"(/* One MR x NR register tile: c[0,mr) x [0,nr) = (add ? c : 0) + A[0,mr) x [0,kc) @ the packed
   panel bp (NR columns, zero-padded). A is read in place, any strides: rows past mr repeat
   row mr - 1 (computed, never stored), so the loop is always full and never reads past A. */
static void mg_gemm_tile_$S(int64_t kc, const $T* a, int64_t ars, int64_t acs, const $T* bp, $T* c, int64_t ldc,
                            int64_t mr, int64_t nr, int add) {
  enum { MR = MG_GEMM_MR_$S, NR = MG_GEMM_NR_$S };
  $T acc[MR][NR];
  const $T* row[MR];
  int64_t p, r, j;
  for (r = 0; r < MR; ++r) {
    row[r] = a + (r < mr ? r : mr - 1) * ars;
    for (j = 0; j < NR; ++j) acc[r][j] = 0;
  }
  for (p = 0; p < kc; ++p) {
    const $T* bpp = bp + p * NR;
    for (r = 0; r < MR; ++r) {
      const $T ar = row[r][p * acs];
      MG_OMP(omp simd)
      for (j = 0; j < NR; ++j) MG_GEMM_MAC_$S(acc[r][j], ar, bpp[j]);
    }
  }
  if (mr == MR && nr == NR) {
    for (r = 0; r < MR; ++r)
      for (j = 0; j < NR; ++j) c[r * ldc + j] = (add ? c[r * ldc + j] : 0) + acc[r][j];
  } else {
    for (r = 0; r < mr; ++r)
      for (j = 0; j < nr; ++j) c[r * ldc + j] = (add ? c[r * ldc + j] : 0) + acc[r][j];
  }
}
/* dst[p][0,NR) = B(p, j) for j < nr, zero beyond: one kc-deep panel of NR columns. */
static void mg_gemm_pack_b_$S(int64_t kc, int64_t nr, const $T* b, int64_t brs, int64_t bcs, $T* dst) {
  enum { NR = MG_GEMM_NR_$S };
  int64_t p, j;
  for (p = 0; p < kc; ++p)
    for (j = 0; j < NR; ++j) dst[p * NR + j] = j < nr ? b[p * brs + j * bcs] : 0;
}
/* C[m,n] (row-major) = A @ B. The NR-column panels of C are split into chunks (at most 16
   panels, at least 8 chunks when there are enough panels), one OpenMP iteration each, so
   threads never wait on each other inside (dynamic: a thread the OS preempts on a busy
   machine leaves its chunks to the others): per KC-deep slice a chunk packs its B panels
   (into `bpack`, KC x roundup(n, NR), each chunk its own columns; or, when bpack is 0, one
   panel at a time on the stack) and runs the register tiles down all rows of A (A's
   MR x KC block stays in L1, the chunk's B panels in L2). */
static void mg_gemm_$S(int64_t m, int64_t n, int64_t k, const $T* a, int64_t ars, int64_t acs, const $T* b,
                       int64_t brs, int64_t bcs, $T* c, $T* bpack) {
  enum { MR = MG_GEMM_MR_$S, NR = MG_GEMM_NR_$S, KC = MG_GEMM_KC_$S, CH = 16 };
  const int64_t panels = (n + NR - 1) / NR, kcmax = k < KC ? k : KC;  /* a panel's stride in bpack */
  int64_t nch = (panels + CH - 1) / CH, ch;
  if (nch < 8) nch = panels < 8 ? panels : 8;
  MG_OMP(omp parallel for schedule(dynamic) if (m * n * k >= 262144))
  for (ch = 0; ch < nch; ++ch) {
    const int64_t t0 = ch * panels / nch, t1 = (ch + 1) * panels / nch;
    int64_t pc, ir, jt;
    for (pc = 0; pc < k; pc += KC) {
      const int64_t kc = k - pc < KC ? k - pc : KC;
      if (bpack) {
        for (jt = t0; jt < t1; ++jt)
          mg_gemm_pack_b_$S(kc, n - jt * NR < NR ? n - jt * NR : NR, b + pc * brs + jt * NR * bcs, brs, bcs,
                            bpack + jt * NR * kcmax);
        for (ir = 0; ir < m; ir += MR)
          for (jt = t0; jt < t1; ++jt)
            mg_gemm_tile_$S(kc, a + ir * ars + pc * acs, ars, acs, bpack + jt * NR * kcmax, c + ir * n + jt * NR, n,
                            m - ir < MR ? m - ir : MR, n - jt * NR < NR ? n - jt * NR : NR, pc > 0);
      } else {
        $T bstack[KC * NR];
        for (jt = t0; jt < t1; ++jt) {
          mg_gemm_pack_b_$S(kc, n - jt * NR < NR ? n - jt * NR : NR, b + pc * brs + jt * NR * bcs, brs, bcs, bstack);
          for (ir = 0; ir < m; ir += MR)
            mg_gemm_tile_$S(kc, a + ir * ars + pc * acs, ars, acs, bstack, c + ir * n + jt * NR, n,
                            m - ir < MR ? m - ir : MR, n - jt * NR < NR ? n - jt * NR : NR, pc > 0);
        }
      }
    }
  }
}
)";
constexpr const char* kCGemmSmall = R"(/* A few rows (batch-1 inference), no packing. B with contiguous rows: blocks of W columns
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

// The B panels' scratch is sized here, at emission time, for every target: KC deep at
// most (MG_GEMM_KC_*) and every target's NR (<= 32) divides kGemmNPad.
constexpr std::int64_t kGemmKC = 256, kGemmNPad = 32;
constexpr std::int64_t kGemmSmallM = 8;  // fewer rows: mg_gemm_small (no packing, no scratch)

std::int64_t round_up(std::int64_t x, std::int64_t m) { return (x + m - 1) / m * m; }

std::string c_gemm_text(std::string s, DType t) {
  const bool f = t == DType::f32;
  for (auto [k, v] : {std::pair<std::string, std::string>{"$S", std::string(name_of(t))}, {"$T", c_type(t)},
                      {"$F", f ? "f" : ""}, {"$U", f ? "F" : ""}})
    for (std::size_t p; (p = s.find(k)) != std::string::npos;) s.replace(p, k.size(), v);
  return s;
}

// Adds the GEMM definitions a call needs (one support entry each, so a module never
// holds an unused static function: -Wall -Werror) and returns the function's name.
std::string use_gemm(const CLoopArgs& a, DType t, bool small) {
  const std::string S = std::string(name_of(t));
  a.support("mg_gemm_defs_" + S, c_gemm_text(kCGemm, t));
  const std::string fn = small ? "mg_gemm_small_" + S : "mg_gemm_" + S;
  a.support(fn, c_gemm_text(small ? kCGemmSmall : kCGemmPacked, t));
  return fn;
}

// An operand as the GEMM reads it: batch matrix q at `base + offset(q)`, rows/cols strides.
struct GemmOperand {
  std::string base;    // C expression of matrix q's first element
  std::int64_t rs, cs;  // element strides of rows and columns
};

GemmOperand gemm_operand(const std::string& ptr, const Type& t, const CView& v) {
  const std::size_t r = t.shape.size();
  if (v.contiguous())
    return {ptr + " + q * " + std::to_string(t.shape[r - 2] * t.shape[r - 1]), t.shape[r - 1], 1};
  const Shape batch(t.shape.begin(), t.shape.end() - 2);
  const std::vector<std::int64_t> bs(v.strides.begin(), v.strides.end() - 2);
  std::string off = std::to_string(v.offset);
  if (!batch.empty()) off += " + " + c_offset("q", batch, bs);
  return {ptr + " + " + off, v.strides[r - 2], v.strides[r - 1]};
}

void matmul_c(const CLoopArgs& a) {
  const Shape& as = a.in_types[0].shape;
  const std::size_t r = as.size();
  const std::int64_t m = as[r - 2], k = as[r - 1], n = a.node.type.shape[r - 1];
  std::int64_t batch = 1;
  for (std::size_t i = 0; i + 2 < r; ++i) batch *= as[i];
  const DType t = a.node.type.dtype;
  if (a.node.type.numel() == 0) return;
  const std::string M = std::to_string(m), N = std::to_string(n), K = std::to_string(k);
  if (k == 0) {
    c_for(a.w, "i", a.node.type.numel(), a.node.type.numel(), true);
    a.w.line(a.out + "[i] = 0;");
    a.w.close();
    return;
  }
  const CView none;
  const GemmOperand A = gemm_operand(a.in[0], a.in_types[0], a.in_views.empty() ? none : a.in_views[0]);
  const GemmOperand B = gemm_operand(a.in[1], a.in_types[1], a.in_views.size() < 2 ? none : a.in_views[1]);
  const std::string C = a.out + " + q * " + std::to_string(m * n);
  const std::string strides_a = A.base + ", " + std::to_string(A.rs) + ", " + std::to_string(A.cs);
  const std::string strides_b = B.base + ", " + std::to_string(B.rs) + ", " + std::to_string(B.cs);
  a.w.open("for (int64_t q = 0; q < " + std::to_string(batch) + "; ++q)");
  const std::string T = c_type(t), S = std::string(name_of(t));
  if (t == DType::i64) {  // wrapping i-k-j loop
    c_for(a.w, "i", m, m * n * k, false);
    a.w.line("uint64_t* ci = (uint64_t*)(" + C + ") + i * " + N + ";");
    a.w.line("int64_t j, p;");
    a.w.line("for (j = 0; j < " + N + "; ++j) ci[j] = 0;");
    a.w.open("for (p = 0; p < " + K + "; ++p)");
    a.w.line("const uint64_t aip = (uint64_t)(" + A.base + ")[i * " + std::to_string(A.rs) + " + p * " +
             std::to_string(A.cs) + "];");
    a.w.line("const int64_t* bp = " + B.base + " + p * " + std::to_string(B.rs) + ";");
    a.w.line("for (j = 0; j < " + N + "; ++j) ci[j] += aip * (uint64_t)bp[j * " + std::to_string(B.cs) + "];");
    a.w.close();
    a.w.close();
  } else if (m == 1 && gemv::applies(A.cs, B.rs, B.cs)) {
    // One row (batch-1 inference): the interpreter's loop nest (ops/gemv.hpp).
    a.support("mg_gemv_" + S, c_gemm_text(gemv::kCText, t));
    a.w.line("mg_gemv_" + S + "(" + N + ", " + K + ", " + A.base + ", " + B.base + ", " + std::to_string(B.rs) + ", " +
             std::to_string(B.cs) + ", " + C + ");");
  } else if (m < kGemmSmallM) {
    // A few rows: our unpacked loops (batch-1 latency: no BLAS call overhead either).
    a.w.line(use_gemm(a, t, true) + "(" + M + ", " + N + ", " + K + ", " + strides_a + ", " + strides_b + ", " + C + ");");
  } else if (!a.scratch.empty()) {
    // Our packed GEMM, in the JIT too (no BLAS call): with AVX-512 it outruns Debian's
    // OpenBLAS (its Haswell kernels here, bench/c99_bench (c)) and reads transposes in place.
    a.w.line(use_gemm(a, t, false) + "(" + M + ", " + N + ", " + K + ", " + strides_a + ", " + strides_b + ", " + C + ", (" + T +
             "*)" + a.scratch + ");");
  } else {
    // No planned scratch (a caller that plans none, e.g. a fused node's prologue): B panels
    // packed one at a time on the stack; still ahead of OpenBLAS here.
    a.w.line(use_gemm(a, t, false) + "(" + M + ", " + N + ", " + K + ", " + strides_a + ", " + strides_b + ", " + C + ", 0);");
  }
  a.w.close();
}

std::int64_t matmul_scratch(const Node& node, std::span<const Type> in) {
  const Shape& as = in[0].shape;
  const std::size_t r = as.size();
  const std::int64_t m = as[r - 2], k = as[r - 1], n = node.type.shape[r - 1];
  if (!is_float(node.type.dtype) || m < kGemmSmallM || k == 0 || node.type.numel() == 0) return 0;
  return std::min(k, kGemmKC) * round_up(n, kGemmNPad) * static_cast<std::int64_t>(size_of(node.type.dtype));
}

// x with its last two axes swapped. A transpose of a transpose (the backward of a
// Linear's x @ weight.T) is its operand, not a second node: the backward GEMM then reads
// the weight itself, and weight.T stays a view every GEMM reads in place; a materialised
// weight.T would otherwise live from the forward to the backward (a training step's
// planned peak growing with depth by the weights' bytes).
Value transposed(Value x) {
  const Node& n = x.node();
  if (n.kind == NodeKind::op && n.op == &defined_op("permute")) {
    const I64List& p = n.attrs.list("perm");
    const std::size_t r = p.size();
    bool swap_last2 = r >= 2 && p[r - 1] == static_cast<std::int64_t>(r - 2) && p[r - 2] == static_cast<std::int64_t>(r - 1);
    for (std::size_t i = 0; i + 2 < r; ++i) swap_last2 = swap_last2 && p[i] == static_cast<std::int64_t>(i);
    if (swap_last2) return Value{x.graph, n.inputs[0]};
  }
  return transpose_last2(x);
}

}  // namespace

void register_linalg_ops() {
  OpDef& mm = define_op("matmul");
  mm.doc =
      "a[...,m,k] @ b[...,k,n] -> [...,m,n]; rank >= 2, identical batch dims, same dtype "
      "(f32, f64, i64; i64 wraps on overflow); k = 0 gives zeros";
  mm.arity = 2;
  mm.infer = matmul_infer;
  mm.kernel = matmul_kernel;
  mm.kernel_reads_view = matmul_reads_view;  // transposes go to BLAS in place
  mm.emit_c = c_loops(matmul_c);
  mm.emit_c.reads_views = true;  // strided operands (transposes) go to the GEMM in place
  mm.emit_c.scratch = matmul_scratch;
  mm.vjp = [](const VjpArgs& a) {
    if (!is_float(a.out.dtype())) return grads({Value{}, Value{}});
    Value g = a.cotangent;
    return grads({matmul(g, transposed(a.in[1])), matmul(transposed(a.in[0]), g)});
  };
  mm.test.cases = {
      {{Type{f64, {2, 3}}, Type{f64, {3, 4}}}, {}},
      {{Type{f64, {2, 2, 3}}, Type{f64, {2, 3, 2}}}, {}},
      {{Type{f64, {1, 1}}, Type{f64, {1, 1}}}, {}},
  };
}

}  // namespace mg::ir
