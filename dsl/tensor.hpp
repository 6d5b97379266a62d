// Tensor: the user's handle to one value of a graph under construction. Cheap to copy
// (a graph pointer and a node id); holds no data, computes nothing. Methods and free
// functions append IR nodes stamped with the caller's source line, so a shape or dtype
// mismatch is a mg::ShapeError naming the op, both types and the user's file:line.
// Elementwise operators build expression templates (dsl/expr.hpp) that lower into IR
// when they are bound to a Tensor or used by a non-elementwise operation.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <source_location>
#include <vector>

#include "minigrad/ir/graph.hpp"

namespace mg {

using Loc = std::source_location;

// The one default float dtype of the DSL: what Graph::input(name, shape), scalar, full,
// zeros, ones, eye, randn, rand, one_hot and the nn layers make when no dtype is given.
// f32, as in PyTorch; pass f64 explicitly where it matters (gradient checks).
inline constexpr DType default_float = f32;

// A set of axes: one axis, a list, or "all" (the default). Negative axes count from the end.
struct Axes {
  bool all = true;
  std::vector<std::int64_t> list;
  Axes() = default;
  Axes(int axis) : all(false), list{axis} {}  // NOLINT: implicit by design
  Axes(std::initializer_list<std::int64_t> l) : all(false), list(l) {}
  Axes(std::vector<std::int64_t> l) : all(false), list(std::move(l)) {}
};

class Tensor;

// Methods shared by Tensor and every unlowered expression (CRTP): each lowers `self`
// first. Defined in dsl/tensor_methods.hpp.
template <class Derived>
struct TensorMethods {
  Tensor sum(Axes axes = {}, bool keepdim = false, Loc loc = Loc::current()) const;
  Tensor mean(Axes axes = {}, bool keepdim = false, Loc loc = Loc::current()) const;
  Tensor max(Axes axes = {}, bool keepdim = false, Loc loc = Loc::current()) const;
  Tensor min(Axes axes = {}, bool keepdim = false, Loc loc = Loc::current()) const;
  Tensor prod(Axes axes = {}, bool keepdim = false, Loc loc = Loc::current()) const;
  Tensor var(Axes axes = {}, std::int64_t correction = 1, bool keepdim = false, Loc loc = Loc::current()) const;
  Tensor logsumexp(Axes axes = {}, bool keepdim = false, Loc loc = Loc::current()) const;
  Tensor argmax(std::int64_t axis, bool keepdim = false, Loc loc = Loc::current()) const;
  Tensor argmin(std::int64_t axis, bool keepdim = false, Loc loc = Loc::current()) const;
  Tensor reshape(std::vector<std::int64_t> shape, Loc loc = Loc::current()) const;
  Tensor permute(std::vector<std::int64_t> perm, Loc loc = Loc::current()) const;
  Tensor transpose(std::int64_t d0 = -2, std::int64_t d1 = -1, Loc loc = Loc::current()) const;
  Tensor T(Loc loc = Loc::current()) const;  // transpose of the last two axes
  Tensor expand(Shape shape, Loc loc = Loc::current()) const;
  Tensor squeeze(Axes axes = {}, Loc loc = Loc::current()) const;
  Tensor unsqueeze(std::int64_t axis, Loc loc = Loc::current()) const;
  Tensor flatten(Loc loc = Loc::current()) const;
  Tensor cast(DType to, Loc loc = Loc::current()) const;
  Tensor detach(Loc loc = Loc::current()) const;  // stop_gradient(*this)

 private:
  Tensor self(Loc loc) const;
};

class Tensor : public TensorMethods<Tensor> {
 public:
  Tensor() = default;
  explicit Tensor(ir::Value v) : value_(v) {}
  // Binding an expression lowers it into IR here, at the caller's line.
  template <class E>
    requires requires(const E& e, Loc l) { e.lower(l); }
  Tensor(const E& expr, Loc loc = Loc::current())  // NOLINT: implicit by design
      : value_(expr.lower(loc).value()) {}

  ir::Value value() const { return value_; }
  bool valid() const { return value_.valid(); }
  ir::Graph& graph() const { return *value_.graph; }
  const Type& type() const { return value_.type(); }
  const Shape& shape() const { return value_.shape(); }
  DType dtype() const { return value_.dtype(); }
  int rank() const { return value_.rank(); }
  std::int64_t numel() const { return value_.type().numel(); }
  std::int64_t size(std::int64_t axis) const;
  Tensor lower(Loc) const { return *this; }

 private:
  ir::Value value_;
};

}  // namespace mg
