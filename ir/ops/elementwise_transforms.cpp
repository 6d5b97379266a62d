// jvp and batch columns of the elementwise family (ir/ops/unary.cpp, binary.cpp, cast).
// Batching: every operand gets the batch axis in front (unbatched ones are broadcast) and
// the op runs unchanged. Forward mode: the Jacobian is diagonal, so the op's own VJP rule
// gives J v (transforms.hpp, jvp_diagonal); cast converts the tangent.
#include "minigrad/ir/ops/transforms.hpp"

namespace mg::ir::xf {

void register_elementwise_transforms() {
  // Float-differentiable ops: the diagonal default. stop_gradient's VJP is empty, so its
  // tangent is zero (as jax.lax.stop_gradient under jvp).
  for (const char* name : {"neg", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu",
                           "leaky_relu", "gelu", "gelu_grad", "silu", "softplus", "abs", "sign", "square", "reciprocal", "erf",
                           "log1p", "expm1", "clamp", "stop_gradient", "add", "sub", "mul", "div", "pow", "maximum",
                           "minimum", "where"}) {
    OpDef& d = defined_op(name);
    d.jvp = jvp_diagonal();
    d.batch = batch_elementwise();
  }
  // Boolean outputs: no tangent (their vjp column states why).
  for (const char* name : {"eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_not"})
    defined_op(name).batch = batch_elementwise();

  OpDef& cast_op = defined_op("cast");
  cast_op.batch = batch_elementwise();
  cast_op.jvp = [](const JvpArgs& a) {  // float -> float only: a float -> i64 result is piecewise constant
    if (!a.tangents[0].valid() || !is_float(a.out.dtype())) return Value{};
    return cast(a.tangents[0], a.out.dtype());
  };
}

}  // namespace mg::ir::xf
