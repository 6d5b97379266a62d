// The GEMM and convolution kernels a C99 module calls (gemm_c99.cpp, nn_conv_c99_text.cpp):
// their text, compiled with the module, or, in a JIT module (CLoopArgs::host_kernels),
// function pointers that the JIT binds after dlopen to the library's compiled copies of the
// same text (native_kernels.hpp). cc then compiles a module with a GEMM in a fraction of the
// time (the kernel text and <immintrin.h> were 1.5-4 s of -O3 per module) and the module
// runs the code the interpreter runs. The standalone export always carries the text.
#pragma once
#include <string>
#include <string_view>

#include "minigrad/ir/dtype.hpp"
#include "minigrad/ir/emit_c.hpp"

namespace mg::ir::c_kernels {

enum class Kernel {
  gemm,        // mg_gemm_<S>: packed, threads itself (gemm_c99::kKernelEntries[0])
  conv_tiles,  // mg_conv_gemm_<S>: B's rows read in place by register tiles
  conv_dots,   // mg_conv_dots_<S>: C = A @ B^T as blocks of dot products
};

// The target's tile macros (MG_GEMM_MR_<S>, ...) for dtype t, for loops sized by them.
void use_macros(const CLoopArgs& a, DType t);
// Everything a call of kernel k on dtype t needs (macros, then its text or its pointer);
// returns the C name to call. conv_dots also defines MG_DOTS_RB, its rows per block.
std::string use(const CLoopArgs& a, Kernel k, DType t);
// A GEMM call's function: the packed one (Kernel::gemm), or with `few_rows`
// (gemm_c99::kSmallM) the unpacked one, whose text every module carries.
std::string use_gemm(const CLoopArgs& a, DType t, bool few_rows);
// Whether support entry `name` is a kernel pointer that a host_kernels module binds.
bool is_bound(std::string_view name);

}  // namespace mg::ir::c_kernels
