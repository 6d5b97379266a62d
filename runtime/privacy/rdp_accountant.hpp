// Privacy accounting for DP-SGD: the Rényi-DP (RDP) accountant of the sampled Gaussian
// mechanism (Mironov, Talwar, Zhang 2019, "Rényi Differential Privacy of the Sampled
// Gaussian Mechanism"), composition over steps, the conversion of RDP to (ε, δ)-DP and its
// inverse (the noise multiplier for a target ε). Pure double arithmetic in log space; the
// numbers match Opacus's RDPAccountant and TF Privacy's rdp_accountant (tests/privacy/).
// Depends on nothing but the standard library and mg::UserError (no tensors, no graphs).
#pragma once
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace mg::privacy {

// Opacus's default orders (RDPAccountant.DEFAULT_ALPHAS), the same doubles as Python's
// [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)): 1.1, 1.2, ..., 10.9, 12, ..., 63.
const std::vector<double>& default_orders();

// RDP at order `alpha` of ONE step of the sampled Gaussian mechanism: each example is
// included independently with probability `q` (Poisson sampling), the sum of the clipped
// contributions (L2 sensitivity 1) gets N(0, sigma^2) noise. Integer orders use the exact
// binomial sum (MTZ19 §3.3), fractional ones the two-sided erfc series; both in log space.
// q = 0 gives 0, q = 1 the Gaussian mechanism alpha / (2 sigma^2), alpha = inf gives inf.
// UserError unless 0 <= q <= 1, sigma > 0 and alpha > 1 (all finite except alpha).
double sampled_gaussian_rdp(double q, double sigma, double alpha);

// RDP of `steps` compositions (RDP adds up over steps), one value per order.
std::vector<double> compute_rdp(double q, double sigma, std::int64_t steps, std::span<const double> orders);

// How RDP becomes (ε, δ)-DP, minimised over the orders:
//   balle:   ε = rdp - (log δ + log α)/(α - 1) + log((α - 1)/α)   (Balle et al. 2020,
//            Theorem 21; current Opacus `get_privacy_spent`, TF Privacy / dp_accounting)
//   classic: ε = rdp - log δ/(α - 1)                               (Mironov 2017, Prop. 3;
//            the conversion of TF Privacy's tutorial table and original rdp_accountant)
enum class Conversion { balle, classic };
Conversion parse_conversion(const std::string& name);  // "balle" | "classic", else UserError
const char* to_string(Conversion c);

struct PrivacySpent {
  double epsilon = 0;  // >= 0; inf when every order gives inf (no privacy)
  double order = 0;    // the order that gave it (NaN when epsilon is inf everywhere)
  bool order_at_edge = false;  // the best order is the smallest or the largest given:
                               // a wider grid may give a smaller ε (Opacus warns likewise)
};

// ε for `delta` from RDP values at `orders` (same length, orders > 1). The first order
// attaining the minimum is reported. UserError unless 0 < delta < 1 and lengths match.
PrivacySpent privacy_spent(std::span<const double> orders, std::span<const double> rdp, double delta,
                           Conversion conversion = Conversion::balle);

// Shorthand: ε after `steps` steps at (q, sigma); default orders unless given.
PrivacySpent epsilon(double q, double sigma, std::int64_t steps, double delta,
                     Conversion conversion = Conversion::balle, std::span<const double> orders = {});

// Tracks a training run: one entry per (sigma, q) with a step count, as Opacus's
// RDPAccountant.history. Steps with a changed sigma or q compose like any others.
class RdpAccountant {
 public:
  struct Entry {
    double sigma, q;
    std::int64_t steps;
  };
  void step(double sigma, double q, std::int64_t count = 1);  // validates, merges with the last entry
  const std::vector<Entry>& history() const { return history_; }
  std::int64_t total_steps() const;
  std::vector<double> rdp(std::span<const double> orders) const;  // summed over the history
  PrivacySpent privacy_spent(double delta, Conversion conversion = Conversion::balle,
                             std::span<const double> orders = {}) const;

 private:
  std::vector<Entry> history_;
};

// The inverse: the smallest noise multiplier (to the tolerance) whose ε after `steps`
// steps at rate `q` is at most `target_epsilon`, found as Opacus's get_noise_multiplier
// does: start at sigma_high = 20 and double while ε(sigma_high) > target (UserError past
// sigma 1e6: "the budget is too small"), then bisect [sigma_low = 0, sigma_high] until
// target - ε(sigma_high) <= epsilon_tolerance. The result is always on the safe side:
// ε(sigma) <= target_epsilon, and target_epsilon - ε(sigma) <= epsilon_tolerance.
// Opacus's default tolerance 0.01 reproduces its numbers; smaller ones give a tighter sigma
// (down to about 1e-12 relative to sigma: bisection stops when the interval stops shrinking).
struct NoiseSearch {
  double sigma = 0;       // the noise multiplier
  double epsilon = 0;     // ε(sigma), <= target
  double order = 0;       // best order at sigma
  int evaluations = 0;    // ε evaluations spent
};
NoiseSearch noise_multiplier(double target_epsilon, double q, std::int64_t steps, double delta,
                             Conversion conversion = Conversion::balle, double epsilon_tolerance = 0.01,
                             std::span<const double> orders = {});

}  // namespace mg::privacy
