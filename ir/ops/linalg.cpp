// Linear-algebra ops: matmul over equal batch dims (the DSL broadcasts batch dims and
// promotes 1-D operands with unsqueeze/squeeze before it gets here). Float kernels call
// OpenBLAS gemm once per batch matrix; i64 uses a plain row-parallel loop with wrapping
// arithmetic (no signed-overflow UB). Invariant: a k = 0 product is all zeros.
#include <cblas.h>

#include <climits>
#include <cstring>

#include "ir/errors.hpp"
#include "ir/ops/rules.hpp"

namespace mg::ir {

namespace {

using namespace rules;

struct MatmulDims {
  std::int64_t batch, m, k, n;
};

MatmulDims matmul_dims(const Node& node, const Array& a, const Array& b) {
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  const std::size_t r = as.size();
  MatmulDims d{1, as[r - 2], as[r - 1], bs[r - 1]};
  for (std::size_t i = 0; i + 2 < r; ++i) d.batch *= as[i];
  MG_ASSERT(d.m <= INT_MAX && d.k <= INT_MAX && d.n <= INT_MAX,
            node.op_name() + ": matrix dimension exceeds the BLAS integer range");
  return d;
}

// C[m,n] = A[m,k] @ B[k,n], row-major, for one batch matrix.
void gemm(const float* a, const float* b, float* c, const MatmulDims& d) {
  const int m = static_cast<int>(d.m), n = static_cast<int>(d.n), k = static_cast<int>(d.k);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a, k, b, n, 0.0f, c, n);
}
void gemm(const double* a, const double* b, double* c, const MatmulDims& d) {
  const int m = static_cast<int>(d.m), n = static_cast<int>(d.n), k = static_cast<int>(d.k);
  cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, a, k, b, n, 0.0, c, n);
}
// i64: i-k-j order (contiguous inner loop over B's and C's rows); wraps on overflow.
void gemm(const std::int64_t* a, const std::int64_t* b, std::int64_t* c, const MatmulDims& d) {
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

void matmul_kernel(const KernelArgs& args) {
  const Array& a = *args.in[0];
  const Array& b = *args.in[1];
  const MatmulDims d = matmul_dims(args.node, a, b);
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
      for (std::int64_t i = 0; i < d.batch; ++i)
        gemm(pa + i * d.m * d.k, pb + i * d.k * d.n, pc + i * d.m * d.n, d);
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

// Our own GEMM for code without BLAS (standalone exports): C = A @ B. Per NR-column tile
// (tiles spread over OpenMP threads) and KB-deep block, the B panel is packed into a
// contiguous stack buffer (no power-of-two strides to thrash the cache; zero-padded, so
// the inner loop always has NR columns), then MR x NR register tiles of C accumulate over
// it. NR and KB suit the target (vector width; a small stack on microcontrollers: 2 KB
// for f32). $T element type, $S name suffix.
constexpr const char* kCGemm = R"(#if defined(__AVX512F__)
#define MG_GEMM_NR_$S (64 / sizeof($T) * 2)
#define MG_GEMM_KB_$S 256
#elif defined(__AVX__)
#define MG_GEMM_NR_$S (32 / sizeof($T) * 2)
#define MG_GEMM_KB_$S 256
#else
#define MG_GEMM_NR_$S (16 / sizeof($T) * 2)
#define MG_GEMM_KB_$S 64
#endif
static void mg_gemm_$S(int64_t m, int64_t n, int64_t k, const $T* a, const $T* b, $T* c) {
  enum { MR = 6, NR = MG_GEMM_NR_$S, KB = MG_GEMM_KB_$S };
  const int64_t tn = (n + NR - 1) / NR;
  int64_t jt;
  if (m < MR) {  /* a few rows (batch-1 inference): stream B's rows once, no packing */
    int64_t i, p, j;
    for (i = 0; i < m * n; ++i) c[i] = 0;
    for (i = 0; i < m; ++i)
      for (p = 0; p < k; ++p) {
        const $T aip = a[i * k + p];
        const $T* bp = b + p * n;
        $T* ci = c + i * n;
        MG_OMP(omp simd)
        for (j = 0; j < n; ++j) ci[j] += aip * bp[j];
      }
    return;
  }
  MG_OMP(omp parallel for schedule(static) if (m * n * k >= 262144))
  for (jt = 0; jt < tn; ++jt) {
    const int64_t j0 = jt * NR, nr = n - j0 < NR ? n - j0 : NR;
    $T bp[KB * NR];
    int64_t p0, i0, r, j, p;
    for (p0 = 0; p0 < k; p0 += KB) {
      const int64_t kb = k - p0 < KB ? k - p0 : KB;
      for (p = 0; p < kb; ++p)
        for (j = 0; j < NR; ++j) bp[p * NR + j] = j < nr ? b[(p0 + p) * n + j0 + j] : 0;
      for (i0 = 0; i0 < m; i0 += MR) {
        const int64_t mr = m - i0 < MR ? m - i0 : MR;
        const $T* ap = a + i0 * k + p0;
        $T acc[MR][NR];
        for (r = 0; r < MR; ++r)
          for (j = 0; j < NR; ++j) acc[r][j] = 0;
        if (mr == MR) {
          for (p = 0; p < kb; ++p)
            for (r = 0; r < MR; ++r) {
              const $T ar = ap[r * k + p];
              MG_OMP(omp simd)
              for (j = 0; j < NR; ++j) acc[r][j] += ar * bp[p * NR + j];
            }
        } else {
          for (p = 0; p < kb; ++p)
            for (r = 0; r < mr; ++r) {
              const $T ar = ap[r * k + p];
              for (j = 0; j < NR; ++j) acc[r][j] += ar * bp[p * NR + j];
            }
        }
        for (r = 0; r < mr; ++r)
          for (j = 0; j < nr; ++j) c[(i0 + r) * n + j0 + j] = (p0 == 0 ? 0 : c[(i0 + r) * n + j0 + j]) + acc[r][j];
      }
    }
  }
}
)";

std::string c_gemm_support(DType t) {
  std::string s = kCGemm;
  for (auto [k, v] : {std::pair<std::string, std::string>{"$S", std::string(name_of(t))}, {"$T", c_type(t)}})
    for (std::size_t p; (p = s.find(k)) != std::string::npos;) s.replace(p, k.size(), v);
  return s;
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
  a.w.open("for (int64_t q = 0; q < " + std::to_string(batch) + "; ++q)");
  const std::string A = a.in[0] + " + q * " + std::to_string(m * k), B = a.in[1] + " + q * " + std::to_string(k * n),
                    C = a.out + " + q * " + std::to_string(m * n);
  if (t == DType::i64) {  // wrapping i-k-j loop
    c_for(a.w, "i", m, m * n * k, false);
    a.w.line("uint64_t* ci = (uint64_t*)(" + C + ") + i * " + N + ";");
    a.w.line("int64_t j, p;");
    a.w.line("for (j = 0; j < " + N + "; ++j) ci[j] = 0;");
    a.w.open("for (p = 0; p < " + K + "; ++p)");
    a.w.line("const uint64_t aip = (uint64_t)(" + A + ")[i * " + K + " + p];");
    a.w.line("const int64_t* bp = " + B + " + p * " + N + ";");
    a.w.line("for (j = 0; j < " + N + "; ++j) ci[j] += aip * (uint64_t)bp[j];");
    a.w.close();
    a.w.close();
  } else if (a.blas) {
    const bool f = t == DType::f32;
    a.w.line(std::string(f ? "cblas_sgemm" : "cblas_dgemm") + "(CblasRowMajor, CblasNoTrans, CblasNoTrans, " + M + ", " + N +
             ", " + K + ", " + (f ? "1.0f, " : "1.0, ") + A + ", " + K + ", " + B + ", " + N + ", " + (f ? "0.0f, " : "0.0, ") +
             C + ", " + N + ");");
  } else {
    a.support("mg_gemm_" + std::string(name_of(t)), c_gemm_support(t));
    a.w.line("mg_gemm_" + std::string(name_of(t)) + "(" + M + ", " + N + ", " + K + ", " + A + ", " + B + ", " + C + ");");
  }
  a.w.close();
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
  mm.emit_c = c_loops(matmul_c);
  mm.vjp = [](const VjpArgs& a) {
    if (!is_float(a.out.dtype())) return grads({Value{}, Value{}});
    Value g = a.cotangent;
    return grads({matmul(g, transpose_last2(a.in[1])), matmul(transpose_last2(a.in[0]), g)});
  };
  mm.test.cases = {
      {{Type{f64, {2, 3}}, Type{f64, {3, 4}}}, {}},
      {{Type{f64, {2, 2, 3}}, Type{f64, {2, 3, 2}}}, {}},
      {{Type{f64, {1, 1}}, Type{f64, {1, 1}}}, {}},
  };
}

}  // namespace mg::ir
