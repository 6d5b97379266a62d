// Matrix-vector products for one-row matmuls (batch-1 inference): c[0,n) = a[0,k) @ B with
// B(p, j) = b[p*brs + j*bcs], read in place in either layout a Linear's weight comes in
// (brs == 1: weight.T, each output a dot product over a contiguous row; bcs == 1: rows
// of B scaled and summed). Why not GEMM: at m = 1 the product only streams the weights
// once, so the limit is the cache's read bandwidth; a GEMM's packing or BLAS's call
// overhead is pure loss there. The interpreter's kernel and the C99 text below use the
// same loop nest (one row at a time, 8 vector accumulators), so both executors sum
// in the same order.
#pragma once
#include <cstdint>

namespace mg::ir::gemv {

// True when (a, B) has a layout these kernels take: a contiguous, brs == 1 or bcs == 1.
bool applies(std::int64_t acs, std::int64_t brs, std::int64_t bcs);
void gemv(const float* a, const float* b, std::int64_t brs, std::int64_t bcs, float* c, std::int64_t n,
          std::int64_t k);
void gemv(const double* a, const double* b, std::int64_t brs, std::int64_t bcs, double* c, std::int64_t n,
          std::int64_t k);

// The C99 definition of mg_gemv_$S($T element type): same loop nest, GNU vector extensions
// where the compiler has them (GCC, Clang), a plain loop elsewhere (a board's compiler).
extern const char* const kCText;

}  // namespace mg::ir::gemv
