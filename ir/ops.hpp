// Typed builder functions for every op: the vocabulary VJP rules are written in (so
// gradients are ordinary IR and differentiate again), and what the DSL lowers to.
// IR ops take operands of equal shape; broadcasting is an explicit broadcast_to, which
// the DSL inserts. Axes here are already normalised (non-negative).
#pragma once
#include <string_view>
#include <vector>

#include "minigrad/ir/builder.hpp"

namespace mg::ir {

Value unary(std::string_view op, Value x, Attrs attrs = {});
Value binary(std::string_view op, Value a, Value b);

inline Value neg(Value x) { return unary("neg", x); }
inline Value exp(Value x) { return unary("exp", x); }
inline Value log(Value x) { return unary("log", x); }
inline Value sqrt(Value x) { return unary("sqrt", x); }
inline Value square(Value x) { return unary("square", x); }
inline Value reciprocal(Value x) { return unary("reciprocal", x); }
inline Value sin(Value x) { return unary("sin", x); }
inline Value cos(Value x) { return unary("cos", x); }
inline Value tanh(Value x) { return unary("tanh", x); }
inline Value sigmoid(Value x) { return unary("sigmoid", x); }
inline Value sign(Value x) { return unary("sign", x); }
inline Value erf(Value x) { return unary("erf", x); }
inline Value logical_not(Value x) { return unary("logical_not", x); }
Value cast(Value x, DType to);  // no node when already `to`

inline Value add(Value a, Value b) { return binary("add", a, b); }
inline Value sub(Value a, Value b) { return binary("sub", a, b); }
inline Value mul(Value a, Value b) { return binary("mul", a, b); }
inline Value div(Value a, Value b) { return binary("div", a, b); }
inline Value pow(Value a, Value b) { return binary("pow", a, b); }
Value where(Value cond, Value a, Value b);

// Constants shaped like `like` (one `full` node, folded later).
Value full(Graph& g, Type type, double value);
Value full_like(Value like, double value);
inline Value zeros_like(Value like) { return full_like(like, 0.0); }
// x * c, x + c for a scalar c, without the caller building the constant.
Value scale(Value x, double c);
Value add_scalar(Value x, double c);

Value broadcast_to(Value x, Shape shape);
Value reshape(Value x, Shape shape);
Value permute(Value x, I64List perm);
Value transpose_last2(Value x);  // swaps the two last axes (rank >= 2)
Value reduce(std::string_view op, Value x, I64List axes, bool keepdim);
inline Value reduce_sum(Value x, I64List axes, bool keepdim) {
  return reduce("reduce_sum", x, std::move(axes), keepdim);
}
// Sums `x` down to `shape` (the inverse of numpy broadcasting): the VJP of broadcast_to.
Value sum_to(Value x, const Shape& shape);
// The keepdim shape of reducing `shape` over `axes`.
Shape keepdim_shape(const Shape& shape, const I64List& axes);
// g reduced over axes (keepdim=false) -> reshaped to keepdim and broadcast back to `shape`.
Value expand_reduced(Value g, const Shape& shape, const I64List& axes);
Value matmul(Value a, Value b);  // a[...,m,k] @ b[...,k,n], equal batch dims

// ---- index ops (ir/ops/index.cpp); index is i64, axis normalised ----
Value gather(Value x, Value index, std::int64_t axis);                  // torch.gather
Value scatter_add(Value base, Value index, Value src, std::int64_t axis);  // torch.scatter_add
Value index_select(Value x, Value index, std::int64_t axis);            // index 1-D
Value index_add(Value base, Value index, Value src, std::int64_t axis);   // index 1-D
Value cumsum(Value x, std::int64_t axis);                                 // inclusive
// ---- end index ops ----

// ---- shape ops (ir/ops/shape.cpp) ----
// x[start:stop:step] per axis (full-length lists); no node when it takes everything.
Value slice(Value x, I64List starts, I64List stops, I64List steps);
// XLA-style pad (low/high/interior per axis, >= 0) with `value`; no node when all are 0.
Value pad(Value x, I64List low, I64List high, I64List interior, double value = 0.0);
// Joins along `axis`; a single input is returned as is.
Value concat(std::vector<Value> xs, std::int64_t axis);
Value flip(Value x, I64List axes);       // no node for empty axes
Value squeeze(Value x, I64List axes);    // axes of size 1; no node for empty axes
Value unsqueeze(Value x, I64List axes);  // axes index the output; no node for empty axes
// ---- end shape ops ----

}  // namespace mg::ir
