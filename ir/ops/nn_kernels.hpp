// Interpreter kernels of the nn family (conv and pooling, NCHW, f32/f64), shared by the
// registry files nn.cpp / nn_pool.cpp and the kernel files nn_conv_kernels.cpp / nn_pool_kernels.cpp.
// Geometry is PyTorch's: out = floor((in + 2 pad - dil (k - 1) - 1) / stride) + 1, and
// pooling's ceil_mode (pool_out_size).
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

// PyTorch's pooling_output_shape: as conv_out_size, rounding up with ceil_mode, where a
// last window that would start in the right padding is dropped (every window starts inside
// the input or its left padding). May be <= 0 (the infer rules reject it).
inline std::int64_t pool_out_size(std::int64_t in, std::int64_t k, std::int64_t stride, std::int64_t pad,
                                  std::int64_t dil, bool ceil_mode) {
  std::int64_t span =
      checked_sub(checked_sub(checked_add(in, checked_mul(2, pad)), checked_mul(dil, checked_sub(k, 1))), 1);
  if (ceil_mode) span = checked_add(span, stride - 1);
  // PyTorch's div_rtn: floor division, also for a negative span.
  std::int64_t out = (span >= 0 ? span / stride : -(checked_add(checked_sub(0, span), stride - 1) / stride)) + 1;
  if (ceil_mode && out >= 1 && checked_mul(out - 1, stride) >= checked_add(in, pad)) --out;
  return out;
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

// Pooling windows: x[N,C,H,W] -> [N,C,Ho,Wo]. Output (i, j) reads rows i sh - ph + t dh
// (t < kh) and columns likewise, those inside the input; ceil_mode only shows in Ho, Wo.
// dh = dw = 1 for avg_pool2d (it has no dilation attribute).
struct PoolGeom {
  std::int64_t planes, H, W, Ho, Wo, kh, kw, sh, sw, ph, pw, dh, dw;
};
PoolGeom pool_geom(const Shape& x, const Shape& y, const Attrs& attrs);
// 2x2 windows at stride 2, no padding or dilation (the usual CNN pooling), whole inside
// the plane (a last odd row / column is in no window): both executors pick along row pairs
// (nn_pool_kernels.cpp, nn_pool.cpp's C), the same picks, so the same bits.
inline bool is_2x2(const PoolGeom& g) {
  return g.kh == 2 && g.kw == 2 && g.sh == 2 && g.sw == 2 && g.ph == 0 && g.pw == 0 && g.dh == 1 && g.dw == 1 &&
         2 * g.Ho <= g.H && 2 * g.Wo <= g.W;
}

// A max window that holds no input element (padding and dilation can make one) has no
// argmax: max_pool2d gives -inf there, its gradient routes nothing, select gives 0.
void max_pool2d_kernel(const KernelArgs& k);         // (x) -> y
void max_pool2d_grad_kernel(const KernelArgs& k);    // (x, g) -> dx
void max_pool2d_select_kernel(const KernelArgs& k);  // (x, d) -> d at each window's argmax
void avg_pool2d_kernel(const KernelArgs& k);         // (x) -> y
void avg_pool2d_grad_kernel(const KernelArgs& k);    // (g) -> dx

}  // namespace mg::ir::nn
