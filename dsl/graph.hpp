// mg::Graph: the user's graph under construction. Owns an ir::Graph (shared, so
// executables and tensors can keep it alive) and makes its inputs and constants.
#pragma once
#include <memory>
#include <string>

#include "minigrad/dsl/tensor.hpp"
#include "minigrad/ir/array.hpp"

namespace mg {

// Every creation function without an explicit dtype makes `default_float` (f32) values, so
// `x * g.scalar(2.0)` and `x + g.ones({3})` type-check with an `g.input("x", {3})`.
class Graph {
 public:
  Graph();
  // Another handle to an existing graph (what graph_of returns); `ir` must not be null.
  explicit Graph(std::shared_ptr<ir::Graph> ir);

  // A named input of the given dtype (default_float without one) and static shape ({} for
  // a scalar).
  Tensor input(std::string name, DType dtype, Shape shape, Loc loc = Loc::current());
  Tensor input(std::string name, Shape shape, Loc loc = Loc::current());
  Tensor constant(Array value, Loc loc = Loc::current());
  Tensor scalar(double value, DType dtype = default_float, Loc loc = Loc::current());
  Tensor full(Shape shape, double value, DType dtype = default_float, Loc loc = Loc::current());
  Tensor zeros(Shape shape, DType dtype = default_float, Loc loc = Loc::current());
  Tensor ones(Shape shape, DType dtype = default_float, Loc loc = Loc::current());
  // [start, stop) with step, like numpy.arange.
  Tensor arange(double start, double stop, double step = 1, DType dtype = i64, Loc loc = Loc::current());
  Tensor eye(std::int64_t n, std::int64_t m = -1, DType dtype = default_float, Loc loc = Loc::current());
  // Reproducible random tensors: the same seed gives the same values everywhere.
  Tensor randn(Shape shape, std::uint64_t seed, DType dtype = default_float, double mean = 0, double std = 1,
               Loc loc = Loc::current());
  Tensor rand(Shape shape, std::uint64_t seed, DType dtype = default_float, double low = 0, double high = 1,
              Loc loc = Loc::current());

  ir::Graph& ir() { return *ir_; }
  const ir::Graph& ir() const { return *ir_; }
  std::shared_ptr<ir::Graph> shared() const { return ir_; }

 private:
  std::shared_ptr<ir::Graph> ir_;
};

// The graph `x` belongs to, as an mg::Graph sharing it (not a copy): a module's
// `operator()(const Tensor& x)` makes constants, ranges and masks with
// `graph_of(x).arange(...)`, `.ones(...)` without being handed a Graph&. A UserError if `x`
// is an empty handle or its graph is not owned by an mg::Graph.
Graph graph_of(const Tensor& x, Loc loc = Loc::current());

}  // namespace mg
