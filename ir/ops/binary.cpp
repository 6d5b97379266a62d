// Binary elementwise ops (arithmetic, comparison, logic) and the ternary `where`.
// Operands have identical types: broadcasting is an explicit broadcast_to upstream.
#include <cmath>

#include "minigrad/ir/ops/elementwise_kernel.hpp"
#include "minigrad/ir/ops/rules.hpp"

namespace mg::ir {

namespace {

using namespace rules;
using kernels::same_dtype;

template <class E>
using elem_t = typename std::decay_t<E>::value_type;

OpDef& def_binary(const char* name, const char* doc, Dtypes dtypes, kernels::Kernels kernel, VjpFn vjp,
                  Domain domain = Domain::any) {
  OpDef& d = define_op(name);
  d.doc = doc;
  d.arity = 2;
  d.traits.elementwise = true;
  d.infer = same_type(dtypes);
  std::move(kernel).install(d);
  d.vjp = std::move(vjp);
  d.smt = smt_uninterpreted(name);  // family default; exact ops override it
  d.test.domain = domain;
  d.test.cases = {{{Type{DType::f64, {3, 4}}, Type{DType::f64, {3, 4}}}, {}},
                  {{Type{DType::f64, {}}, Type{DType::f64, {}}}, {}}};
  return d;
}

// Comparison and logic ops: bool results, no gradient. One loop for the kernel and for
// fused windows (OpDef::span_kernel). Restrict pointers: a byte store may alias anything,
// so through a captured reference the compiler reloaded `o` per element and did not
// vectorise (the relu mask's `gt` ran 4x slower than an add).
template <class T, class F>
void compare_span(std::uint8_t* __restrict out, const T* __restrict a, const T* __restrict b, std::int64_t n, F& f) {
#pragma omp simd
  for (std::int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
}

template <class F>
void compare_kernel(const KernelArgs& k, F f) {
  const std::int64_t n = k.out.numel();
  auto* o = k.out.data<std::uint8_t>();
  visit_dtype(k.in[0]->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* a = k.in[0]->data<T>();
    const T* b = k.in[1]->data<T>();
    if (n >= kernels::kParallelMin) {
      constexpr std::int64_t kChunk = kernels::kChunk;
#pragma omp parallel for
      for (std::int64_t c = 0; c < n; c += kChunk) compare_span(o + c, a + c, b + c, std::min(kChunk, n - c), f);
    } else {  // no OpenMP call at all (fused nodes run this per tile)
      compare_span(o, a, b, n, f);
    }
  });
}

template <class F>
OpDef& def_predicate(const char* name, const char* doc, Dtypes dtypes, F f) {
  OpDef& d = define_op(name);
  d.doc = doc;
  d.arity = 2;
  d.traits.elementwise = true;
  d.infer = same_type(dtypes, DType::boolean);
  d.kernel = [f](const KernelArgs& k) { compare_kernel(k, f); };
  d.span_kernel = [f](const SpanArgs& s) mutable {
    visit_dtype(s.in_dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      compare_span(static_cast<std::uint8_t*>(s.out), static_cast<const T*>(s.in[0]), static_cast<const T*>(s.in[1]), s.n, f);
    });
    return true;
  };
  d.not_differentiable = "boolean output";
  d.test.grad_order = 0;
  d.test.cases = {{{Type{DType::f64, {3, 4}}, Type{DType::f64, {3, 4}}}, {}}};
  if (dtypes == Dtypes::boolean) {
    d.test.cases = {{{Type{DType::boolean, {3, 4}}, Type{DType::boolean, {3, 4}}}, {}}};
    d.test.make_input = [](std::size_t i, const Type& t, std::uint64_t seed) {
      Array a(t);
      for (std::int64_t j = 0; j < a.numel(); ++j) a.set(j, ((j * 7 + i * 3 + seed) % 3) == 0);
      return a;
    };
  }
  return d;
}

// Where a == b, maximum/minimum split the gradient evenly (as PyTorch).
std::vector<Value> minmax_vjp(const VjpArgs& a, const char* strict) {
  Value x = a.in[0], y = a.in[1];
  Value half = scale(a.cotangent, 0.5);
  Value tie = binary("eq", x, y);
  Value zero = zeros_like(a.cotangent);
  Value gx = where(tie, half, where(binary(strict, x, y), a.cotangent, zero));
  Value gy = where(tie, half, where(binary(strict, y, x), a.cotangent, zero));
  return {gx, gy};
}

// The kernels' maximum/minimum: a if a is NaN, else b if b is NaN, else a if `pick_a`
// else b (so ties, +0 vs -0 included, give b).
SmtTerm smt_pick(SmtBuilder& b, SmtTerm x, SmtTerm y, SmtTerm pick_x) {
  return b.ite(b.is_nan(x), x, b.ite(b.is_nan(y), y, b.ite(pick_x, x, y)));
}

}  // namespace

