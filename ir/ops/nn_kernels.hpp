// Interpreter kernels of the nn family (conv and pooling, NCHW, f32/f64), shared by the
// registry file nn.cpp and the kernel files nn_conv_kernels.cpp / nn_pool_kernels.cpp.
// Geometry is PyTorch's: out = floor((in + 2 pad - dil (k - 1) - 1) / stride) + 1.
// Invariant: every kernel writes each output element exactly once (gradients zero their
// output first) and is correct for empty batch / channel dims.
#pragma once
#include <cstdint>

#include "minigrad/ir/checked.hpp"
#include "minigrad/ir/op_registry.hpp"

namespace mg::ir::nn {

// floor((in + 2 pad - dil (k - 1) - 1) / stride) + 1; may be <= 0 (the infer rules reject it).
inline std::int64_t conv_out_size(std::int64_t in, std::int64_t k, std::int64_t stride,
                                  std::int64_t pad, std::int64_t dil) {
  const std::int64_t span =
      checked_sub(checked_sub(checked_add(in, checked_mul(2, pad)), checked_mul(dil, checked_sub(k, 1))), 1);
  if (span < 0) return 0;
  return span / stride + 1;
}

// The sizes of one conv: x[N,C,H,W], w[O,C/G,kh,kw], y[N,O,Ho,Wo].
struct ConvGeom {
  std::int64_t N, C, H, W, O, kh, kw, Ho, Wo;
  std::int64_t sh, sw, ph, pw, dh, dw, G;
};
// From the shapes of x, w, y (whichever of them are inputs or the output) and the attrs.
ConvGeom conv_geom(const Shape& x, const Shape& w, const Shape& y, const Attrs& attrs);

void conv2d_kernel(const KernelArgs& k);              // (x, w) -> y
void conv2d_input_grad_kernel(const KernelArgs& k);   // (g, w) -> dx
void conv2d_weight_grad_kernel(const KernelArgs& k);  // (x, g) -> dw

// Pooling windows: x[N,C,H,W] -> [N,C,Ho,Wo], no dilation.
struct PoolGeom {
  std::int64_t planes, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw;
};
PoolGeom pool_geom(const Shape& x, const Shape& y, const Attrs& attrs);

void max_pool2d_kernel(const KernelArgs& k);         // (x) -> y
void max_pool2d_grad_kernel(const KernelArgs& k);    // (x, g) -> dx
void max_pool2d_select_kernel(const KernelArgs& k);  // (x, d) -> d at each window's argmax
void avg_pool2d_kernel(const KernelArgs& k);         // (x) -> y
void avg_pool2d_grad_kernel(const KernelArgs& k);    // (g) -> dx

}  // namespace mg::ir::nn
