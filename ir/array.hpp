// Array: a dense, row-major, host-side tensor with a runtime dtype. It is the currency
// between the user, constants in the IR and the interpreter's buffers. Copies share
// storage (like a handle); clone() makes a deep copy. Deliberately free of xtensor so
// that every layer can include it cheaply; see runtime/xtensor_interop.hpp for views.
#pragma once
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "minigrad/ir/type.hpp"

namespace mg {

class Array {
 public:
  Array() = default;
  // Uninitialised storage for `type`, 64-byte aligned.
  explicit Array(Type type);
  Array(DType dtype, Shape shape) : Array(Type{dtype, std::move(shape)}) {}

  static Array zeros(Type type);
  static Array full(Type type, double value);
  static Array scalar(DType dtype, double value) { return full(Type{dtype, {}}, value); }
  template <class T>
  static Array from(Shape shape, std::initializer_list<T> values) {
    return from_vector(std::move(shape), std::vector<T>(values));
  }
  // Values already in a vector: Array::from({6, 4}, xs) (dtype from T).
  template <class T>
  static Array from(Shape shape, const std::vector<T>& values) {
    return from_vector(std::move(shape), values);
  }
  template <class T>
  static Array from_vector(Shape shape, const std::vector<T>& values);

  const Type& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  int rank() const { return type_.rank(); }
  std::int64_t numel() const { return type_.numel(); }
  std::size_t nbytes() const { return type_.nbytes(); }
  bool valid() const { return static_cast<bool>(storage_) || type_.nbytes() == 0; }
  // No other handle (copy, reshape, view) shares the storage: it may be recycled.
  bool sole_owner() const { return storage_ && storage_.use_count() == 1; }

  void* raw() { return storage_.get(); }
  const void* raw() const { return storage_.get(); }
  template <class T> T* data() { return static_cast<T*>(raw()); }
  template <class T> const T* data() const { return static_cast<const T*>(raw()); }
  template <class T> std::span<T> span() { return {data<T>(), static_cast<std::size_t>(numel())}; }
  template <class T> std::span<const T> span() const {
    return {data<T>(), static_cast<std::size_t>(numel())};
  }

  // Element i (row-major flat index) converted to double; for tests and printing. Unchecked.
  double at(std::int64_t flat) const;
  // The element at an N-d index (`a.at({i, j})`; `a.at({})` for a 0-d array), converted to
  // double. One index per axis; negative indices count from the end. A wrong count or an
  // index out of range is a UserError naming the index and the shape.
  double at(std::initializer_list<std::int64_t> index) const;
  double at(std::span<const std::int64_t> index) const;
  // The value of a one-element array (any shape with numel() == 1) as double, like
  // torch's .item(); a UserError otherwise.
  double item() const;
  void set(std::int64_t flat, double value);
  std::vector<double> to_doubles() const;

  Array clone() const;
  Array reshaped(Shape shape) const;  // shares storage; numel must match
  // A zero-copy window: `type`'s bytes starting at element `offset` of this array, sharing
  // storage (fused kernels run registry kernels on tiles through it); must fit.
  Array view(std::int64_t offset, Type type) const;
  Array cast(DType to) const;         // deep copy with C++ conversion semantics

  // Reinterpret this array as having `type` (same nbytes); used by the buffer pool.
  void retype(Type type);

 private:
  Type type_;
  std::shared_ptr<std::byte[]> storage_;
};

std::string to_string(const Array& a, int max_elems = 64);

// NumPy/PyTorch-style printing (ir/array_print.cpp), e.g.
//   array([[1., 2.],
//          [3., 4.]], dtype=f32, shape=[2, 2])
// Nested brackets per axis, columns right-aligned. Floats as torch prints them: integral
// values as `2.`, otherwise 4 decimals (`0.5000`), or scientific (`1.0000e-05`) when the
// magnitudes span more than 1e3 or leave [1e-4, 1e8); nan, inf, -inf as such. i64 as
// integers, bool as true/false. Over 1000 elements, each axis longer than 6 shows its first
// and last 3 entries around `...`. Rows wrap at 80 columns. A 0-d array prints its value
// (`array(3.5000, dtype=f64, shape=[])`), an empty one `array([], dtype=f32, shape=[0, 3])`.
std::ostream& operator<<(std::ostream& os, const Array& a);
// A list of arrays (the results of Executable::run): `[array(...),\n array(...)]`.
std::ostream& operator<<(std::ostream& os, const std::vector<Array>& arrays);

template <class T>
Array Array::from_vector(Shape shape, const std::vector<T>& values) {
  constexpr DType dt = dtype_of<T>();
  Array a(Type{dt, std::move(shape)});
  if (static_cast<std::int64_t>(values.size()) != a.numel())
    throw std::invalid_argument("Array::from: " + std::to_string(values.size()) +
                                " values for shape " + to_string(a.shape()));
  if constexpr (std::is_same_v<T, bool>) {
    for (std::size_t i = 0; i < values.size(); ++i) a.data<std::uint8_t>()[i] = values[i];
  } else {
    std::memcpy(a.raw(), values.data(), a.nbytes());
  }
  return a;
}

}  // namespace mg
