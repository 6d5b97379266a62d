// jacrev, jacfwd, hessian from vjp/jvp and vmap; see jacobian.hpp.
#include "minigrad/passes/jacobian.hpp"

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/passes/jvp.hpp"
#include "minigrad/passes/vmap.hpp"

namespace mg::passes {

namespace {

// The n x n identity, its rows shaped like `shape` ([n, ...shape]).
ir::Value identity_rows(ir::Graph& g, DType dtype, const Shape& shape) {
  const std::int64_t n = Type{dtype, shape}.numel();
  ir::Value eye = ir::make_op(g, ir::op("eye"), {}, {{"n", n}, {"m", n}, {"dtype", dtype}});
  Shape s = shape;
  s.insert(s.begin(), n);
  return ir::reshape(eye, s);
}

// A per-example stand-in that vmap replaces: a fresh node (the builder never merges nodes).
ir::Value placeholder(ir::Graph& g, const Type& t) { return ir::full(g, t, 0.0); }

void check(ir::Value y, ir::Value x, const char* what) {
  if (!y.valid() || !x.valid() || y.graph != x.graph)
    throw GradError(std::string(what) + ": y and x must be values of one graph", ambient_loc());
  if (!is_float(y.dtype()) || !is_float(x.dtype()))
    throw GradError(std::string(what) + ": y and x must be float values, got " + to_string(y.type()) + " and " +
                        to_string(x.type()),
                    ambient_loc());
}

Shape joined(const Shape& a, const Shape& b) {
  Shape s = a;
  s.insert(s.end(), b.begin(), b.end());
  return s;
}

}  // namespace

ir::Value jacrev(ir::Value y, ir::Value x) {
  check(y, x, "jacrev");
  ir::Graph& g = *y.graph;
  ir::Value u = placeholder(g, y.type());
  ir::Value gx = vjp(std::span(&y, 1), std::span(&u, 1), std::span(&x, 1))[0];
  ir::Value rows = identity_rows(g, y.dtype(), y.shape());
  const BatchAxis zero = 0;
  ir::Value j = vmap(std::span(&gx, 1), std::span(&u, 1), std::span(&rows, 1), std::span(&zero, 1), std::span(&zero, 1))[0];
  return ir::reshape(j, joined(y.shape(), x.shape()));
}

ir::Value jacfwd(ir::Value y, ir::Value x) {
  check(y, x, "jacfwd");
  ir::Graph& g = *y.graph;
  ir::Value t = placeholder(g, x.type());
  ir::Value jy = jvp(std::span(&y, 1), std::span(&x, 1), std::span(&t, 1))[0];
  ir::Value cols = identity_rows(g, x.dtype(), x.shape());
  const BatchAxis in = 0, out = y.rank();
  ir::Value j = vmap(std::span(&jy, 1), std::span(&t, 1), std::span(&cols, 1), std::span(&in, 1), std::span(&out, 1))[0];
  return ir::reshape(j, joined(y.shape(), x.shape()));
}

ir::Value hessian(ir::Value y, ir::Value x) {
  check(y, x, "hessian");
  if (y.rank() != 0)
    throw GradError("hessian needs a scalar y, got " + to_string(y.type()) + "; use jacfwd(jacrev(y, x), x)",
                    ambient_loc());
  ir::Value gx = grad(y, std::span(&x, 1))[0];
  return jacfwd(gx, x);
}

}  // namespace mg::passes
