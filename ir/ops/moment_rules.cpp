// The registry's `moments` column (passes/moments.hpp): per op, the output's mean and
// variance from the operands' means and variances, built with the IR builder, with the
// rule's kind (exact / approximation / delta). Operands are independent (diagonal moments;
// covariances are dropped). Family defaults first, then the table; elementwise ops without
// an entry get the first-order delta method through their JVP rule.
// Light: no xtensor. Runs after register_transform_rules() (the delta default reads jvp).
#include <cmath>
#include <numbers>

#include "minigrad/ir/builder.hpp"
#include "minigrad/ir/errors.hpp"
#include "minigrad/ir/ops/families.hpp"
#include "minigrad/ir/ops/moment_quadrature.hpp"
#include "minigrad/ir/ops.hpp"

namespace mg::ir {

const char* moment_kind_name(MomentKind k) {
  switch (k) {
    case MomentKind::exact: return "exact";
    case MomentKind::approximation: return "approximation";
    case MomentKind::delta: return "delta";
  }
  return "?";
}

namespace {

using K = MomentKind;

// a + b where invalid means zero (a deterministic value's variance).
Value plus(Value a, Value b) { return !a.valid() ? b : !b.valid() ? a : add(a, b); }
Value var_or_zeros(Value var, Value like) { return var.valid() ? var : zeros_like(like); }
Value same_op(const MomentArgs& a, std::vector<Value> in) { return make_op(a.graph, *a.node.op, std::move(in), a.node.attrs); }
std::vector<Value> means(const MomentArgs& a) { return {a.mean.begin(), a.mean.end()}; }

// ---- family defaults ------------------------------------------------------------------

// First-order delta method for elementwise ops: mean f(mu), variance sum_k (df/dx_k)^2 var_k,
// the derivatives from the op's own JVP rule at the means. Good when f is nearly linear over
// a few standard deviations; biased (mean) and under/over-dispersed (variance) otherwise.
MomentFn moments_delta() {
  return [](const MomentArgs& a) {
    const OpDef& d = *a.node.op;
    const Value mean = same_op(a, means(a));
    Value var;
    for (std::size_t k = 0; k < a.mean.size(); ++k) {
      if (!a.var[k].valid()) continue;
      std::vector<Value> tangents(a.mean.size());
      tangents[k] = full_like(a.mean[k], 1.0);
      const Value dk = d.jvp(JvpArgs{mean.node(), mean, a.mean, tangents, nullptr});
      if (dk.valid()) var = plus(var, mul(square(dk), cast(a.var[k], dk.dtype())));  // cast: f64 -> f32
    }
    return Moments{mean, var_or_zeros(var, mean), K::delta};
  };
}

// Ops whose every output element is one input element or a plain sum of some (data
// movement, reduce_sum, concat, gather, index_add): the op applied to the means and to the
// variances (integer operands, indices, as they are). Exact for independent elements. A
// broadcast's copies are perfectly correlated: their marginals are exact, but a later sum
// over them (independence assumed) is not; this is the diagonal assumption's limit.
MomentFn moments_sum_of_vars() {
  return [](const MomentArgs& a) {
    std::vector<Value> vars;
    for (std::size_t k = 0; k < a.mean.size(); ++k)
      vars.push_back(is_float(a.mean[k].dtype()) ? var_or_zeros(a.var[k], a.mean[k]) : a.mean[k]);
    return Moments{same_op(a, means(a)), same_op(a, std::move(vars)), K::exact};
  };
}

// Smooth activations (sigmoid, tanh, softplus, gelu, silu): E[f(X)] and Var[f(X)] for
// X ~ N(mu, var) by n-point Gauss-Hermite quadrature (Abramowitz & Stegun 25.4.46): exact
// for polynomials of degree < 2n; for these bounded-slope functions the error is far below
// Monte Carlo noise at 1e5 samples for var up to ~10 (tests/frontier/pramana). Preferred to
// the probit approximation of sigmoid (MacKay 1992: E ~ sigmoid(mu / sqrt(1 + pi var / 8)),
// off by up to ~0.02). The variance is the centred sum, so it does not cancel for small var.
// Assumes a Gaussian operand: after other nonlinearities it is itself an approximation.
MomentFn moments_gauss_hermite(int points = 32) {
  return [points](const MomentArgs& a) {
    if (!a.var[0].valid()) return Moments{same_op(a, means(a)), zeros_like(a.mean[0]), K::exact};
    const Value m = a.mean[0], v = a.var[0];
    const GaussHermite& gh = gauss_hermite(points);
    Shape s = m.shape(), wide = s;
    wide.push_back(points);
    const std::int64_t r = m.rank();
    Shape point_shape(s.size(), 1);
    point_shape.push_back(points);
    auto constant = [&](const std::vector<double>& xs) {
      Value c = cast(a.graph.add_constant(Array::from_vector<double>({points}, xs)), m.dtype());
      return broadcast_to(reshape(c, point_shape), wide);
    };
    const Value t = constant(gh.nodes);
    std::vector<double> w;  // weights / sqrt(pi): a probability measure
    for (double wi : gh.weights) w.push_back(wi / std::sqrt(std::numbers::pi));
    const Value weight = constant(w);
    const Value mu = broadcast_to(unsqueeze(m, {r}), wide);
    const Value sd = broadcast_to(unsqueeze(sqrt(scale(v, 2.0)), {r}), wide);
    const Value y = same_op(a, {add(mu, mul(sd, t))});
    const Value mean = reduce_sum(mul(y, weight), {r}, false);
    const Value dev = sub(y, broadcast_to(unsqueeze(mean, {r}), wide));
    const Value var = reduce_sum(mul(square(dev), weight), {r}, false);
    return Moments{mean, var, K::approximation};
  };
}

// ---- rules ------------------------------------------------------------------------------

Moments add_sub(const MomentArgs& a) { return {same_op(a, means(a)), plus(a.var[0], a.var[1]), K::exact}; }

// Independent factors: Var[ab] = va vb + va mb^2 + vb ma^2 (exact for any distributions).
Moments mul_rule(const MomentArgs& a) {
  const Value ma = a.mean[0], mb = a.mean[1], va = a.var[0], vb = a.var[1];
  Value var;
  if (va.valid()) var = plus(var, mul(va, square(mb)));
  if (vb.valid()) var = plus(var, mul(vb, square(ma)));
  if (va.valid() && vb.valid()) var = plus(var, mul(va, vb));
  return {mul(ma, mb), var, K::exact};
}

// Division by a deterministic value is linear (exact); a random divisor: delta method.
Moments div_rule(const MomentArgs& a) {
  if (a.var[1].valid()) return moments_delta()(a);
  return {div(a.mean[0], a.mean[1]), div(a.var[0], square(a.mean[1])), K::exact};
}

// Gaussian X: E[X^2] = mu^2 + var, Var[X^2] = 4 mu^2 var + 2 var^2.
Moments square_rule(const MomentArgs& a) {
  const Value m = a.mean[0], v = a.var[0];
  return {add(square(m), v), add(scale(mul(square(m), v), 4.0), scale(square(v), 2.0)), K::exact};
}

// Gaussian X (log-normal e^X): mean e^(mu + var/2), variance (e^var - 1) e^(2 mu + var).
Moments exp_rule(const MomentArgs& a) {
  const Value m = a.mean[0], v = a.var[0];
  return {exp(add(m, scale(v, 0.5))), mul(unary("expm1", v), exp(add(scale(m, 2.0), v))), K::exact};
}

// Rectified Gaussian, X ~ N(mu, s^2), alpha = mu / s, Phi/phi the standard normal cdf/pdf:
//   E[relu X] = mu Phi + s phi,
//   Var       = mu^2 Phi (1 - Phi) + s^2 Phi + mu s phi (1 - 2 Phi) - s^2 phi^2
// (E[X^2; X > 0] = (mu^2 + s^2) Phi + mu s phi, less the squared mean, regrouped so the
// mu^2 terms do not cancel). var == 0 elements: relu(mu), 0.
Moments relu_rule(const MomentArgs& a) {
  const Value m = a.mean[0], v = a.var[0];
  const Value random = binary("gt", v, zeros_like(v));
  const Value s = sqrt(where(random, v, full_like(v, 1.0)));
  const Value e = erf(scale(div(m, s), 1.0 / std::numbers::sqrt2));  // erf(alpha / sqrt 2)
  const Value cdf = scale(add_scalar(e, 1.0), 0.5);
  const Value cdf_c = scale(add_scalar(neg(e), 1.0), 0.5);  // 1 - Phi
  const Value alpha = div(m, s);
  const Value pdf = scale(exp(scale(square(alpha), -0.5)), 1.0 / std::sqrt(2.0 * std::numbers::pi));
  const Value ms = mul(m, s);
  const Value mean = add(mul(m, cdf), mul(s, pdf));
  const Value sv = square(s);
  Value var = mul(mul(square(m), cdf), cdf_c);
  var = add(var, mul(sv, cdf));
  var = add(var, mul(mul(ms, pdf), neg(e)));  // 1 - 2 Phi = -erf(alpha / sqrt 2)
  var = sub(var, mul(sv, square(pdf)));
  var = binary("maximum", var, zeros_like(var));  // rounding far in the tails
  return {where(random, mean, unary("relu", m)), where(random, var, zeros_like(v)), K::exact};
}

// Independent entries: Var[(AB)_ij] = sum_k va mb^2 + ma^2 vb + va vb. Linear(x) with a
// deterministic W: mu' = mu W, var' = var (W o W).
Moments matmul_rule(const MomentArgs& a) {
  const Value ma = a.mean[0], mb = a.mean[1], va = a.var[0], vb = a.var[1];
  Value var;
  if (va.valid()) var = plus(var, matmul(va, square(mb)));
  if (vb.valid()) var = plus(var, matmul(square(ma), vb));
  if (va.valid() && vb.valid()) var = plus(var, matmul(va, vb));
  return {matmul(ma, mb), var, K::exact};
}

// Mean of N independent elements: variance sum(var) / N^2 = mean(var) / N.
Moments reduce_mean_rule(const MomentArgs& a) {
  const double n = static_cast<double>(a.mean[0].type().numel()) /
                   static_cast<double>(std::max<std::int64_t>(a.node.type.numel(), 1));
  return {same_op(a, means(a)), scale(same_op(a, {var_or_zeros(a.var[0], a.mean[0])}), 1.0 / n), K::exact};
}

Moments identity_rule(const MomentArgs& a) { return {a.mean[0], a.var[0], K::exact}; }

// Noise sources: random ops, whatever their operands (a step counter).
Moments dropout_rule(const MomentArgs& a) {
  const double p = a.node.attrs.f64("p");  // inverted dropout: 1/(1-p) w.p. 1-p, else 0
  const double mean = p < 1 ? 1.0 : 0.0, var = p < 1 ? p / (1.0 - p) : 0.0;
  return {full(a.graph, a.node.type, mean), full(a.graph, a.node.type, var), K::exact};
}
Moments normal_rule(const MomentArgs& a) {
  const double sd = a.node.attrs.f64("std");
  return {full(a.graph, a.node.type, a.node.attrs.f64("mean")), full(a.graph, a.node.type, sd * sd), K::exact};
}
Moments uniform_rule(const MomentArgs& a) {
  const double lo = a.node.attrs.f64("low"), hi = a.node.attrs.f64("high");
  return {full(a.graph, a.node.type, (lo + hi) / 2), full(a.graph, a.node.type, (hi - lo) * (hi - lo) / 12), K::exact};
}

}  // namespace

void register_moment_rules() {
  auto set = [](std::string_view name, MomentFn f) { defined_op(name).moments = std::move(f); };
  for (const char* n : {"add", "sub"}) set(n, add_sub);
  set("neg", [](const MomentArgs& a) { return Moments{neg(a.mean[0]), a.var[0], K::exact}; });
  set("mul", mul_rule);
  set("div", div_rule);
  set("square", square_rule);
  set("exp", exp_rule);
  set("relu", relu_rule);
  set("stop_gradient", identity_rule);
  for (const char* n : {"sigmoid", "tanh", "softplus", "gelu", "silu"}) set(n, moments_gauss_hermite());
  set("matmul", matmul_rule);
  set("reduce_mean", reduce_mean_rule);
  for (const char* n : {"reduce_sum", "reshape", "permute", "broadcast_to", "squeeze", "unsqueeze", "slice", "flip",
                        "concat", "gather", "index_select", "index_add", "scatter_add"})
    set(n, moments_sum_of_vars());
  set("dropout_mask", dropout_rule);
  for (const char* n : {"random_normal", "random_normal_step"}) set(n, normal_rule);
  set("random_uniform", uniform_rule);
  // Every other elementwise op with a float result and a JVP rule: the delta method.
  for (OpDef* d : defined_ops())
    if (!d->moments && d->traits.elementwise && d->jvp && !d->traits.random) d->moments = moments_delta();
}

}  // namespace mg::ir
