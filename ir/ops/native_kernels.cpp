// This CPU's copy of the natively compiled C99 kernels (native_kernels.hpp): the entry
// points native_kernels_gen writes, one set per ISA, picked once by CPU feature.
#include "minigrad/ir/ops/native_kernels.hpp"

#include "minigrad/ir/ops/gemm_c99.hpp"

namespace mg::ir::native {

#if defined(__x86_64__)
#define MG_NATIVE_DECL(T, s, isa)                                                                                      \
  void mg_native_gemm_##s##_##isa(std::int64_t, std::int64_t, std::int64_t, const T*, std::int64_t, std::int64_t,      \
                                  const T*, std::int64_t, std::int64_t, T*, T*, std::int64_t);                          \
  void mg_native_conv_tiles_##s##_##isa(std::int64_t, std::int64_t, std::int64_t, const T*, std::int64_t,              \
                                        std::int64_t, const T*, std::int64_t, T*);                                     \
  void mg_native_conv_dots_##s##_##isa(std::int64_t, std::int64_t, std::int64_t, const T*, std::int64_t, const T*,     \
                                       std::int64_t, T*);
extern "C" {
MG_NATIVE_DECL(float, f32, avx2)
MG_NATIVE_DECL(double, f64, avx2)
MG_NATIVE_DECL(float, f32, avx512)
MG_NATIVE_DECL(double, f64, avx512)
}
#define MG_NATIVE_SET(s, isa) {mg_native_gemm_##s##_##isa, mg_native_conv_tiles_##s##_##isa, mg_native_conv_dots_##s##_##isa}

namespace {
// By ISA: [0] AVX-512, [1] AVX2 + FMA.
const Kernels<float> kF32[] = {MG_NATIVE_SET(f32, avx512), MG_NATIVE_SET(f32, avx2)};
const Kernels<double> kF64[] = {MG_NATIVE_SET(f64, avx512), MG_NATIVE_SET(f64, avx2)};

int isa() {  // index into the tables above, -1: neither
  static const int picked = __builtin_cpu_supports("avx512f")                                   ? 0
                            : __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1
                                                                                               : -1;
  return picked;
}
}  // namespace

template <>
const Kernels<float>* kernels<float>() {
  return isa() < 0 ? nullptr : &kF32[isa()];
}
template <>
const Kernels<double>* kernels<double>() {
  return isa() < 0 ? nullptr : &kF64[isa()];
}
#else
template <>
const Kernels<float>* kernels<float>() {
  return nullptr;
}
template <>
const Kernels<double>* kernels<double>() {
  return nullptr;
}
#endif

namespace {
template <class T>
CFunction entry_of(const Kernels<T>* k, std::string_view entry) {
  if (!k) return nullptr;
  if (entry == "gemm") return reinterpret_cast<CFunction>(k->gemm);
  if (entry == "conv_tiles") return reinterpret_cast<CFunction>(k->conv_tiles);
  if (entry == "conv_dots") return reinterpret_cast<CFunction>(k->conv_dots);
  return nullptr;
}
}  // namespace

CFunction c_kernel(std::string_view c_name) {
  for (const gemm_c99::KernelEntry& e : gemm_c99::kKernelEntries) {
    if (c_name == gemm_c99::substitute(e.c_name, DType::f32)) return entry_of(kernels<float>(), e.entry);
    if (c_name == gemm_c99::substitute(e.c_name, DType::f64)) return entry_of(kernels<double>(), e.entry);
  }
  return nullptr;
}

}  // namespace mg::ir::native
