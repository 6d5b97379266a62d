// The convolutions' C99 emission through im2col and our packed GEMM (nn_conv_c99.cpp);
// nn.cpp keeps the direct loop nests for callers that plan no scratch.
#pragma once
#include <cstdint>
#include <span>

#include "minigrad/ir/emit_c.hpp"
#include "minigrad/ir/ops/nn_kernels.hpp"

namespace mg::ir::nn {

enum class ConvOp { forward, input_grad, weight_grad };  // conv2d, conv2d_input_grad, conv2d_weight_grad

// Scratch bytes the GEMM path wants (EmitC::scratch); 0 when it does not apply.
std::int64_t conv_c99_scratch(ConvOp op, const Node& node, std::span<const Type> in);
// Writes the GEMM path; false (nothing written) without scratch or for degenerate sizes.
bool emit_conv_c99(ConvOp op, const CLoopArgs& a);

}  // namespace mg::ir::nn
