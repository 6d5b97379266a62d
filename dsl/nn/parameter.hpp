// Parameters and buffers of nn modules. A Parameter describes a trainable tensor (shape,
// dtype, initialiser); once a model is bound to a graph (nn::bind) it also holds the
// graph input standing for it and its current value. Buffers (BatchNorm running
// statistics) are the same, not trained, and may carry an update computed in training.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "dsl/tensor.hpp"
#include "ir/array.hpp"

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

struct Parameter {
  Parameter() = default;
  Parameter(Shape s, DType dt, Init in, bool train = true)
      : shape(std::move(s)), dtype(dt), init(std::move(in)), trainable(train) {}

  Shape shape;
  DType dtype = f32;
  Init init;
  bool trainable = true;  // false: a buffer (e.g. running mean)

  // Set by nn::bind:
  std::string name;  // dotted path, e.g. "features.0.weight"
  Tensor tensor;     // the graph input standing for it
  Array value;       // current value (initial, trained, or loaded)
  // Buffers only: the value to store after a training step (optional). Mutable because
  // building a module's forward pass (a const call) is what defines it.
  mutable Tensor update;

  Tensor operator()() const { return tensor; }
};

}  // namespace mg::nn