void register_binary_ops() {
  def_binary("add", "a + b (i64 wraps modulo 2^64)", Dtypes::numeric,
             kernels::same_dtype_wrapping<2>(kernels::batchwise([](auto a, auto b) { return a + b; }),
                                             [](std::int64_t a, std::int64_t b) { return kernels::wrap(kernels::bits(a) + kernels::bits(b)); }),
             [](const VjpArgs& a) { return grads({a.cotangent, a.cotangent}); })
      .traits.commutative = true;
  defined_op("add").emit_c = c_expr("{0} + {1}", "(int64_t)((uint64_t){0} + (uint64_t){1})");
  defined_op("add").smt = [](SmtBuilder& b, auto in, auto&) { return b.add(in[0], in[1]); };

  def_binary("sub", "a - b (i64 wraps modulo 2^64)", Dtypes::numeric,
             kernels::same_dtype_wrapping<2>(kernels::batchwise([](auto a, auto b) { return a - b; }),
                                             [](std::int64_t a, std::int64_t b) { return kernels::wrap(kernels::bits(a) - kernels::bits(b)); }),
             [](const VjpArgs& a) { return grads({a.cotangent, neg(a.cotangent)}); })
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.sub(in[0], in[1]); };
  defined_op("sub").emit_c = c_expr("{0} - {1}", "(int64_t)((uint64_t){0} - (uint64_t){1})");

  def_binary("mul", "a * b (i64 wraps modulo 2^64)", Dtypes::numeric,
             kernels::same_dtype_wrapping<2>(kernels::batchwise([](auto a, auto b) { return a * b; }),
                                             [](std::int64_t a, std::int64_t b) { return kernels::wrap(kernels::bits(a) * kernels::bits(b)); }),
             [](const VjpArgs& a) {
               return grads({mul(a.cotangent, a.in[1]), mul(a.cotangent, a.in[0])});
             })
      .traits.commutative = true;
  defined_op("mul").emit_c = c_expr("{0} * {1}", "(int64_t)((uint64_t){0} * (uint64_t){1})");
  defined_op("mul").smt = [](SmtBuilder& b, auto in, auto&) { return b.mul(in[0], in[1]); };

  def_binary("div", "a / b (IEEE: x/0 = +-inf, 0/0 = nan)", Dtypes::floats,
             same_dtype<2>(kernels::batchwise([](auto a, auto b) { return a / b; })),
             [](const VjpArgs& a) {  // d/db a/b = -(a/b)/b
               Value gb = neg(div(mul(a.cotangent, a.out), a.in[1]));
               return grads({div(a.cotangent, a.in[1]), gb});
             },
             Domain::nonzero)
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.div(in[0], in[1]); };
  defined_op("div").emit_c = c_expr("{0} / {1}");

  def_binary("pow", "a ^ b (C pow: nan for a < 0 with non-integer b)", Dtypes::floats,
             [](const KernelArgs& k) {  // std::pow: xsimd's exp(b log a) is inexact and has 0^0 = 0
               visit_dtype(k.out.dtype(), [&](auto tag) {
                 using T = typename decltype(tag)::type;
                 if constexpr (std::is_floating_point_v<T>) {
                   const std::int64_t n = k.out.numel();
                   const T* x = k.in[0]->data<T>();
                   const T* y = k.in[1]->data<T>();
                   T* o = k.out.data<T>();
                   kernels::parallel_for(n, [&](std::int64_t i) { o[i] = std::pow(x[i], y[i]); });
                 } else {
                   MG_ASSERT(false, "kernel: unsupported dtype for pow");
                 }
               });
             },
             [](const VjpArgs& a) {  // b a^(b-1), a^b log a
               Value x = a.in[0], y = a.in[1];
               Value ga = mul(a.cotangent, mul(y, pow(x, add_scalar(y, -1.0))));
               Value gb = mul(a.cotangent, mul(a.out, log(x)));
               return grads({ga, gb});
             },
             Domain::positive);
  defined_op("pow").emit_c = c_expr("pow{f}({0}, {1})");

  // NaN tests use xt::equal: xsimd 8's `!=` on batches is ordered (nan != nan is false).
  def_binary("maximum", "elementwise max; nan if either is nan; ties split the gradient",
             Dtypes::numeric,
             same_dtype<2, true>([](auto a, auto b) {
               return xt::where(xt::equal(a, a), xt::where(xt::equal(b, b), xt::where(a > b, a, b), b), a);
             }),
             [](const VjpArgs& a) { return minmax_vjp(a, "gt"); })
      .traits.commutative = true;
  defined_op("maximum").emit_c = c_expr("{0} != {0} ? {0} : ({1} != {1} ? {1} : ({0} > {1} ? {0} : {1}))");
  defined_op("maximum").smt = [](SmtBuilder& b, auto in, auto&) { return smt_pick(b, in[0], in[1], b.lt(in[1], in[0])); };

  def_binary("minimum", "elementwise min; nan if either is nan; ties split the gradient",
             Dtypes::numeric,
             same_dtype<2, true>([](auto a, auto b) {
               return xt::where(xt::equal(a, a), xt::where(xt::equal(b, b), xt::where(a < b, a, b), b), a);
             }),
             [](const VjpArgs& a) { return minmax_vjp(a, "lt"); })
      .traits.commutative = true;
  defined_op("minimum").emit_c = c_expr("{0} != {0} ? {0} : ({1} != {1} ? {1} : ({0} < {1} ? {0} : {1}))");
  defined_op("minimum").smt = [](SmtBuilder& b, auto in, auto&) { return smt_pick(b, in[0], in[1], b.lt(in[0], in[1])); };

  def_predicate("eq", "a == b (nan != nan)", Dtypes::numeric, [](auto a, auto b) -> std::uint8_t { return a == b; })
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.eq(in[0], in[1]); };
  defined_op("eq").emit_c = c_expr("{0} == {1}");
  def_predicate("ne", "a != b", Dtypes::numeric, [](auto a, auto b) -> std::uint8_t { return a != b; })
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.lnot(b.eq(in[0], in[1])); };
  defined_op("ne").emit_c = c_expr("{0} != {1}");
  def_predicate("lt", "a < b", Dtypes::numeric, [](auto a, auto b) -> std::uint8_t { return a < b; })
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.lt(in[0], in[1]); };
  defined_op("lt").emit_c = c_expr("{0} < {1}");
  def_predicate("le", "a <= b", Dtypes::numeric, [](auto a, auto b) -> std::uint8_t { return a <= b; })
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.le(in[0], in[1]); };
  defined_op("le").emit_c = c_expr("{0} <= {1}");
  def_predicate("gt", "a > b", Dtypes::numeric, [](auto a, auto b) -> std::uint8_t { return a > b; })
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.lt(in[1], in[0]); };
  defined_op("gt").emit_c = c_expr("{0} > {1}");
  def_predicate("ge", "a >= b", Dtypes::numeric, [](auto a, auto b) -> std::uint8_t { return a >= b; })
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.le(in[1], in[0]); };
  defined_op("ge").emit_c = c_expr("{0} >= {1}");
  def_predicate("logical_and", "a && b on bool", Dtypes::boolean,
                [](auto a, auto b) -> std::uint8_t { return a && b; })
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.land(in[0], in[1]); };
  defined_op("logical_and").emit_c = c_expr("{0} && {1}");
  def_predicate("logical_or", "a || b on bool", Dtypes::boolean,
                [](auto a, auto b) -> std::uint8_t { return a || b; })
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.lor(in[0], in[1]); };
  defined_op("logical_or").emit_c = c_expr("{0} || {1}");

  OpDef& w = define_op("where");
  w.doc = "cond ? a : b elementwise; cond is bool, a and b share a type";
  w.arity = 3;
  w.traits.elementwise = true;
  w.infer = [](std::span<const Type> in, const Attrs&) {
    require(in[0].dtype == DType::boolean, "expects a bool condition");
    require(in[1] == in[2], "expects both branches of identical type");
    require(in[0].shape == in[1].shape, "expects the condition shaped like the branches");
    return in[1];
  };
  w.kernel = [](const KernelArgs& k) {
    const std::int64_t n = k.out.numel();
    const auto* c = k.in[0]->data<std::uint8_t>();
    visit_dtype(k.out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* a = k.in[1]->data<T>();
      const T* b = k.in[2]->data<T>();
      T* o = k.out.data<T>();
      kernels::parallel_for<true>(n, [&](std::int64_t i) { o[i] = c[i] ? a[i] : b[i]; });
    });
  };
  defined_op("where").emit_c = c_expr("{0} ? {1} : {2}");
  w.smt = [](SmtBuilder& b, auto in, auto&) { return b.ite(in[0], in[1], in[2]); };
  w.vjp = [](const VjpArgs& a) {
    Value zero = zeros_like(a.cotangent);
    return std::vector<Value>{Value{}, where(a.in[0], a.cotangent, zero), where(a.in[0], zero, a.cotangent)};
  };
  w.test.cases = {{{Type{DType::boolean, {3, 4}}, Type{DType::f64, {3, 4}}, Type{DType::f64, {3, 4}}}, {}}};
  w.test.make_input = [](std::size_t i, const Type& t, std::uint64_t seed) {
    Array a(t);
    for (std::int64_t j = 0; j < a.numel(); ++j)
      a.set(j, i == 0 ? double((j + seed) % 2) : std::sin(double(j * 13 + i * 5 + seed)));
    return a;
  };
}

}  // namespace mg::ir
