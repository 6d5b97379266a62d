// The C99 text of our GEMM (ir/ops/gemm_c99.cpp), emitted by matmul's C99 template for
// the JIT and the standalone export. Register tiles follow the compiling machine's vector
// width (AVX-512, AVX2+FMA, a portable path), chosen by the preprocessor where the C is
// compiled, never by tuning to one CPU. Light: <string> only.
#pragma once
#include <cstdint>
#include <string>

#include "minigrad/ir/dtype.hpp"

namespace mg::ir::gemm_c99 {

// The parts a module needs (one support entry each, so no module holds an unused static
// function under -Wall -Werror): the target's tile sizes (once per module), the per-dtype
// macros, the packed GEMM and the few-rows GEMM.
std::string arch_text();
std::string intrinsics_text();  // <immintrin.h> and helpers: only the kernel texts need them
std::string defs_text(DType t);
std::string packed_text(DType t);
std::string small_text(DType t);
// `text` with its dtype placeholders ($S name, $T C type, $F/$U literal suffixes, $P
// s/d) filled in for f32 or f64: for other loop nests written the same way (ops/gemv.hpp).
std::string substitute(std::string text, DType t);

// The kernels a JIT module calls from the library instead of compiling their text
// (c_kernels.hpp), which native_kernels_gen compiles into it once per ISA: the C function a
// text defines and its parameters ($T: the element type, $S: its name).
struct KernelEntry {
  const char* entry;   // native::Kernels<T>::<entry>, mg_native_<entry>_<S>_<isa>
  const char* c_name;  // as the text defines it
  const char* params;
  // A JIT module calls the library's copy. Not the conv tiles: compiled into the module,
  // GCC specialises them to each call's constant shapes (k of 9-144), and example 05's C99
  // step ran ~6% faster that way (c99_bench --only d, alternating; the others: no change).
  bool jit_binds;
};
inline constexpr KernelEntry kKernelEntries[] = {
    {"gemm", "mg_gemm_$S",
     "int64_t m, int64_t n, int64_t k, const $T* a, int64_t ars, int64_t acs, const $T* b, int64_t brs, "
     "int64_t bcs, $T* c, $T* bpack, int64_t nb",
     true},
    {"conv_tiles", "mg_conv_gemm_$S",
     "int64_t m, int64_t n, int64_t k, const $T* a, int64_t ars, int64_t acs, const $T* b, int64_t brs, $T* c",
     false},
    {"conv_dots", "mg_conv_dots_$S",
     "int64_t m, int64_t n, int64_t k, const $T* a, int64_t ars, const $T* b, int64_t bcs, $T* c", true},
};

// The packed GEMM's B scratch, sized here at emission time for every target: KC deep at
// most, every target's NR divides kNPad, plus kAlign bytes to align it to a cache line.
constexpr std::int64_t kKC = 256, kNPad = 32, kAlign = 64;
// Bytes of that scratch with `slices` slices (mg_gemm's `nb`: one per row group of threads,
// each packing the B panels it reads) for a k-deep, n-wide B of `elem_size`-byte elements.
constexpr std::int64_t bpack_bytes(std::int64_t n, std::int64_t k, std::int64_t elem_size, std::int64_t slices = 1) {
  return slices * (k < kKC ? k : kKC) * ((n + kNPad - 1) / kNPad * kNPad) * elem_size + kAlign;
}
// Fewer rows than this: mg_gemm_small (no packing, no scratch).
constexpr std::int64_t kSmallM = 8;
// m * n * k from which mg_gemm runs on OpenMP's threads (MG_GEMM_THREAD_MIN in the C).
constexpr std::int64_t kThreadMin = 262144;
// B slices a C99 module plans for a GEMM that threads itself (row groups of threads; more
// threads split columns within them). A smaller GEMM never threads: one slice.
constexpr std::int64_t kModuleSlices = 4;

}  // namespace mg::ir::gemm_c99
