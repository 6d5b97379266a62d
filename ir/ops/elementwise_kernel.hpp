// Elementwise kernels over xtensor/xsimd: an op supplies one generic expression
// (`[](auto x) { return xt::exp(x); }`) and gets a KernelFn for each dtype it supports.
// Arrays are adapted without copies and processed in chunks, chunks in parallel (OpenMP)
// for large arrays. Included only by the elementwise family files (xtensor is heavy).
#pragma once
#include <array>
#include <cstdint>

#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xoperation.hpp>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"

namespace mg::ir::kernels {

inline constexpr std::int64_t kChunk = 1 << 14;
inline constexpr std::int64_t kParallelMin = 1 << 17;

template <class T>
auto adapt(T* p, std::int64_t n) {
  return xt::adapt(p, static_cast<std::size_t>(n), xt::no_ownership(),
                   std::array<std::size_t, 1>{static_cast<std::size_t>(n)});
}

// out = f(in_0, ..., in_k) elementwise; In and Out are the C++ element types.
template <class Out, class In, class F, std::size_t... I>
void map_chunks(const KernelArgs& a, F& f, std::index_sequence<I...>) {
  const std::int64_t n = a.out.numel();
  Out* out = a.out.data<Out>();
  auto chunk = [&](std::int64_t c0) {
    const std::int64_t len = std::min(kChunk, n - c0);
    auto o = adapt(out + c0, len);
    xt::noalias(o) = f(adapt(const_cast<In*>(a.in[I]->template data<In>()) + c0, len)...);
  };
  if (n >= kParallelMin) {  // see parallel_for: no OpenMP region for small arrays
#pragma omp parallel for schedule(static)
    for (std::int64_t c0 = 0; c0 < n; c0 += kChunk) chunk(c0);
  } else {
    for (std::int64_t c0 = 0; c0 < n; c0 += kChunk) chunk(c0);
  }
}

// body(i) for i in [0, n): in parallel from kParallelMin elements. Smaller loops do not
// enter an OpenMP region at all: starting and ending one costs a futex system call even
// on one thread (microseconds on a VM), which dominated small and tiled (fused) kernels.
// Simd: the loop has no dependences and no libm calls (no vector-libm substitutions).
template <bool Simd = false, class F>
void parallel_for(std::int64_t n, F&& body) {
  if (n >= kParallelMin) {
    if constexpr (Simd) {
#pragma omp parallel for simd
      for (std::int64_t i = 0; i < n; ++i) body(i);
    } else {
#pragma omp parallel for
      for (std::int64_t i = 0; i < n; ++i) body(i);
    }
  } else if constexpr (Simd) {
#pragma omp simd
    for (std::int64_t i = 0; i < n; ++i) body(i);
  } else {
    for (std::int64_t i = 0; i < n; ++i) body(i);
  }
}

template <class Out, class In, std::size_t Arity, class F>
void map(const KernelArgs& a, F f) {
  map_chunks<Out, In>(a, f, std::make_index_sequence<Arity>{});
}

// A kernel for ops whose result dtype equals the operand dtype, instantiated for the
// float dtypes (and i64 when `with_int`).
template <std::size_t Arity, bool with_int = false, class F>
KernelFn same_dtype(F f) {
  return [f](const KernelArgs& a) {
    switch (a.out.dtype()) {
      case DType::f32: return map<float, float, Arity>(a, f);
      case DType::f64: return map<double, double, Arity>(a, f);
      case DType::i64:
        if constexpr (with_int) return map<std::int64_t, std::int64_t, Arity>(a, f);
        [[fallthrough]];
      default: MG_ASSERT(false, "kernel: unsupported dtype for " + a.node.op_name());
    }
  };
}

// i64 arithmetic wraps modulo 2^64 (two's complement), in the interpreter as in the C99
// emitter's (uint64_t) casts: signed overflow is undefined behaviour in C++ and C, so no
// i64 kernel computes it. Wrapping helpers for those kernels:
inline std::int64_t wrap(std::uint64_t v) { return static_cast<std::int64_t>(v); }  // modular since C++20
inline std::uint64_t bits(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// Floats through the xtensor expression `f`; i64 element by element through `g`, which
// must compute with wrap()/bits() (see above).
template <std::size_t Arity, class F, class G>
KernelFn same_dtype_wrapping(F f, G g) {
  return [f, g](const KernelArgs& a) {
    switch (a.out.dtype()) {
      case DType::f32: return map<float, float, Arity>(a, f);
      case DType::f64: return map<double, double, Arity>(a, f);
      case DType::i64: {
        std::int64_t* out = a.out.data<std::int64_t>();
        std::array<const std::int64_t*, Arity> in{};
        for (std::size_t k = 0; k < Arity; ++k) in[k] = a.in[k]->template data<std::int64_t>();
        return [&]<std::size_t... I>(std::index_sequence<I...>) {
          parallel_for<true>(a.out.numel(), [&](std::int64_t i) { out[i] = g(in[I][i]...); });
        }(std::make_index_sequence<Arity>{});
      }
      default: MG_ASSERT(false, "kernel: unsupported dtype for " + a.node.op_name());
    }
  };
}

}  // namespace mg::ir::kernels
