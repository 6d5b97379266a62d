// xtensor interop: pass xtensor arrays and views straight to Executable::run, and view
// results as xtensor arrays. Kept out of the core headers (xtensor is heavy to compile).
#pragma once
#include <algorithm>
#include <type_traits>

#include <xtensor/xadapt.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xexpression.hpp>

#include "minigrad/dsl/compile.hpp"

namespace mg {

template <class E>
struct ToArray<E, std::enable_if_t<xt::is_xexpression<E>::value>> {
  static Array convert(const E& e) {
    using T = typename E::value_type;
    using S = std::conditional_t<std::is_same_v<T, bool>, bool,
              std::conditional_t<std::is_floating_point_v<T>, T, std::int64_t>>;
    xt::xarray<S, xt::layout_type::row_major> dense = e;  // evaluates views, row-major
    Shape shape(dense.shape().begin(), dense.shape().end());
    Array out(Type{dtype_of<S>(), shape});
    if constexpr (std::is_same_v<S, bool>) {
      std::transform(dense.begin(), dense.end(), out.data<std::uint8_t>(), [](bool b) { return std::uint8_t(b); });
    } else {
      std::copy(dense.begin(), dense.end(), out.data<S>());
    }
    return out;
  }
};

// A copy of `a` as an xarray of T (converting the element type if needed).
template <class T>
xt::xarray<T> to_xarray(const Array& a) {
  std::vector<std::size_t> shape(a.shape().begin(), a.shape().end());
  xt::xarray<T> out(shape);
  std::int64_t i = 0;
  for (auto& v : out) v = static_cast<T>(a.at(i++));
  return out;
}

}  // namespace mg
