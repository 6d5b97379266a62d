// hessian via grad of grad; see hessian.hpp.
#include "minigrad/passes/hessian.hpp"

#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/grad.hpp"

namespace mg::passes {

ir::Value hessian(ir::Value y, ir::Value x) {
  std::vector<ir::Value> wrt{x};
  ir::Value g = grad(y, wrt)[0];
  const std::int64_t n = x.type().numel();
  ir::Value flat = ir::reshape(g, {n});
  ir::Graph& graph = *x.graph;
  std::vector<ir::Value> rows;
  for (std::int64_t i = 0; i < n; ++i) {
    // Row i = d(g_i)/dx, with g_i selected by a one-hot dot product.
    Array onehot = Array::zeros(Type{x.dtype(), {n}});
    onehot.set(i, 1.0);
    ir::Value gi = ir::reduce_sum(ir::mul(flat, graph.add_constant(std::move(onehot))), {0}, false);
    ir::Value row = grad(gi, wrt)[0];
    rows.push_back(ir::reshape(row, {1, n}));
  }
  ir::Value h = ir::concat(rows, 0);
  Shape shape = x.shape();
  shape.insert(shape.end(), x.shape().begin(), x.shape().end());
  return ir::reshape(h, shape);
}

}  // namespace mg::passes
