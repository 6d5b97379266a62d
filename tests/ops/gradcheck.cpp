// Gradient checking; see gradcheck.hpp.
#include "tests/ops/gradcheck.hpp"

#include <cmath>
#include <random>
#include <sstream>

#include "minigrad/ir/ops.hpp"
#include "minigrad/passes/grad.hpp"
#include "minigrad/runtime/interpreter.hpp"

namespace mg::testing {

Array sample(const Type& type, ir::Domain domain, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uni(0.0, 1.0);
  Array a(type);
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    double v = 0;
    switch (domain) {
      case ir::Domain::any: v = normal(rng); break;
      case ir::Domain::positive: v = 0.5 + 1.5 * uni(rng); break;
      case ir::Domain::unit: v = -0.9 + 1.8 * uni(rng); break;
      case ir::Domain::nonzero: v = (0.3 + 1.7 * uni(rng)) * (uni(rng) < 0.5 ? -1 : 1); break;
    }
    a.set(i, v);
  }
  return a;
}

namespace {

rt::Bindings bindings_of(const std::vector<ir::Value>& inputs, const std::vector<Array>& values) {
  rt::Bindings b;
  for (std::size_t i = 0; i < inputs.size(); ++i) b[inputs[i].node().name] = values[i];
  return b;
}

// Central differences of the scalar `f` w.r.t. every element of the float inputs,
// compared with `analytic` (one array per input, invalid for non-float ones).
void compare(const rt::Executable& f, const std::vector<ir::Value>& inputs, std::vector<Array> values,
             const std::vector<Array>& analytic, double tol, const char* what, GradCheckResult& r) {
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    if (!is_float(inputs[k].dtype())) continue;
    for (std::int64_t i = 0; i < values[k].numel(); ++i) {
      Array saved = values[k];
      values[k] = saved.clone();
      const double x = saved.at(i);
      const double h = 1e-5 * std::max(1.0, std::fabs(x));
      values[k].set(i, x + h);
      const double fp = f.run(bindings_of(inputs, values))[0].at(0);
      values[k].set(i, x - h);
      const double fm = f.run(bindings_of(inputs, values))[0].at(0);
      values[k] = saved;
      const double numeric = (fp - fm) / (2 * h);
      const double a = analytic[k].at(i);
      const double err = std::fabs(a - numeric) / (1 + std::fabs(numeric));
      r.worst = std::max(r.worst, err);
      if (!(err <= tol)) {  // also catches nan
        r.ok = false;
        std::ostringstream os;
        os << what << ": input '" << inputs[k].node().name << "'[" << i << "] analytic " << a
           << " numeric " << numeric << " (rel err " << err << ")\n";
        r.report += os.str();
      }
    }
  }
}

}  // namespace

GradCheckResult check_gradients(ir::Value out, const std::vector<ir::Value>& inputs,
                                const std::vector<Array>& values, int order, double tol,
                                std::uint64_t seed) {
  GradCheckResult r;
  ir::Graph& g = *out.graph;
  std::vector<ir::Value> wrt;
  for (auto& in : inputs)
    if (is_float(in.dtype())) wrt.push_back(in);
  // L = <out, u> with a fixed random u makes any output shape a scalar.
  ir::Value u = g.add_constant(sample(out.type(), ir::Domain::any, seed ^ 0x9e3779b97f4a7c15ULL));
  I64List all(static_cast<std::size_t>(out.rank()));
  for (int i = 0; i < out.rank(); ++i) all[i] = i;
  ir::Value loss = ir::reduce_sum(ir::mul(out, u), all, false);
  std::vector<ir::Value> grads = passes::grad(loss, wrt);

  auto analytic_for = [&](const std::vector<ir::Value>& outs) {
    auto vals = rt::compile(std::span<const ir::Value>(outs)).run(bindings_of(inputs, values));
    std::vector<Array> per_input;
    std::size_t j = 0;
    for (auto& in : inputs) per_input.push_back(is_float(in.dtype()) ? vals[j++] : Array());
    return per_input;
  };
  std::vector<ir::Value> loss_v{loss};
  compare(rt::compile(std::span<const ir::Value>(loss_v)), inputs, values, analytic_for(grads), tol,
          "first order", r);
  if (order < 2) return r;

  // G = sum_k <grad_k, v_k>; its gradient is the Hessian-vector product H v.
  ir::Value G;
  for (std::size_t k = 0; k < wrt.size(); ++k) {
    ir::Value v = g.add_constant(sample(wrt[k].type(), ir::Domain::any, seed + 17 + k));
    I64List axes(static_cast<std::size_t>(wrt[k].rank()));
    for (int i = 0; i < wrt[k].rank(); ++i) axes[i] = i;
    ir::Value term = ir::reduce_sum(ir::mul(grads[k], v), axes, false);
    G = G.valid() ? ir::add(G, term) : term;
  }
  std::vector<ir::Value> hv = passes::grad(G, wrt);
  std::vector<ir::Value> G_v{G};
  compare(rt::compile(std::span<const ir::Value>(G_v)), inputs, values, analytic_for(hv), tol,
          "second order (Hessian-vector)", r);
  return r;
}

}  // namespace mg::testing
