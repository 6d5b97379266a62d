// Expression templates for elementwise math. `a * 2.0 + relu(b)` builds a tree of
// lightweight Expr objects (operands held by value, so `auto e = a + b;` is always
// safe); it lowers into IR nodes when bound to a Tensor or handed to a non-elementwise
// op, at that caller's line. Lowering inserts explicit broadcast_to nodes (NumPy rules)
// and turns scalars into constants of the tensor operand's dtype.
//
// An expression is one value (DESIGN invariant 10): it lowers once, the first time it is
// needed, and every copy of it (`h * h` holds two) shares that one node, so
// `auto h = tanh(x) * 2.0; grad((h * h).sum(), {h})` differentiates through the node the
// loss uses.
//
// Compile-time constants (`mg::c<2>`, Boost.Hana integral constants) simplify at the type
// level with bit-exact identities only: x*c<1>, c<1>*x, x/c<1>, x-c<0> are x; -(-x) is x;
// pow(x, c<1>) is x, pow(x, c<2>) is square(x), pow(x, c<-1>) is reciprocal(x);
// c<2>*c<3> is c<6> (Hana arithmetic). x+c<0> is NOT simplified: -0 + 0 is +0.
#pragma once
#include <algorithm>
#include <memory>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include <boost/hana/at.hpp>
#include <boost/hana/integral_constant.hpp>
#include <boost/hana/minus.hpp>
#include <boost/hana/mult.hpp>
#include <boost/hana/plus.hpp>
#include <boost/hana/tuple.hpp>
#include <boost/hana/unpack.hpp>

#include "minigrad/dsl/tensor.hpp"
#include "minigrad/ir/attrs.hpp"

namespace mg {

namespace hana = boost::hana;

// mg::c<N>: an integer known at compile time. Its own type (not hana::llong directly,
// whose generic operators would claim `tensor * c<2>`); arithmetic between constants is
// Hana's integral-constant arithmetic, so c<2> * c<3> is c<6> with no runtime trace.
template <long long N>
struct Const {
  static constexpr long long value = N;
  static constexpr auto hana() { return hana::llong_c<N>; }
  constexpr operator double() const { return static_cast<double>(N); }  // NOLINT: implicit by design
};
template <long long N>
inline constexpr Const<N> c{};

template <long long A, long long B>
constexpr auto operator+(Const<A>, Const<B>) { return Const<decltype(hana::llong_c<A> + hana::llong_c<B>)::value>{}; }
template <long long A, long long B>
constexpr auto operator-(Const<A>, Const<B>) { return Const<decltype(hana::llong_c<A> - hana::llong_c<B>)::value>{}; }
template <long long A, long long B>
constexpr auto operator*(Const<A>, Const<B>) { return Const<decltype(hana::llong_c<A> * hana::llong_c<B>)::value>{}; }
template <long long A>
constexpr auto operator-(Const<A>) { return Const<-A>{}; }

template <class T> struct is_static_const : std::false_type {};
template <long long N> struct is_static_const<Const<N>> : std::true_type {};
template <class T> constexpr bool is_static_const_v = is_static_const<std::remove_cvref_t<T>>::value;
template <class T, long long V>
constexpr bool is_static_value() {
  if constexpr (is_static_const_v<T>) return std::remove_cvref_t<T>::value == V;
  else return false;
}

template <class T>
concept TensorLike = requires(const T& t, Loc l) {
  { t.lower(l) } -> std::same_as<Tensor>;
};
template <class T>
concept ScalarLike = std::is_arithmetic_v<T> || is_static_const_v<T>;
template <class T>
concept Operand = TensorLike<T> || ScalarLike<T>;
template <class L, class R>
concept BinaryOperands = Operand<L> && Operand<R> && (TensorLike<L> || TensorLike<R>);

// A compile-time op name (C++20 class-type template parameter).
template <std::size_t N>
struct OpName {
  char text[N]{};
  constexpr OpName(const char (&s)[N]) { std::copy_n(s, N, text); }  // NOLINT: implicit by design
  constexpr std::string_view view() const { return {text, N - 1}; }
};

namespace detail {
using Lowered = std::variant<Tensor, double>;
// Builds one elementwise IR op from lowered operands: checks dtypes, broadcasts shapes,
// materialises scalars. Defined in dsl/elementwise.cpp.
Tensor lower_elementwise(std::string_view op, std::vector<Lowered> args, const Attrs& attrs, Loc loc);

template <class T>
Lowered lower_operand(const T& x, Loc loc) {
  if constexpr (TensorLike<T>) return x.lower(loc);
  else if constexpr (is_static_const_v<T>) return static_cast<double>(std::remove_cvref_t<T>::value);
  else return static_cast<double>(x);
}
}  // namespace detail

template <OpName Op, class... Args>
struct Expr : TensorMethods<Expr<Op, Args...>> {
  hana::tuple<Args...> args;
  Attrs attrs;

