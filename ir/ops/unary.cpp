// Unary elementwise ops: one entry each (name, doc, dtypes, kernel, VJP, test domain).
// VJPs use the forward result where that is cheaper (exp, tanh, sigmoid, sqrt).
#include <cmath>
#include <cstring>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/ops/elementwise_kernel.hpp"
#include "minigrad/ir/ops/rules.hpp"

namespace mg::ir {

namespace {

using namespace rules;
using kernels::same_dtype;

template <class E>
using elem_t = typename std::decay_t<E>::value_type;

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;  // 1/sqrt(2 pi)
constexpr double kTwoOverSqrtPi = 1.12837916709551257390;
constexpr double kSqrt2OverPi = 0.79788456080286535588;

// gelu_grad's tanh form by SIMD batches, t computed once per element (an xtensor expression
// would hold t by reference or compute it thrice); the tail in one padded batch, so an
// element's result does not depend on its position (fused tiles, see elementwise_kernel.hpp).
// u = c (x + k x^3), t = tanh u: g ((1 + t)/2 + x/2 (1 - t^2) c (1 + 3k x^2)).
template <class T>
void gelu_tanh_grad(const T* x, const T* g, T* o, std::int64_t n) {
  using B = xsimd::batch<T>;
  constexpr std::int64_t W = static_cast<std::int64_t>(B::size);
  const auto f = [](B v, B gv) {
    const B c(static_cast<T>(kSqrt2OverPi)), k(static_cast<T>(0.044715)), k3(static_cast<T>(3 * 0.044715));
    const B one(T(1)), half(T(0.5));
    const B t = xsimd::tanh(c * (v + k * v * v * v));
    return gv * (half * (one + t) + half * v * (one - t * t) * (c * (one + k3 * v * v)));
  };
  const std::int64_t full = n - n % W;
  const auto body = [&](std::int64_t c0) {
    const std::int64_t c1 = std::min(full, c0 + kernels::kChunk);
    for (std::int64_t i = c0; i < c1; i += W)
      f(B::load_unaligned(x + i), B::load_unaligned(g + i)).store_unaligned(o + i);
  };
  const std::int64_t chunks = (full + kernels::kChunk - 1) / kernels::kChunk;
  if (n >= kernels::kParallelMin && kernels::several_threads()) {
#pragma omp parallel for
    for (std::int64_t c = 0; c < chunks; ++c) body(c * kernels::kChunk);
  } else {
    for (std::int64_t c = 0; c < chunks; ++c) body(c * kernels::kChunk);
  }
  if (full < n) {
    alignas(64) T bx[W], bg[W], bo[W];
    for (std::int64_t j = 0; j < W; ++j) bx[j] = x[std::min(full + j, n - 1)], bg[j] = g[std::min(full + j, n - 1)];
    f(B::load_aligned(bx), B::load_aligned(bg)).store_aligned(bo);
    for (std::int64_t j = 0; j < n - full; ++j) o[full + j] = bo[j];
  }
}

OpDef& def_unary(const char* name, const char* doc, Dtypes dtypes, kernels::Kernels kernel, VjpFn vjp,
                 Domain domain = Domain::any) {
  OpDef& d = define_op(name);
  d.doc = doc;
  d.arity = 1;
  d.traits.elementwise = true;
  d.infer = same_type(dtypes);
  std::move(kernel).install(d);
  d.vjp = std::move(vjp);
  d.smt = smt_uninterpreted(name);  // family default; exact ops override it
  d.test.domain = domain;
  return d;
}

// Z3 semantics shared by several entries (ir/smt.hpp).
SmtTerm smt_exp(SmtBuilder& b, SmtTerm x) {  // e^x > 0 and log(e^x) = x over the reals
  SmtTerm e = b.apply("exp", std::span(&x, 1));
  if (b.theory() == SmtTheory::real) {
    b.assume(b.lt(b.num(0), e));
    b.assume(b.eq(b.apply("log", std::span(&e, 1)), x));
  }
  return e;
}
SmtTerm smt_log(SmtBuilder& b, SmtTerm x) {  // x > 0 implies e^(log x) = x over the reals
  SmtTerm l = b.apply("log", std::span(&x, 1));
  if (b.theory() == SmtTheory::real)
    b.assume(b.lor(b.lnot(b.lt(b.num(0), x)), b.eq(b.apply("exp", std::span(&l, 1)), x)));
  return l;
}

// A kernel calling a scalar libm function per element, for functions whose xsimd version
// is too inexact (erf: up to ~70 ulp in f64, where glibc's is within 1 ulp).
template <class F>
KernelFn libm_kernel(F f) {
  return [f](const KernelArgs& k) {
    visit_dtype(k.out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if constexpr (std::is_floating_point_v<T>) {
        const std::int64_t n = k.out.numel();
        const T* x = k.in[0]->data<T>();
        T* o = k.out.data<T>();
        kernels::parallel_for(n, [&](std::int64_t i) { o[i] = f(x[i]); });
      } else {
        MG_ASSERT(false, "kernel: unsupported dtype for " + k.node.op_name());
      }
    });
  };
}

// -x by flipping the sign bit, element by element (the compiler vectorises it as an XOR):
// xsimd's AVX-512 negation computes 0 - x, which turns -(+0) into +0. i64 wraps.
KernelFn negate_kernel() {
  return [](const KernelArgs& k) {
    visit_dtype(k.out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      const std::int64_t n = k.out.numel();
      const T* x = k.in[0]->data<T>();
      T* o = k.out.data<T>();
      if constexpr (std::is_floating_point_v<T>) {
        kernels::parallel_for<true>(n, [&](std::int64_t i) { o[i] = -x[i]; });
      } else if constexpr (std::is_same_v<T, std::int64_t>) {
        kernels::parallel_for<true>(n, [&](std::int64_t i) { o[i] = kernels::wrap(0 - kernels::bits(x[i])); });
      } else {
        MG_ASSERT(false, "kernel: unsupported dtype for neg");
      }
    });
  };
}

