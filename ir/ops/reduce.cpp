// Reductions over an axis list: reduce_sum/mean/max/min/prod, var, logsumexp. The `axes`
// attribute arrives normalised (non-negative, sorted, unique; empty = reduce nothing, an
// identity) and `keepdim` keeps reduced dims as size 1. Kernels share one strided fold
// (reduce_kernel.hpp); VJPs broadcast the cotangent back with expand_reduced.
// The single-axis ops (softmax, log_softmax, argmax, argmin) live in softmax.cpp.
#include <algorithm>
#include <cmath>

#include "minigrad/ir/ops/reduce_c.hpp"
#include "minigrad/ir/ops/reduce_kernel.hpp"
#include "minigrad/ir/ops/rules.hpp"

// GCC 12 flags its own AVX-512 intrinsics (`__m512d __Y = __Y;`) as uninitialised when
// xsimd's exp is not inlined: the false positive meson.build notes, here as -Wuninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <xsimd/xsimd.hpp>
#pragma GCC diagnostic pop

namespace mg::ir {

void register_softmax_ops();  // softmax.cpp: the single-axis half of this family

namespace {

using namespace rules;
using namespace kernels;

const I64List& axes_of(const Node& n) { return n.attrs.list("axes"); }

Shape reduced_shape(const Shape& shape, const I64List& axes, bool keepdim) {
  if (keepdim) return keepdim_shape(shape, axes);
  Shape out;
  for (std::size_t d = 0; d < shape.size(); ++d)
    if (!std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(d))) out.push_back(shape[d]);
  return out;
}

InferFn reduce_rule(Dtypes dtypes) {
  return [dtypes](std::span<const Type> in, const Attrs& attrs) {
    require(allowed(in[0].dtype, dtypes), "expects " + describe(dtypes));
    const I64List& axes = attrs.list("axes");
    require(normalize_axes(axes, in[0].rank()) == axes,
            "expects normalised axes (non-negative, sorted, unique)");
    return Type{in[0].dtype, reduced_shape(in[0].shape, axes, attrs.boolean("keepdim"))};
  };
}

// Number of elements each output folds.
double reduced_count(const Shape& shape, const I64List& axes) {
  double n = 1;
  for (auto a : axes) n *= static_cast<double>(shape[static_cast<std::size_t>(a)]);
  return n;
}

// A kernel folding with reducer R<acc_t<T>> (R<T> when !Wide: max and min are exact in
// any type), the result finished by fin(acc, count).
template <template <class> class R, bool WithInt, bool Wide = true>
KernelFn fold_kernel(double (*fin)(double acc, double count) = nullptr) {
  return [fin](const KernelArgs& k) {
    visit_numeric<WithInt>(k.out.dtype(), k.node.op_name(), [&](auto tag) {
      using T = decltype(tag);
      using A = std::conditional_t<Wide, acc_t<T>, T>;
      const ReduceView v = view_reduction(k.in[0]->shape(), axes_of(k.node));
      const double n = static_cast<double>(v.num_reduced());
      fold<R<A>>(k.in[0]->data<T>(), v, nullptr, k.out.data<T>(), [fin, n](A acc, A) {
        if constexpr (std::is_floating_point_v<T>) {
          if (fin) return static_cast<T>(fin(acc, n));
        }
        return static_cast<T>(acc);
      });
    });
  };
}

// var: two passes (mean, then squared deviations), divisor max(0, N - correction).
void var_kernel(const KernelArgs& k) {
  visit_numeric<false>(k.out.dtype(), k.node.op_name(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = k.in[0]->data<T>();
    const ReduceView v = view_reduction(k.in[0]->shape(), axes_of(k.node));
    const double n = static_cast<double>(v.num_reduced());
    const double divisor = std::max(0.0, n - static_cast<double>(k.node.attrs.i64("correction")));
    std::vector<double> mean(static_cast<std::size_t>(v.num_out()));
    fold<SumOp<double>>(x, v, nullptr, mean.data(), [n](double acc, double) { return acc / n; });
    fold<SumSquaresOp<double>, true>(x, v, mean.data(), k.out.data<T>(),
                                     [divisor](double acc, double) { return static_cast<T>(acc / divisor); });
  });
}

// v = exp(v) over a buffer, vectorised.
struct ExpMap {
  static void apply(double* v, std::int64_t n) {
    using B = xsimd::batch<double>;
    std::int64_t i = 0;
    for (; i + static_cast<std::int64_t>(B::size) <= n; i += B::size)
      xsimd::exp(B::load_unaligned(v + i)).store_unaligned(v + i);
    for (; i < n; ++i) v[i] = std::exp(v[i]);
  }
};

// logsumexp: m = max (0 where it is infinite, as PyTorch), then m + log(sum(exp(x - m))).
void logsumexp_kernel(const KernelArgs& k) {
  visit_numeric<false>(k.out.dtype(), k.node.op_name(), [&](auto tag) {
    using T = decltype(tag);
    const T* x = k.in[0]->data<T>();
    const ReduceView v = view_reduction(k.in[0]->shape(), axes_of(k.node));
    std::vector<double> shift(static_cast<std::size_t>(v.num_out()));
    fold<MaxOp<T>>(x, v, nullptr, shift.data(),
                   [](T m, T) { return std::isinf(m) ? 0.0 : static_cast<double>(m); });
    fold<MapSumOp<double, ExpMap>, true>(x, v, shift.data(), k.out.data<T>(),
                                 [](double s, double m) { return static_cast<T>(m + std::log(s)); });
  });
}

// The cotangent (or any value shaped like the output) broadcast back to the input's shape.
Value expand(Value g, const VjpArgs& a) { return expand_reduced(g, a.in[0].shape(), axes_of(a.node)); }

// reduce_prod: d(prod x)/dx_i = prod_{j != i} x_j, computed without dividing by a zero (so
// finite where inputs are zero, as PyTorch) and exactly differentiable again: with
// nz = where(x == 0, 1, x) and P = prod(nz), it is Z_i * P / nz_i, where Z_i, the product of
// the zero elements other than x_i, is 1 when there are none, their one value when there
// is one (0, but carrying its derivative: the Hessian's entries between a zero and the rest
// come out right), and 0 when there are more.
std::vector<Value> prod_vjp(const VjpArgs& a) {
  Value x = a.in[0];
  if (!is_float(x.dtype())) return {Value{}};
  const I64List& axes = axes_of(a.node);
  Value is_zero = binary("eq", x, zeros_like(x));
  Value nz = where(is_zero, full_like(x, 1.0), x);
  Value p = expand(reduce("reduce_prod", nz, axes, true), a);
  Value zeros_here = cast(is_zero, x.dtype());
  Value zeros_other = sub(expand(reduce_sum(zeros_here, axes, true), a), zeros_here);  // zero count without x_i
  Value zero_x = where(is_zero, x, zeros_like(x));
  Value sum_other = sub(expand(reduce_sum(zero_x, axes, true), a), zero_x);  // the other zeros' values, summed
  Value z = where(binary("eq", zeros_other, zeros_like(x)), full_like(x, 1.0),
                  where(binary("eq", zeros_other, full_like(x, 1.0)), sum_other, zeros_like(x)));
  return {div(mul(mul(expand(a.cotangent, a), z), p), nz)};
}

// reduce_max / reduce_min: the cotangent split evenly among the elements equal to the
// result (as PyTorch amax/amin).
std::vector<Value> extremum_vjp(const VjpArgs& a) {
  Value x = a.in[0];
  if (!is_float(x.dtype())) return {Value{}};
  Value hit = cast(binary("eq", x, expand(a.out, a)), x.dtype());
  Value ties = reduce_sum(hit, axes_of(a.node), a.node.attrs.boolean("keepdim"));
  return {mul(hit, expand(div(a.cotangent, ties), a))};
}

OpDef& def_reduce(const char* name, const char* doc, Dtypes dtypes, KernelFn kernel, VjpFn vjp,
                  Domain domain = Domain::any) {
  OpDef& d = define_op(name);
  d.doc = doc;
  d.arity = 1;
  d.attrs = {{"axes", AttrKind::i64_list, std::nullopt}, {"keepdim", AttrKind::boolean, AttrValue{false}}};
  d.infer = reduce_rule(dtypes);
  d.kernel = std::move(kernel);
  d.vjp = std::move(vjp);
  d.test.domain = domain;
  const Type m34{DType::f64, {3, 4}}, scalar{DType::f64, {}}, t234{DType::f64, {2, 3, 4}};
  d.test.cases = {
      {{m34}, {{"axes", I64List{1}}, {"keepdim", false}}},
      {{m34}, {{"axes", I64List{0, 1}}, {"keepdim", true}}},
      {{scalar}, {{"axes", I64List{}}, {"keepdim", false}}},
      {{t234}, {{"axes", I64List{0, 2}}, {"keepdim", false}}},
  };
  return d;
}

// ---- C99 emission ----------------------------------------------------------------------

// The operand's element at flat index idx, as `x`.
std::function<std::string(const std::string&)> read_x(const CLoopArgs& a) {
  return [T = c_type(a.in_types[0].dtype), in = a.in[0]](const std::string& idx) {
    return "const " + T + " x = " + in + "[" + idx + "];";
  };
}

// sum/prod/max/min/mean: the op's `fold` column as C (c_fold_parts).
EmitC c_fold() {
  return c_loops([](const CLoopArgs& a) {
    CReduce r(a.in_types[0].shape, axes_of(a.node));
    const CFold f = c_fold_parts(a.node.op->fold, a.node.type.dtype, r.n_red);
    if (r.by_rows()) return r.emit_rows(a.w, read_x(a), f.acc_type, f.init, f.step, f.fin, a.out);
    r.emit(a.w, "    " + f.acc_type + " acc = " + f.init + ";\n" + r.pass(read_x(a), f.step, f.simd) + "    " + a.out +
                    "[o] = " + f.fin + ";\n");
  });
}

// var: mean, then the squared deviations, both in f64.
EmitC c_var() {
  return c_loops([](const CLoopArgs& a) {
    CReduce r(a.in_types[0].shape, axes_of(a.node));
    const std::string T = c_type(a.node.type.dtype);
    const double n = static_cast<double>(r.n_red);
    const double divisor = std::max(0.0, n - static_cast<double>(a.node.attrs.i64("correction")));
    r.emit(a.w, "    double acc = 0, mean, sq = 0;\n" + r.pass(read_x(a), "acc += (double)x;", "+:acc") + "    mean = acc / " +
           c_lit(n, f64) + ";\n" + r.pass(read_x(a), "const double d = (double)x - mean; sq += d * d;", "+:sq") + "    " + a.out +
           "[o] = (" + T + ")(sq / " + c_lit(divisor, f64) + ");\n");
  });
}

// logsumexp: m = max (0 where infinite), then m + log(sum(exp(x - m))) in f64.
EmitC c_logsumexp() {
  return c_loops([](const CLoopArgs& a) {
    CReduce r(a.in_types[0].shape, axes_of(a.node));
    const DType t = a.node.type.dtype;
    const std::string T = c_type(t);
    r.emit(a.w, "    " + T + " m = -" + (t == f32 ? "INFINITY" : "(double)INFINITY") + ";\n    double shift, s = 0;\n" +
           r.pass(read_x(a), "if ((x > m) | (x != x)) m = x;") + "    shift = isinf(m) ? 0.0 : (double)m;\n" +
           r.pass(read_x(a), "s += exp((double)x - shift);", "+:s") + "    " + a.out + "[o] = (" + T + ")(shift + log(s));\n");
  });
}

}  // namespace

