// mg::Graph: the user's graph under construction. Owns an ir::Graph (shared, so
// executables and tensors can keep it alive) and makes its inputs and constants.
#pragma once
#include <memory>
#include <string>

#include "minigrad/dsl/tensor.hpp"
#include "minigrad/ir/array.hpp"

namespace mg {

class Graph {
 public:
  Graph() : ir_(std::make_shared<ir::Graph>()) {}

  // A named input of the given dtype and static shape ({} for a scalar).
  Tensor input(std::string name, DType dtype, Shape shape, Loc loc = Loc::current());
  Tensor constant(Array value, Loc loc = Loc::current());
  Tensor scalar(double value, DType dtype = f64, Loc loc = Loc::current());
  Tensor full(Shape shape, double value, DType dtype = f32, Loc loc = Loc::current());
  Tensor zeros(Shape shape, DType dtype = f32, Loc loc = Loc::current());
  Tensor ones(Shape shape, DType dtype = f32, Loc loc = Loc::current());
  // [start, stop) with step, like numpy.arange.
  Tensor arange(double start, double stop, double step = 1, DType dtype = i64, Loc loc = Loc::current());
  Tensor eye(std::int64_t n, std::int64_t m = -1, DType dtype = f32, Loc loc = Loc::current());
  // Reproducible random tensors: the same seed gives the same values everywhere.
  Tensor randn(Shape shape, std::uint64_t seed, DType dtype = f32, double mean = 0, double std = 1,
               Loc loc = Loc::current());
  Tensor rand(Shape shape, std::uint64_t seed, DType dtype = f32, double low = 0, double high = 1,
              Loc loc = Loc::current());

  ir::Graph& ir() { return *ir_; }
  const ir::Graph& ir() const { return *ir_; }
  std::shared_ptr<ir::Graph> shared() const { return ir_; }

 private:
  std::shared_ptr<ir::Graph> ir_;
};

}  // namespace mg