// Cotangent of an op with derivative `dydx` (a Value shaped like x).
std::vector<Value> chain(const VjpArgs& a, Value dydx) { return {mul(a.cotangent, dydx)}; }

// 1 where cond holds, else 0, in x's dtype (a constant for second-order purposes).
Value mask(Value cond, Value like) { return cast(cond, like.dtype()); }

}  // namespace

void register_unary_ops() {
  def_unary("neg", "-x (i64 wraps: -INT64_MIN is INT64_MIN)", Dtypes::numeric,
            negate_kernel(),
            [](const VjpArgs& a) { return grads({neg(a.cotangent)}); })
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.neg(in[0]); };
  defined_op("neg").emit_c = c_expr("-{0}", "(int64_t)(UINT64_C(0) - (uint64_t){0})");

  def_unary("exp", "e^x", Dtypes::floats, same_dtype<1>([](auto x) { return xt::exp(x); }),
            [](const VjpArgs& a) { return chain(a, a.out); })
      .smt = [](SmtBuilder& b, auto in, auto&) { return smt_exp(b, in[0]); };
  defined_op("exp").emit_c = c_expr("exp{f}({0})");

  def_unary("log", "natural logarithm; -inf at 0, nan below 0", Dtypes::floats,
            same_dtype<1>([](auto x) { return xt::log(x); }),
            [](const VjpArgs& a) { return grads({div(a.cotangent, a.in[0])}); }, Domain::positive)
      .smt = [](SmtBuilder& b, auto in, auto&) { return smt_log(b, in[0]); };
  defined_op("log").emit_c = c_expr("log{f}({0})");

  def_unary("sqrt", "square root; nan below 0", Dtypes::floats,
            // Unqualified: xsimd::sqrt on batches (Batchwise), xt::sqrt on expressions.
            same_dtype<1>(kernels::batchwise([](auto x) {
              using xt::sqrt;
              return sqrt(x);
            })),
            [](const VjpArgs& a) { return grads({div(scale(a.cotangent, 0.5), a.out)}); },
            Domain::positive)
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.sqrt(in[0]); };
  defined_op("sqrt").emit_c = c_expr("sqrt{f}({0})");

  def_unary("rsqrt", "1/sqrt(x)", Dtypes::floats,
            same_dtype<1>([](auto x) { using T = elem_t<decltype(x)>; return T(1) / xt::sqrt(x); }),
            [](const VjpArgs& a) {  // d/dx x^-1/2 = -1/2 * y / x
              return grads({mul(scale(a.cotangent, -0.5), div(a.out, a.in[0]))});
            },
            Domain::positive)
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.div(b.num(1), b.sqrt(in[0])); };
  defined_op("rsqrt").emit_c = c_expr("{c:1} / sqrt{f}({0})");

  def_unary("sin", "sine (radians)", Dtypes::floats, same_dtype<1>([](auto x) { return xt::sin(x); }),
            [](const VjpArgs& a) { return chain(a, cos(a.in[0])); });
  defined_op("sin").emit_c = c_expr("sin{f}({0})");

  def_unary("cos", "cosine (radians)", Dtypes::floats, same_dtype<1>([](auto x) { return xt::cos(x); }),
            [](const VjpArgs& a) { return chain(a, neg(sin(a.in[0]))); });
  defined_op("cos").emit_c = c_expr("cos{f}({0})");

  def_unary("tanh", "hyperbolic tangent", Dtypes::floats,
            same_dtype<1>([](auto x) { return xt::tanh(x); }),
            [](const VjpArgs& a) {  // 1 - y^2
              return chain(a, sub(full_like(a.out, 1.0), square(a.out)));
            });
  defined_op("tanh").emit_c = c_expr("tanh{f}({0})");

  def_unary("sigmoid", "1/(1+e^-x)", Dtypes::floats,
            same_dtype<1>([](auto x) { using T = elem_t<decltype(x)>; return T(1) / (T(1) + xt::exp(-x)); }),
            [](const VjpArgs& a) {  // y (1 - y)
              return chain(a, mul(a.out, sub(full_like(a.out, 1.0), a.out)));
            });
  defined_op("sigmoid").emit_c = c_expr("{c:1} / ({c:1} + exp{f}(-{0}))");

  def_unary("relu", "max(x, 0); nan stays nan; gradient 0 at x = 0 (as PyTorch)", Dtypes::floats,
            // Batchwise (a select on SIMD batches): fused windows (bias + ReLU epilogues)
            // skip xtensor's per-call expression set-up.
            same_dtype<1>(kernels::batchwise([](auto x) {
              using X = decltype(x);
              if constexpr (xsimd::is_batch<X>::value) {
                return xsimd::select(x < X(0), X(0), x);
              } else {
                using T = elem_t<X>;
                return xt::where(x < T(0), T(0), x);
              }
            })),
            [](const VjpArgs& a) {  // y > 0 iff x > 0 (NaN and -0 too): the mask reads the
              // output, so the pre-activation is read by relu alone and fuses into its
              // producer (a GEMM's bias epilogue) instead of being kept for the backward
              Value y = a.out;
              return chain(a, mask(binary("gt", y, zeros_like(y)), y));
            },
            Domain::nonzero)
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.ite(b.lt(in[0], b.num(0)), b.num(0), in[0]); };
  defined_op("relu").emit_c = c_expr("{0} < {c:0} ? {c:0} : {0}");

  def_unary("leaky_relu", "x if x > 0 else alpha*x", Dtypes::floats,
            [](const KernelArgs& k) {
              double alpha = k.node.attrs.f64("alpha");
              same_dtype<1>([alpha](auto x) {
                using T = elem_t<decltype(x)>;
                return xt::where(x > T(0), x, x * T(alpha));
              })(k);
            },
            [](const VjpArgs& a) {
              Value x = a.in[0];
              double alpha = a.node.attrs.f64("alpha");
              return chain(a, where(binary("gt", x, zeros_like(x)), full_like(x, 1.0), full_like(x, alpha)));
            },
            Domain::nonzero)
      .attrs = {{"alpha", AttrKind::f64, AttrValue{0.01}}};
  defined_op("leaky_relu").emit_c = c_expr("{0} > {c:0} ? {0} : {0} * {a:alpha}");
  defined_op("leaky_relu").smt = [](SmtBuilder& b, auto in, const Attrs& at) {
    return b.ite(b.lt(b.num(0), in[0]), in[0], b.mul(in[0], b.num(at.f64("alpha"))));
  };

  def_unary("gelu",
            "x * Phi(x); approximate=\"tanh\" uses 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)))",
            Dtypes::floats,
            [exact = libm_kernel([](auto v) {  // std::erf, see libm_kernel
               using T = decltype(v);
               return T(0.5) * v * (T(1) + std::erf(v * T(kInvSqrt2)));
             })](const KernelArgs& k) {
              if (k.node.attrs.str("approximate") == "tanh") {
                same_dtype<1>([](auto x) {
                  using T = elem_t<decltype(x)>;
                  return T(0.5) * x * (T(1) + xt::tanh(T(kSqrt2OverPi) * (x + T(0.044715) * x * x * x)));
                })(k);
              } else {
                exact(k);
              }
            },
            [](const VjpArgs& a) {  // one elementwise op, below (fusable, one pass)
              return grads({make_op(op("gelu_grad"), {a.in[0], a.cotangent}, a.node.attrs)});
            })
      .attrs = {{"approximate", AttrKind::string, AttrValue{std::string("none")}}};
  defined_op("gelu").emit_c = c_expr([](const CExprArgs& a) {
    return expand_c_expr(a.node.attrs.str("approximate") == "tanh"
        ? "{c:0.5} * {0} * ({c:1} + tanh{f}({c:0.79788456080286535588} * ({0} + {c:0.044715} * {0} * {0} * {0})))"
        : "{c:0.5} * {0} * ({c:1} + erf{f}({0} * {c:0.70710678118654752440}))", a);
  });

  // gelu_grad(x, g) = g gelu'(x): gelu's VJP in one elementwise op. The composite it
  // replaces was three passes over the MLP's [B, T, 4d] activations in miniGPT's backward
  // (square, a fused tanh, a fused rest), memory-bound; this is one.
  OpDef& gg = define_op("gelu_grad");
  gg.doc = "g * d gelu(x)/dx (`approximate` as gelu's): gelu's VJP, x its input and g the cotangent";
  gg.arity = 2;
  gg.traits.elementwise = true;
  gg.attrs = {{"approximate", AttrKind::string, AttrValue{std::string("none")}}};
  gg.infer = same_type(Dtypes::floats);
  gg.kernel = [](const KernelArgs& k) {
    if (k.node.attrs.str("approximate") == "tanh") {
      visit_dtype(k.out.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        if constexpr (std::is_floating_point_v<T>)
          gelu_tanh_grad(k.in[0]->data<T>(), k.in[1]->data<T>(), k.out.data<T>(), k.out.numel());
        else MG_ASSERT(false, "kernel: unsupported dtype for " + k.node.op_name());
      });
      return;
    }
    visit_dtype(k.out.dtype(), [&](auto tag) {  // Phi(x) + x phi(x), by libm as gelu's kernel
      using T = typename decltype(tag)::type;
      if constexpr (std::is_floating_point_v<T>) {
        const T* x = k.in[0]->data<T>();
        const T* g = k.in[1]->data<T>();
        T* o = k.out.data<T>();
        kernels::parallel_for(k.out.numel(), [&](std::int64_t i) {
          const T v = x[i];
          o[i] = g[i] * (T(0.5) * (T(1) + std::erf(v * T(kInvSqrt2))) + v * T(kInvSqrt2Pi) * std::exp(T(-0.5) * v * v));
        });
      } else {
        MG_ASSERT(false, "kernel: unsupported dtype for " + k.node.op_name());
      }
    });
  };
  // d/dg = gelu'(x) c; d/dx = g gelu''(x) c, gelu'' by composite ops (so again differentiable):
  // tanh: (1 - t^2) (du + x (3ck x - t du^2)), du = c (1 + 3k x^2); exact: phi(x) (2 - x^2).
  gg.vjp = [](const VjpArgs& a) {
    Value x = a.in[0], g = a.in[1], c = a.cotangent;
    Value d2;
    if (a.node.attrs.str("approximate") == "tanh") {
      Value x2 = square(x), one = full_like(x, 1.0);
      Value t = tanh(scale(add(x, scale(mul(x2, x), 0.044715)), kSqrt2OverPi));
      Value du = scale(add(one, scale(x2, 3 * 0.044715)), kSqrt2OverPi);
      Value inner = sub(scale(x2, 3 * 0.044715 * kSqrt2OverPi), mul(mul(x, t), square(du)));
      d2 = mul(sub(one, square(t)), add(du, inner));
    } else {
      Value pdf = scale(exp(scale(square(x), -0.5)), kInvSqrt2Pi);
      d2 = mul(pdf, sub(full_like(x, 2.0), square(x)));
    }
    return grads({mul(mul(c, g), d2), make_op(op("gelu_grad"), {x, c}, a.node.attrs)});
  };
  gg.smt = smt_uninterpreted("gelu_grad");
  gg.emit_c = c_expr([](const CExprArgs& a) {
    return expand_c_expr(a.node.attrs.str("approximate") == "tanh"
        ? "{1} * ({c:0.5} * ({c:1} + tanh{f}({c:0.79788456080286535588} * ({0} + {c:0.044715} * {0} * {0} * {0}))) + "
          "{c:0.5} * {0} * ({c:1} - tanh{f}({c:0.79788456080286535588} * ({0} + {c:0.044715} * {0} * {0} * {0})) * "
          "tanh{f}({c:0.79788456080286535588} * ({0} + {c:0.044715} * {0} * {0} * {0}))) * "
          "({c:0.79788456080286535588} * ({c:1} + {c:0.134145} * {0} * {0})))"
        : "{1} * ({c:0.5} * ({c:1} + erf{f}({0} * {c:0.70710678118654752440})) + "
          "{0} * {c:0.39894228040143267794} * exp{f}({c:-0.5} * {0} * {0}))", a);
  });
  gg.test.cases = {
      {{Type{DType::f64, {3, 4}}, Type{DType::f64, {3, 4}}}, {{"approximate", std::string("tanh")}}},
      {{Type{DType::f64, {3, 4}}, Type{DType::f64, {3, 4}}}, {{"approximate", std::string("none")}}},
      {{Type{DType::f64, {}}, Type{DType::f64, {}}}, {{"approximate", std::string("tanh")}}},
  };

  def_unary("silu", "x * sigmoid(x)", Dtypes::floats,
            same_dtype<1>([](auto x) { using T = elem_t<decltype(x)>; return x / (T(1) + xt::exp(-x)); }),
            [](const VjpArgs& a) {  // s (1 + x (1 - s))
              Value x = a.in[0];
              Value s = sigmoid(x);
              Value one = full_like(x, 1.0);
              return chain(a, mul(s, add(one, mul(x, sub(one, s)))));
            });
  defined_op("silu").emit_c = c_expr("{0} / ({c:1} + exp{f}(-{0}))");

  def_unary("softplus", "log(1+e^(beta x))/beta; x where beta*x > threshold (as PyTorch)",
            Dtypes::floats,
            [](const KernelArgs& k) {
              double beta = k.node.attrs.f64("beta"), th = k.node.attrs.f64("threshold");
              same_dtype<1>([beta, th](auto x) {
                using T = elem_t<decltype(x)>;
                return xt::where(x * T(beta) > T(th), x, xt::log1p(xt::exp(x * T(beta))) / T(beta));
              })(k);
            },
            [](const VjpArgs& a) {
              Value x = a.in[0];
              double beta = a.node.attrs.f64("beta"), th = a.node.attrs.f64("threshold");
              Value bx = scale(x, beta);
              Value linear = binary("gt", bx, full_like(x, th));
              return chain(a, where(linear, full_like(x, 1.0), sigmoid(bx)));
            })
      .attrs = {{"beta", AttrKind::f64, AttrValue{1.0}}, {"threshold", AttrKind::f64, AttrValue{20.0}}};
  defined_op("softplus").emit_c = c_expr("{0} * {a:beta} > {a:threshold} ? {0} : log1p{f}(exp{f}({0} * {a:beta})) / {a:beta}");

  def_unary("abs", "|x|; gradient sign(x) (0 at 0); i64 wraps (|INT64_MIN| is INT64_MIN)", Dtypes::numeric,
            kernels::same_dtype_wrapping<1>([](auto x) { return xt::abs(x); },
                                            [](std::int64_t x) { return x < 0 ? kernels::wrap(0 - kernels::bits(x)) : x; }),
            [](const VjpArgs& a) { return chain(a, sign(a.in[0])); }, Domain::nonzero)
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.abs(in[0]); };
  defined_op("abs").emit_c = c_expr("fabs{f}({0})", "(int64_t)({0} < 0 ? UINT64_C(0) - (uint64_t){0} : (uint64_t){0})");

  def_unary("sign", "-1, 0 or 1 (nan stays nan); gradient 0", Dtypes::numeric,
            same_dtype<1, true>([](auto x) { return xt::sign(x); }),
            [](const VjpArgs& a) { return grads({zeros_like(a.in[0])}); }, Domain::nonzero);
  defined_op("sign").emit_c = c_expr("{0} > {c:0} ? {c:1} : ({0} < {c:0} ? {c:-1} : {0})", "(int64_t)(({0} > 0) - ({0} < 0))");

  def_unary("square", "x*x (i64 wraps modulo 2^64)", Dtypes::numeric,
            kernels::same_dtype_wrapping<1>([](auto x) { return x * x; },
                                            [](std::int64_t x) { return kernels::wrap(kernels::bits(x) * kernels::bits(x)); }),
            [](const VjpArgs& a) { return chain(a, scale(a.in[0], 2.0)); })
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.mul(in[0], in[0]); };
  defined_op("square").emit_c = c_expr("{0} * {0}", "(int64_t)((uint64_t){0} * (uint64_t){0})");

  def_unary("reciprocal", "1/x; inf at 0", Dtypes::floats,
            same_dtype<1>([](auto x) { using T = elem_t<decltype(x)>; return T(1) / x; }),
            [](const VjpArgs& a) { return chain(a, neg(square(a.out))); }, Domain::nonzero)
      .smt = [](SmtBuilder& b, auto in, auto&) { return b.div(b.num(1), in[0]); };
  defined_op("reciprocal").emit_c = c_expr("{c:1} / {0}");

  def_unary("erf", "Gauss error function", Dtypes::floats, libm_kernel([](auto v) { return std::erf(v); }),
            [](const VjpArgs& a) {  // 2/sqrt(pi) e^(-x^2)
              return chain(a, scale(exp(neg(square(a.in[0]))), kTwoOverSqrtPi));
            });
  defined_op("erf").emit_c = c_expr("erf{f}({0})");

  def_unary("log1p", "log(1+x), accurate near 0", Dtypes::floats,
            same_dtype<1>([](auto x) { return xt::log1p(x); }),
            [](const VjpArgs& a) { return grads({div(a.cotangent, add_scalar(a.in[0], 1.0))}); },
            Domain::unit);
  defined_op("log1p").emit_c = c_expr("log1p{f}({0})");

  def_unary("expm1", "e^x - 1, accurate near 0", Dtypes::floats,
            same_dtype<1>([](auto x) { return xt::expm1(x); }),
            [](const VjpArgs& a) { return chain(a, add_scalar(a.out, 1.0)); });
  defined_op("expm1").emit_c = c_expr("expm1{f}({0})");

  OpDef& clamp = def_unary("clamp", "min(max(x, min), max); gradient 1 where min <= x <= max (as PyTorch)",
            Dtypes::floats,
            [](const KernelArgs& k) {
              double lo = k.node.attrs.f64("min"), hi = k.node.attrs.f64("max");
              same_dtype<1>([lo, hi](auto x) {
                using T = elem_t<decltype(x)>;
                return xt::where(x < T(lo), T(lo), xt::where(x > T(hi), T(hi), x));
              })(k);
            },
            [](const VjpArgs& a) {
              Value x = a.in[0];
              double lo = a.node.attrs.f64("min"), hi = a.node.attrs.f64("max");
              Value inside = binary("logical_and", binary("ge", x, full_like(x, lo)),
                                    binary("le", x, full_like(x, hi)));
              return chain(a, mask(inside, x));
            },
            Domain::any);
  defined_op("clamp").emit_c = c_expr("{0} < {a:min} ? {a:min} : ({0} > {a:max} ? {a:max} : {0})");
  clamp.attrs = {{"min", AttrKind::f64, AttrValue{-INFINITY}}, {"max", AttrKind::f64, AttrValue{INFINITY}}};
  clamp.test.cases = {{{Type{DType::f64, {3, 4}}}, {{"min", -0.5}, {"max", 0.5}}}};
  clamp.smt = [](SmtBuilder& b, auto in, const Attrs& at) {  // the kernel's order of tests
    SmtTerm lo = b.num(at.f64("min")), hi = b.num(at.f64("max"));
    return b.ite(b.lt(in[0], lo), lo, b.ite(b.lt(hi, in[0]), hi, in[0]));
  };

  // stop_gradient: the identity whose VJP sends nothing back (jax.lax.stop_gradient,
  // torch's detach). Its VJP is an empty cotangent, not zeros, so grad of grad stays
  // empty too and the backward pass builds nothing for the path.
  OpDef& stop = define_op("stop_gradient");
  stop.doc = "x unchanged (any dtype); no gradient flows back through it (jax.lax.stop_gradient, torch detach)";
  stop.traits.elementwise = true;
  stop.infer = same_type(Dtypes::any);
  stop.kernel = [](const KernelArgs& k) {
    if (k.out.nbytes() > 0) std::memcpy(k.out.raw(), k.in[0]->raw(), k.out.nbytes());
  };
  stop.vjp = [](const VjpArgs&) { return std::vector<Value>{Value{}}; };
  stop.emit_c = c_expr("{0}");
  stop.smt = [](SmtBuilder&, auto in, auto&) { return in[0]; };
  stop.test.grad_order = 0;
  stop.test.vjp_not_derivative =
      "its VJP is zero by definition (tests/autodiff: StopGradient*), so it differs from finite differences";

  OpDef& lnot = define_op("logical_not");
  lnot.doc = "boolean negation";
  lnot.traits.elementwise = true;
  lnot.infer = same_type(Dtypes::boolean);
  lnot.kernel = [](const KernelArgs& k) {
    const auto* x = k.in[0]->data<std::uint8_t>();
    auto* o = k.out.data<std::uint8_t>();
    for (std::int64_t i = 0; i < k.out.numel(); ++i) o[i] = !x[i];
  };
  defined_op("logical_not").emit_c = c_expr("!{0}");
  lnot.not_differentiable = "boolean output";
  lnot.smt = [](SmtBuilder& b, auto in, auto&) { return b.lnot(in[0]); };
  lnot.test.grad_order = 0;
  lnot.test.cases = {{{Type{DType::boolean, {3, 4}}}, {}}, {{Type{DType::boolean, {}}}, {}}};
  lnot.test.make_input = [](std::size_t, const Type& t, std::uint64_t seed) {
    Array a(t);
    for (std::int64_t j = 0; j < a.numel(); ++j) a.set(j, double((j + seed) % 2));
    return a;
  };
}

}  // namespace mg::ir
