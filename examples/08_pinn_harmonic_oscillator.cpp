// Example 08: a physics-informed neural network. u(t) is a tanh MLP (1-32-32-1) trained
// so that it satisfies the damped harmonic oscillator u'' + 2 zeta omega u' + omega^2 u = 0
// on [0, T] with u(0) = x0, u'(0) = v0 — no solution data, only the equation. u' and u''
// are grad and grad of grad of the network with respect to its input, built inside the
// ONE compiled training step (forward, the two input derivatives, the parameter gradient
// of all of it — third-order adjoints — and Adam), which the pass pipeline (rewrite, fold,
// CSE, fusion, DCE) shrinks before it runs. Checked against the analytic solution:
// relative L2 error below 1e-2 on a test grid, or the example exits 1.
//   08_pinn_harmonic_oscillator [--steps N] [--seed S]
#include <cmath>
#include <cstdio>
#include <random>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

#include "examples/main_guard.hpp"
#include "examples/progress.hpp"

struct Pinn {
  mg::nn::Linear fc1{1, 32, true, mg::f64}, fc2{32, 32, true, mg::f64}, fc3{32, 1, true, mg::f64};
  mg::Tensor operator()(const mg::Tensor& t) const { return fc3(mg::tanh(fc2(mg::tanh(fc1(t))))); }
};
BOOST_HANA_ADAPT_STRUCT(Pinn, fc1, fc2, fc3);

namespace {

// The problem: underdamped (zeta < 1), a little over one period on [0, T].
constexpr double kOmega = 2.0, kZeta = 0.15, kX0 = 1.0, kV0 = 0.0, kT = 4.0;
constexpr std::int64_t kBatch = 256, kTest = 1001;

double exact(double t) {
  const double wd = kOmega * std::sqrt(1 - kZeta * kZeta);
  const double b = (kV0 + kZeta * kOmega * kX0) / wd;
  return std::exp(-kZeta * kOmega * t) * (kX0 * std::cos(wd * t) + b * std::sin(wd * t));
}

}  // namespace

int main(int argc, char** argv) try {
  using namespace mg;
  examples::Args args(argc, argv, {{"steps", "5000"}, {"seed", "0"}});
  const std::int64_t steps = args.integer("steps");
  Pinn model;
  Graph g;
  nn::bind(model, g, static_cast<std::uint64_t>(args.integer("seed")));

  // Collocation points (fresh each step) and the initial time.
  Tensor t = g.input("t", f64, {kBatch, 1});
  Tensor t0 = g.input("t0", f64, {1, 1});
  Tensor u = model(t);
  // Each u[i] depends on t[i] alone, so d(sum u)/dt is u'(t[i]) per point.
  Tensor du = grad(u.sum(), {t})[0];
  Tensor ddu = grad(du.sum(), {t})[0];  // grad of grad
  Tensor residual = ddu + 2 * kZeta * kOmega * du + kOmega * kOmega * u;
  Tensor u0 = model(t0);
  Tensor du0 = grad(u0.sum(), {t0})[0];
  // The residual is scaled by 1/omega^2 so the three terms have similar magnitudes.
  Tensor loss = square(residual / (kOmega * kOmega)).mean() + square(u0 - kX0).sum() + square(du0 - kV0).sum();

  auto step = nn::compile_train(g, loss, model, nn::Adam{.lr = 1e-2},
                                {.schedule = nn::cosine_lr(steps, 1e-4), .passes = "rewrite,fold,cse,fuse,dce"});
  std::printf("== one training step: forward, u' and u'' (grad of grad w.r.t. t), their parameter gradient, Adam\n");
  std::printf("%s", passes::format_stats(step.pass_stats()).c_str());
  const auto& st = step.pass_stats();
  std::printf("nodes: %zu built -> %zu after the pipeline\n\n", st.front().nodes_before, st.back().nodes_after);

  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> jitter(0.0, 1.0);
  Array T = Array::zeros(Type{f64, {kBatch, 1}}), T0 = Array::zeros(Type{f64, {1, 1}});
  examples::Progress bar("PINN", steps, kBatch);
  double l = 0;
  for (std::int64_t s = 0; s < steps; ++s) {
    for (std::int64_t i = 0; i < kBatch; ++i)  // stratified: one point per cell of [0, T]
      T.set(i, kT * (static_cast<double>(i) + jitter(rng)) / kBatch);
    l = step.run({{"t", T}, {"t0", T0}});
    bar.tick(l);
  }
  bar.done();

  // Evaluate on a test grid the training never saw exactly.
  Graph eval_g;
  nn::bind(model, eval_g);
  Tensor tt = eval_g.input("t", f64, {kTest, 1});
  Array TT = Array::zeros(Type{f64, {kTest, 1}});
  for (std::int64_t i = 0; i < kTest; ++i) TT.set(i, kT * static_cast<double>(i) / (kTest - 1));
  Array U = nn::compile_with_parameters(eval_g, {model(tt)}, model).run({{"t", TT}})[0];
  double num = 0, den = 0;
  for (std::int64_t i = 0; i < kTest; ++i) {
    double e = exact(TT.at(i));
    num += (U.at(i) - e) * (U.at(i) - e);
    den += e * e;
  }
  const double rel = std::sqrt(num / den);
  std::printf("\n%8s %12s %12s\n", "t", "PINN u(t)", "exact");
  for (std::int64_t i = 0; i < kTest; i += (kTest - 1) / 8)
    std::printf("%8.3f %12.6f %12.6f\n", TT.at(i), U.at(i), exact(TT.at(i)));
  std::printf("final loss %.3e; relative L2 error on %lld test points: %.3e (%s 1e-2)\n", l,
              static_cast<long long>(kTest), rel, rel < 1e-2 ? "below" : "NOT below");
  return rel < 1e-2 ? 0 : 1;
} MG_EXAMPLE_CATCH