CFold c_fold_parts(Fold fold, DType t, std::int64_t n_red) {
  const std::string T = c_type(t);
  const bool integer = t == DType::i64;
  CFold f;
  if (fold == Fold::sum || fold == Fold::mean || fold == Fold::prod) {
    const bool sum = fold != Fold::prod;
    f.acc_type = integer ? "uint64_t" : "double";
    f.init = sum ? "0" : "1";
    f.step = integer ? (sum ? "acc += (uint64_t)x;" : "acc *= (uint64_t)x;") : (sum ? "acc += (double)x;" : "acc *= (double)x;");
    f.fin = fold == Fold::mean ? "(" + T + ")(acc / " + c_lit(static_cast<double>(n_red), f64) + ")" : "(" + T + ")acc";
    f.simd = sum ? "+:acc" : "*:acc";
  } else {
    MG_ASSERT(fold == Fold::max || fold == Fold::min, "c_fold_parts: not a plain fold");
    const bool max = fold == Fold::max;
    f.acc_type = T;
    f.init = integer ? (max ? "INT64_MIN" : "INT64_MAX") : (max ? "-" : "") + std::string(t == f32 ? "INFINITY" : "(double)INFINITY");
    f.step = std::string("if ((x ") + (max ? ">" : "<") + " acc) | (x != x)) acc = x;";
    f.fin = "acc";
  }
  return f;
}

