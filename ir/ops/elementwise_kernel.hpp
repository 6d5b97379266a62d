// Elementwise kernels over xtensor/xsimd: an op supplies one generic expression
// (`[](auto x) { return xt::exp(x); }`) and gets a KernelFn for each dtype it supports.
// Arrays are adapted without copies and processed in chunks, chunks in parallel (OpenMP)
// for large arrays. Included only by the elementwise family files (xtensor is heavy).
#pragma once
#include <algorithm>
#include <array>
#include <utility>
#include <cstdint>
#include <type_traits>

#include <xtensor/xadapt.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xnoalias.hpp>
#include <xtensor/xoperation.hpp>

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/op_registry.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace mg::ir::kernels {

inline constexpr std::int64_t kChunk = 1 << 14;
inline constexpr std::int64_t kParallelMin = 1 << 17;

// Whether a loop may open an OpenMP region: only with more than one thread to run it.
// Starting and ending a region costs a futex system call even on one thread (microseconds
// on a VM), so one-thread runs never enter one.
inline bool several_threads() {
#ifdef _OPENMP
  return !omp_in_parallel() && omp_get_max_threads() > 1;
#else
  return false;
#endif
}

// f(t) for t in [0, n): on OpenMP threads (static schedule) when `par` and several_threads().
template <class F>
void for_each_task(std::int64_t n, bool par, F&& f) {
  if (par && n > 1 && several_threads()) {
#pragma omp parallel for schedule(static)
    for (std::int64_t t = 0; t < n; ++t) f(t);
  } else {
    for (std::int64_t t = 0; t < n; ++t) f(t);
  }
}

template <class T>
auto adapt(T* p, std::int64_t n) {
  return xt::adapt(p, static_cast<std::size_t>(n), xt::no_ownership(),
                   std::array<std::size_t, 1>{static_cast<std::size_t>(n)});
}

// f over [0, len) of `out` and the inputs, by xtensor's assignment.
template <class Out, class In, class F, std::size_t... I>
void map_span(Out* out, const std::array<const In*, sizeof...(I)>& in, std::int64_t len, F& f,
              std::index_sequence<I...>) {
  auto o = adapt(out, len);
  xt::noalias(o) = f(adapt(const_cast<In*>(in[I]), len)...);
}

// out = f(in_0, ..., in_k) elementwise; In and Out are the C++ element types.
//
// Every element takes the same code path, so an element's result depends only on its
// inputs (not on its position, the array's length or its alignment). xtensor's assignment
// would run an unaligned head and a short tail with scalar libm and the rest with xsimd,
// whose exp/log/tanh/... differ from libm in the last bit: exp(x)[i] changed with the
// length of x, and "exact" rewrites such as exp(broadcast(x)) = broadcast(exp(x)) failed.
// Here the head and tail go through one padded, aligned SIMD batch each.
// An elementwise function that also computes on SIMD batches as written (operators only:
// a + b, a / b; xt:: functions take expressions, not batches): map_body then runs it batch
// by batch with no xtensor expression around it, which is what xtensor's assignment does
// per batch, minus its per-call setup (fused windows call kernels thousands of times).
template <class F>
struct Batchwise {
  F f;
  template <class... A>
  auto operator()(A&&... a) const {
    return f(std::forward<A>(a)...);
  }
};
template <class F>
Batchwise<F> batchwise(F f) {
  return {std::move(f)};
}
template <class F>
inline constexpr bool is_batchwise = false;
template <class F>
inline constexpr bool is_batchwise<Batchwise<F>> = true;

// f over whole batches of [0, len) of the contiguous spans (len a multiple of the batch),
// with no xtensor expression around it when f is Batchwise; else by map_span.
template <class Out, class In, class F, std::size_t... I>
void map_body(Out* out, const std::array<const In*, sizeof...(I)>& in, std::int64_t len, F& f,
              std::index_sequence<I...> seq) {
#if defined(XTENSOR_USE_XSIMD)
  if constexpr (std::is_same_v<Out, In> && std::is_floating_point_v<Out>) {
    using B = xt_simd::simd_type<Out>;
    if constexpr (is_batchwise<std::remove_const_t<F>> && B::size > 1) {
      constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
      for (std::int64_t i = 0; i < len; i += W) f(B::load_unaligned(in[I] + i)...).store_unaligned(out + i);
      return;
    }
  }
#endif
  map_span<Out, In>(out, in, len, f, seq);
}

template <class Out, class In, class F, std::size_t... I>
void map_aligned(Out* out, const std::array<const In*, sizeof...(I)>& in, std::int64_t len, F& f,
                 std::index_sequence<I...> seq) {
#if defined(XTENSOR_USE_XSIMD)
  if constexpr (std::is_floating_point_v<Out> && std::is_floating_point_v<In>) {
    constexpr std::int64_t B = static_cast<std::int64_t>(xt_simd::simd_type<Out>::size);
    if constexpr (B > 1 && B * sizeof(Out) <= 64 && B * sizeof(In) <= 64) {
      // Up to B - 1 elements from `start` through one full batch in aligned buffers.
      auto padded = [&](std::int64_t start, std::int64_t count) {
        if (count <= 0) return;
        alignas(64) In buf[sizeof...(I)][B];
        alignas(64) Out res[B];
        for (std::size_t k = 0; k < sizeof...(I); ++k)
          for (std::int64_t j = 0; j < B; ++j) buf[k][j] = in[k][start + std::min(j, count - 1)];
        std::array<const In*, sizeof...(I)> bin{buf[I]...};
        map_body<Out, In>(res, bin, B, f, seq);
        std::copy(res, res + count, out + start);
      };
      const auto head = std::min<std::int64_t>(
          len, static_cast<std::int64_t>(xt_simd::get_alignment_offset(out, static_cast<std::size_t>(len), B)));
      const std::int64_t body = (len - head) / B * B;
      padded(0, head);
      if (body > 0) {
        std::array<const In*, sizeof...(I)> bin{(in[I] + head)...};
        map_body<Out, In>(out + head, bin, body, f, seq);  // aligned, whole batches: all SIMD
      }
      padded(head + body, len - head - body);
      return;
    }
  }
#endif
  map_span<Out, In>(out, in, len, f, seq);
}

template <class Out, class In, class F, std::size_t... I>
void map_chunks(const KernelArgs& a, F& f, std::index_sequence<I...> seq) {
  const std::int64_t n = a.out.numel();
  Out* out = a.out.data<Out>();
  auto chunk = [&](std::int64_t c0) {
    const std::int64_t len = std::min(kChunk, n - c0);
    std::array<const In*, sizeof...(I)> in{(a.in[I]->template data<In>() + c0)...};
    map_aligned<Out, In>(out + c0, in, len, f, seq);
  };
  if (n >= kParallelMin && several_threads()) {  // see parallel_for
#pragma omp parallel for schedule(static)
    for (std::int64_t c0 = 0; c0 < n; c0 += kChunk) chunk(c0);
  } else {
    for (std::int64_t c0 = 0; c0 < n; c0 += kChunk) chunk(c0);
  }
}

// body(i) for i in [0, n): in parallel from kParallelMin elements. Smaller loops, and any
// loop on one thread, do not enter an OpenMP region at all (several_threads): its futex
// call dominated small and tiled (fused) kernels.
// Simd: the loop has no dependences and no libm calls (no vector-libm substitutions).
template <bool Simd = false, class F>
void parallel_for(std::int64_t n, F&& body) {
  if (n >= kParallelMin && several_threads()) {
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

// One window through map_aligned: the code `kernel` runs on each of its chunks.
template <class T, std::size_t Arity, class F>
void map_window(const SpanArgs& s, F& f) {
  std::array<const T*, Arity> in{};
  for (std::size_t k = 0; k < Arity; ++k) in[k] = static_cast<const T*>(s.in[k]);
  map_aligned<T, T>(static_cast<T*>(s.out), in, s.n, f, std::make_index_sequence<Arity>{});
}

// A kernel and its window form (OpDef::span_kernel). Built from a plain KernelFn, the
// window form is empty.
struct Kernels {
  KernelFn kernel;
  SpanKernelFn span;
  Kernels(KernelFn k, SpanKernelFn s = {}) : kernel(std::move(k)), span(std::move(s)) {}
  template <class F>
    requires std::is_invocable_v<F&, const KernelArgs&>
  Kernels(F f) : kernel(std::move(f)) {}
  void operator()(const KernelArgs& a) const { kernel(a); }  // kernels that pick one per call
  void install(OpDef& d) && {
    d.kernel = std::move(kernel);
    d.span_kernel = std::move(span);
  }
};

// Float windows of a same-dtype op.
template <std::size_t Arity, class F>
SpanKernelFn float_windows(F f) {
  return [f](const SpanArgs& s) mutable {
    if (s.in_dtype != s.out_dtype) return false;
    switch (s.out_dtype) {
      case DType::f32: map_window<float, Arity>(s, f); return true;
      case DType::f64: map_window<double, Arity>(s, f); return true;
      default: return false;
    }
  };
}

// A kernel for ops whose result dtype equals the operand dtype, instantiated for the
// float dtypes (and i64 when `with_int`).
template <std::size_t Arity, bool with_int = false, class F>
Kernels same_dtype(F f) {
  return {[f](const KernelArgs& a) {
    switch (a.out.dtype()) {
      case DType::f32: return map<float, float, Arity>(a, f);
      case DType::f64: return map<double, double, Arity>(a, f);
      case DType::i64:
        if constexpr (with_int) return map<std::int64_t, std::int64_t, Arity>(a, f);
        [[fallthrough]];
      default: MG_ASSERT(false, "kernel: unsupported dtype for " + a.node.op_name());
    }
  }, float_windows<Arity>(f)};
}

// i64 arithmetic wraps modulo 2^64 (two's complement), in the interpreter as in the C99
// emitter's (uint64_t) casts: signed overflow is undefined behaviour in C++ and C, so no
// i64 kernel computes it. Wrapping helpers for those kernels:
inline std::int64_t wrap(std::uint64_t v) { return static_cast<std::int64_t>(v); }  // modular since C++20
inline std::uint64_t bits(std::int64_t v) { return static_cast<std::uint64_t>(v); }

// Floats through the xtensor expression `f`; i64 element by element through `g`, which
// must compute with wrap()/bits() (see above).
template <std::size_t Arity, class F, class G>
Kernels same_dtype_wrapping(F f, G g) {
  return {[f, g](const KernelArgs& a) {
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
  }, float_windows<Arity>(f)};
}

}  // namespace mg::ir::kernels
