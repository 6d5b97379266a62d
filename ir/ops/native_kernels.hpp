// The C99 backend's GEMM and convolution kernels compiled into the library once per x86 ISA
// (ir/meson.build, native_kernels_gen.cpp), so the interpreter runs the very code the C99
// backend emits. kernels<T>() is this CPU's copy (AVX-512, else AVX2+FMA), or null where
// there is none (another architecture, an older x86): callers fall back to OpenBLAS.
// Strides are in elements; every matrix is row-major unless its strides say otherwise.
#pragma once
#include <cstdint>
#include <string_view>

namespace mg::ir::native {

template <class T>
struct Kernels {
  // C[m,n] = A[m,k] @ B[k,n] with any strides (gemm_c99.cpp's mg_gemm): B packed into
  // `nb` slices of `bpack` (gemm_c99::bpack_bytes), the threads splitting C by rows.
  void (*gemm)(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t ars, std::int64_t acs,
               const T* b, std::int64_t brs, std::int64_t bcs, T* c, T* bpack, std::int64_t nb);
  // C[m,n] (row stride n) = A @ B with B's rows contiguous (row stride brs), read in place
  // by register tiles: small GEMMs (a conv's per-sample products), no packing, one thread.
  void (*conv_tiles)(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t ars, std::int64_t acs,
                     const T* b, std::int64_t brs, T* c);
  // C[m,n] (row stride n) = A @ B^T with A's and B^T's rows contiguous along k: blocks of
  // vector dot products (a conv's weight gradient), one thread.
  void (*conv_dots)(std::int64_t m, std::int64_t n, std::int64_t k, const T* a, std::int64_t ars, const T* b,
                    std::int64_t bcs, T* c);
};

template <class T>
const Kernels<T>* kernels();

// A kernel by the C name a JIT module calls it (gemm_c99::kKernelEntries: mg_gemm_f32,
// mg_conv_dots_f64, ...): this CPU's copy, or null (none here, or no such kernel).
using CFunction = void (*)();
CFunction c_kernel(std::string_view c_name);
template <>
const Kernels<float>* kernels<float>();
template <>
const Kernels<double>* kernels<double>();

}  // namespace mg::ir::native
