// C text of the convolutions' helper functions, one per idea (nn_conv_c99_text.cpp says
// what each computes); `$T` / `$S` placeholders for gemm_c99::substitute.
#pragma once

namespace mg::ir::nn::conv_c99 {

extern const char* const kIm2col;  // one im2col row of one sample
extern const char* const kCol2im;  // the adjoint, one channel
extern const char* const kTiles;   // C = A @ B, B's rows read in place, register tiles
extern const char* const kDotsRows;  // MG_DOTS_RB: kDots' rows per block, which its callers read too
extern const char* const kDots;    // C = A @ B^T, blocks of vector dot products (after kDotsRows)

}  // namespace mg::ir::nn::conv_c99
