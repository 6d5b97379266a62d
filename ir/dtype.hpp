// Element types of IR values. Kept tiny: included by every layer.
// Invariant: the set is closed (f32, f64, i64, bool); passes switch on it only through
// the helpers here, never on raw integers.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace mg {

enum class DType : std::uint8_t { f32, f64, i64, boolean };

inline constexpr DType f32 = DType::f32;
inline constexpr DType f64 = DType::f64;
inline constexpr DType i64 = DType::i64;
inline constexpr DType boolean = DType::boolean;

constexpr std::size_t size_of(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f64: return 8;
    case DType::i64: return 8;
    case DType::boolean: return 1;
  }
  return 0;
}
constexpr bool is_float(DType t) { return t == DType::f32 || t == DType::f64; }
constexpr std::string_view name_of(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f64: return "f64";
    case DType::i64: return "i64";
    case DType::boolean: return "bool";
  }
  return "?";
}
std::optional<DType> dtype_from_name(std::string_view name);

// C++ scalar type for a dtype; bool is stored as one byte.
template <DType T> struct ScalarOf;
template <> struct ScalarOf<DType::f32> { using type = float; };
template <> struct ScalarOf<DType::f64> { using type = double; };
template <> struct ScalarOf<DType::i64> { using type = std::int64_t; };
template <> struct ScalarOf<DType::boolean> { using type = std::uint8_t; };
template <DType T> using scalar_t = typename ScalarOf<T>::type;

template <class T> constexpr DType dtype_of();
template <> constexpr DType dtype_of<float>() { return DType::f32; }
template <> constexpr DType dtype_of<double>() { return DType::f64; }
template <> constexpr DType dtype_of<std::int64_t>() { return DType::i64; }
template <> constexpr DType dtype_of<bool>() { return DType::boolean; }
template <> constexpr DType dtype_of<std::uint8_t>() { return DType::boolean; }

// Calls f(tag) with tag's ::type the C++ scalar for `t`.
template <class F> decltype(auto) visit_dtype(DType t, F&& f) {
  switch (t) {
    case DType::f32: return f(ScalarOf<DType::f32>{});
    case DType::f64: return f(ScalarOf<DType::f64>{});
    case DType::i64: return f(ScalarOf<DType::i64>{});
    case DType::boolean: return f(ScalarOf<DType::boolean>{});
  }
  return f(ScalarOf<DType::f64>{});
}

}  // namespace mg
