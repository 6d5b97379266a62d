// Parameters and buffers of nn modules. A Parameter describes a trainable tensor (shape,
// dtype, initialiser); once a model is bound to a graph (nn::bind) it also holds the
// graph input standing for it and its current value. Buffers (BatchNorm running
// statistics) are the same, not trained, and may carry an update computed in training.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "minigrad/dsl/tensor.hpp"
#include "minigrad/ir/array.hpp"

namespace mg::nn {

// Initialisers draw from a counter-based stream keyed by (seed, parameter name), so a
// parameter's initial value does not depend on the order models are built in.
using Init = std::function<Array(const Type& type, std::uint64_t seed)>;
Init uniform_init(double low, double high);
Init constant_init(double value);
// PyTorch's default for Linear/Conv weights: kaiming_uniform_(a=sqrt(5)), i.e.
// U(-1/sqrt(fan_in), 1/sqrt(fan_in)) — the same bound its bias uses.
Init fan_in_uniform_init(std::int64_t fan_in);
Init normal_init(double mean, double std);
std::uint64_t hash_name(std::uint64_t seed, const std::string& name);

// A parameter's name and current value live in storage shared by the model and everything
// that uses them (training steps, executables compiled with nn::compile_with_parameters):
// those keep it alive and see it change, so a model may be moved, returned from a factory
// or destroyed after compiling, and an eval executable always runs the trained weights
// (DESIGN invariant 10). Copying a Parameter copies its value into storage of its own.
struct ParameterStorage {
  std::string name;  // dotted path, e.g. "features.0.weight"; set by nn::bind
  Array value;       // current value (initial, trained, or loaded); invalid until bound
};

struct Parameter {
  Parameter() = default;
  Parameter(Shape s, DType dt, Init in, bool train = true)
      : shape(std::move(s)), dtype(dt), init(std::move(in)), trainable(train) {}
  Parameter(const Parameter& o);
  Parameter& operator=(const Parameter& o);
  Parameter(Parameter&&) noexcept = default;
  Parameter& operator=(Parameter&&) noexcept = default;

  Shape shape;
  DType dtype = default_float;
  Init init;
  bool trainable = true;  // false: a buffer (e.g. running mean)

  // Set by nn::bind:
  Tensor tensor;  // the graph input standing for it in the graph bound last
  // Buffers only: the value to store after a training step (optional). Mutable because
  // building a module's forward pass (a const call) is what defines it.
  mutable Tensor update;

  const std::string& name() const { return storage->name; }
  const Array& value() const { return storage->value; }
  bool has_value() const { return storage->value.valid(); }
  // Replaces the value (like `param.data.copy_(v)`): dtype and shape must match exactly.
  void assign(Array v) const;
  Tensor operator()() const { return tensor; }

  std::shared_ptr<ParameterStorage> storage = std::make_shared<ParameterStorage>();
};

}  // namespace mg::nn
