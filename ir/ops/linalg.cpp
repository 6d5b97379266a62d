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

}  // namespace

void register_linalg_ops() {
  OpDef& mm = define_op("matmul");
  mm.doc =
      "a[...,m,k] @ b[...,k,n] -> [...,m,n]; rank >= 2, identical batch dims, same dtype "
      "(f32, f64, i64; i64 wraps on overflow); k = 0 gives zeros";
  mm.arity = 2;
  mm.infer = matmul_infer;
  mm.kernel = matmul_kernel;
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