  explicit Expr(Args... a, Attrs at = {})
      : args(std::move(a)...), attrs(std::move(at)), lowered_(std::make_shared<Tensor>()) {}

  // The node this expression stands for, built at the first call (at that caller's line).
  Tensor lower(Loc loc) const {
    if (!lowered_->valid())
      *lowered_ = hana::unpack(args, [&](const auto&... a) {
        return detail::lower_elementwise(Op.view(), {detail::lower_operand(a, loc)...}, attrs, loc);
      });
    return *lowered_;
  }

 private:
  std::shared_ptr<Tensor> lowered_;  // shared by every copy: one expression, one node
};

template <OpName Op, class... Args>
auto make_expr(Args... args) { return Expr<Op, Args...>(std::move(args)...); }
template <OpName Op, class... Args>
auto make_expr_with(Attrs attrs, Args... args) { return Expr<Op, Args...>(std::move(args)..., std::move(attrs)); }

template <class T> struct is_neg_expr : std::false_type {};
template <class A> struct is_neg_expr<Expr<"neg", A>> : std::true_type {};

// ---- arithmetic operators ---------------------------------------------------------
template <class L, class R> requires BinaryOperands<L, R>
auto operator+(const L& l, const R& r) { return make_expr<"add">(l, r); }

template <class L, class R> requires BinaryOperands<L, R>
auto operator-(const L& l, const R& r) {
  if constexpr (is_static_value<R, 0>()) return l;
  else return make_expr<"sub">(l, r);
}

template <class L, class R> requires BinaryOperands<L, R>
auto operator*(const L& l, const R& r) {
  if constexpr (is_static_value<R, 1>()) return l;
  else if constexpr (is_static_value<L, 1>()) return r;
  else return make_expr<"mul">(l, r);
}

template <class L, class R> requires BinaryOperands<L, R>
auto operator/(const L& l, const R& r) {
  if constexpr (is_static_value<R, 1>()) return l;
  else if constexpr (is_static_value<L, 1>()) return make_expr<"reciprocal">(r);
  else return make_expr<"div">(l, r);
}

template <TensorLike X>
auto operator-(const X& x) {
  if constexpr (is_neg_expr<X>::value) return hana::at_c<0>(x.args);
  else return make_expr<"neg">(x);
}

// ---- comparisons and logic (bool results) ----------------------------------------
template <class L, class R> requires BinaryOperands<L, R>
auto operator==(const L& l, const R& r) { return make_expr<"eq">(l, r); }
template <class L, class R> requires BinaryOperands<L, R>
auto operator!=(const L& l, const R& r) { return make_expr<"ne">(l, r); }
template <class L, class R> requires BinaryOperands<L, R>
auto operator<(const L& l, const R& r) { return make_expr<"lt">(l, r); }
template <class L, class R> requires BinaryOperands<L, R>
auto operator<=(const L& l, const R& r) { return make_expr<"le">(l, r); }
template <class L, class R> requires BinaryOperands<L, R>
auto operator>(const L& l, const R& r) { return make_expr<"gt">(l, r); }
template <class L, class R> requires BinaryOperands<L, R>
auto operator>=(const L& l, const R& r) { return make_expr<"ge">(l, r); }
template <TensorLike L, TensorLike R>
auto operator&(const L& l, const R& r) { return make_expr<"logical_and">(l, r); }
template <TensorLike L, TensorLike R>
auto operator|(const L& l, const R& r) { return make_expr<"logical_or">(l, r); }
template <TensorLike X>
auto operator!(const X& x) { return make_expr<"logical_not">(x); }

// ---- elementwise functions --------------------------------------------------------
#define MG_UNARY_EXPR(fn, op) \
  template <TensorLike X>     \
  auto fn(const X& x) { return make_expr<op>(x); }
MG_UNARY_EXPR(exp, "exp")
MG_UNARY_EXPR(log, "log")
MG_UNARY_EXPR(sqrt, "sqrt")
MG_UNARY_EXPR(rsqrt, "rsqrt")
MG_UNARY_EXPR(sin, "sin")
MG_UNARY_EXPR(cos, "cos")
MG_UNARY_EXPR(tanh, "tanh")
MG_UNARY_EXPR(sigmoid, "sigmoid")
MG_UNARY_EXPR(relu, "relu")
MG_UNARY_EXPR(silu, "silu")
MG_UNARY_EXPR(abs, "abs")
MG_UNARY_EXPR(sign, "sign")
MG_UNARY_EXPR(square, "square")
MG_UNARY_EXPR(reciprocal, "reciprocal")
MG_UNARY_EXPR(erf, "erf")
MG_UNARY_EXPR(log1p, "log1p")
MG_UNARY_EXPR(expm1, "expm1")
MG_UNARY_EXPR(logical_not, "logical_not")
#undef MG_UNARY_EXPR

template <TensorLike X>
auto neg(const X& x) { return -x; }
template <TensorLike X>
auto leaky_relu(const X& x, double alpha = 0.01) { return make_expr_with<"leaky_relu">({{"alpha", alpha}}, x); }
// approximate: "none" (exact, erf) or "tanh", as torch.nn.functional.gelu.
template <TensorLike X>
auto gelu(const X& x, std::string approximate = "none") {
  return make_expr_with<"gelu">({{"approximate", std::move(approximate)}}, x);
}
template <TensorLike X>
auto softplus(const X& x, double beta = 1, double threshold = 20) {
  return make_expr_with<"softplus">({{"beta", beta}, {"threshold", threshold}}, x);
}
template <TensorLike X>
auto clamp(const X& x, double lo, double hi) { return make_expr_with<"clamp">({{"min", lo}, {"max", hi}}, x); }

template <class L, class R> requires BinaryOperands<L, R>
auto pow(const L& l, const R& r) {
  if constexpr (is_static_value<R, 1>()) return l;
  else if constexpr (is_static_value<R, 2>()) return make_expr<"square">(l);
  else if constexpr (is_static_value<R, -1>()) return make_expr<"reciprocal">(l);
  else return make_expr<"pow">(l, r);
}
template <class L, class R> requires BinaryOperands<L, R>
auto maximum(const L& l, const R& r) { return make_expr<"maximum">(l, r); }
template <class L, class R> requires BinaryOperands<L, R>
auto minimum(const L& l, const R& r) { return make_expr<"minimum">(l, r); }
template <TensorLike L, TensorLike R>
auto logical_and(const L& l, const R& r) { return make_expr<"logical_and">(l, r); }
template <TensorLike L, TensorLike R>
auto logical_or(const L& l, const R& r) { return make_expr<"logical_or">(l, r); }

// cond ? a : b with broadcasting; a or b may be scalars.
template <TensorLike C, Operand A, Operand B>
auto where(const C& cond, const A& a, const B& b) { return make_expr<"where">(cond, a, b); }

}  // namespace mg