void register_reduce_ops() {
  def_reduce("reduce_sum",
             "sum over `axes`; 0 over a size-0 extent; f32 accumulates in f64; i64 wraps on overflow",
             Dtypes::numeric, fold_kernel<SumOp, true>(), [](const VjpArgs& a) {
               if (!is_float(a.in[0].dtype())) return std::vector<Value>{Value{}};
               return grads({expand(a.cotangent, a)});
             });
  defined_op("reduce_sum").emit_c = c_fold();
  defined_op("reduce_sum").fold = Fold::sum;

  def_reduce("reduce_mean", "arithmetic mean over `axes`; nan over a size-0 extent; f32 accumulates in f64",
             Dtypes::floats, fold_kernel<SumOp, false>([](double s, double n) { return s / n; }),
             [](const VjpArgs& a) {
               double n = reduced_count(a.in[0].shape(), axes_of(a.node));
               return grads({scale(expand(a.cotangent, a), 1.0 / n)});
             });
  defined_op("reduce_mean").emit_c = c_fold();
  defined_op("reduce_mean").fold = Fold::mean;

  def_reduce("reduce_max",
             "maximum over `axes`; NaN propagates; -inf (i64: INT64_MIN) over a size-0 extent where "
             "PyTorch errors; gradient split evenly among tied maxima (as amax)",
             Dtypes::numeric, fold_kernel<MaxOp, true, false>(), extremum_vjp);
  defined_op("reduce_max").emit_c = c_fold();
  defined_op("reduce_max").fold = Fold::max;

  def_reduce("reduce_min",
             "minimum over `axes`; NaN propagates; +inf (i64: INT64_MAX) over a size-0 extent where "
             "PyTorch errors; gradient split evenly among tied minima (as amin)",
             Dtypes::numeric, fold_kernel<MinOp, true, false>(), extremum_vjp);
  defined_op("reduce_min").emit_c = c_fold();
  defined_op("reduce_min").fold = Fold::min;

  def_reduce("reduce_prod",
             "product over `axes`; 1 over a size-0 extent; i64 wraps on overflow; gradient the "
             "product of the other elements (finite at zeros, as PyTorch; exact to second order)",
             Dtypes::numeric, fold_kernel<ProdOp, true>(), prod_vjp);
  defined_op("reduce_prod").emit_c = c_fold();
  defined_op("reduce_prod").fold = Fold::prod;

  OpDef& var = def_reduce(
      "var",
      "variance over `axes`: sum((x - mean)^2) / max(0, N - correction), N the reduced element "
      "count (torch.var); inf or nan when that divisor is 0; two-pass, f64 accumulation",
      Dtypes::floats, var_kernel, [](const VjpArgs& a) {
        Value x = a.in[0];
        const I64List& axes = axes_of(a.node);
        double n = reduced_count(x.shape(), axes);
        double divisor = std::max(0.0, n - static_cast<double>(a.node.attrs.i64("correction")));
        Value mean = expand(reduce("reduce_mean", x, axes, true), a);
        return grads({mul(expand(a.cotangent, a), scale(sub(x, mean), 2.0 / divisor))});
      });
  defined_op("var").emit_c = c_var();
  var.attrs.push_back({"correction", AttrKind::i64, AttrValue{std::int64_t{1}}});
  {
    const Type m34{DType::f64, {3, 4}}, scalar{DType::f64, {}}, t234{DType::f64, {2, 3, 4}};
    var.test.cases = {
        {{m34}, {{"axes", I64List{1}}, {"keepdim", false}, {"correction", std::int64_t{1}}}},
        {{m34}, {{"axes", I64List{0, 1}}, {"keepdim", true}, {"correction", std::int64_t{0}}}},
        {{scalar}, {{"axes", I64List{}}, {"keepdim", false}, {"correction", std::int64_t{0}}}},
        {{t234}, {{"axes", I64List{0, 2}}, {"keepdim", false}, {"correction", std::int64_t{1}}}},
    };
  }

  def_reduce("logsumexp",
             "log(sum(exp(x))) over `axes`, max-shifted for stability; -inf when all are -inf or over "
             "a size-0 extent, +inf when any is +inf (as PyTorch)",
             Dtypes::floats, logsumexp_kernel, [](const VjpArgs& a) {
               Value x = a.in[0];
               return grads({mul(expand(a.cotangent, a), exp(sub(x, expand(a.out, a))))});
             });
  defined_op("logsumexp").emit_c = c_logsumexp();

  register_softmax_ops();
}

}  // namespace mg::ir
