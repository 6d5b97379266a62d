// This CPU's copy of the natively compiled C99 kernels (native_kernels.hpp): the entry
// points gemm_native_gen writes, one set per ISA, picked once by CPU feature.
#include "minigrad/ir/ops/native_kernels.hpp"

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
template <class T>
constexpr Kernels<T> avx512 = {};
template <>
constexpr Kernels<float> avx512<float> = MG_NATIVE_SET(f32, avx512);
template <>
constexpr Kernels<double> avx512<double> = MG_NATIVE_SET(f64, avx512);
template <class T>
constexpr Kernels<T> avx2 = {};
template <>
constexpr Kernels<float> avx2<float> = MG_NATIVE_SET(f32, avx2);
template <>
constexpr Kernels<double> avx2<double> = MG_NATIVE_SET(f64, avx2);
}  // namespace
#endif

template <class T>
const Kernels<T>* kernels() {
#if defined(__x86_64__)
  static const Kernels<T>* const picked = []() -> const Kernels<T>* {
    if (__builtin_cpu_supports("avx512f")) return &avx512<T>;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return &avx2<T>;
    return nullptr;
  }();
  return picked;
#else
  return nullptr;
#endif
}

template const Kernels<float>* kernels<float>();
template const Kernels<double>* kernels<double>();

}  // namespace mg::ir::native
