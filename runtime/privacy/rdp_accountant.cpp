// The RDP accountant of the sampled Gaussian mechanism; see rdp_accountant.hpp. Every
// quantity that can under- or overflow (A_alpha is a sum of terms up to e^(alpha^2/2sigma^2))
// stays in log space: sums by log-add, the alternating tail of the fractional series by
// log-sub, erfc by its logarithm with an asymptotic series where erfc underflows.
#include "minigrad/runtime/privacy/rdp_accountant.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include "minigrad/ir/errors.hpp"

namespace mg::privacy {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
// Both series take at least alpha terms; no analysis needs orders anywhere near this.
constexpr double kMaxOrder = 1e6;

// log|Gamma(x)| without std::lgamma's write to the global signgam (a data race when
// accountants run on several threads).
double log_gamma(double x) {
  int sign = 0;
  return ::lgamma_r(x, &sign);
}

std::string num(double v) {  // the shortest text that reads back as v
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// log(exp(a) + exp(b)).
double log_add(double a, double b) {
  const double lo = std::min(a, b), hi = std::max(a, b);
  if (lo == -kInf) return hi;
  return std::log1p(std::exp(lo - hi)) + hi;
}

// log(exp(a) - exp(b)) for a >= b; the fractional series only subtracts terms smaller
// than the partial sum, so a < b means the arithmetic broke down.
double log_sub(double a, double b, double q, double sigma, double alpha) {
  if (b == -kInf) return a;
  if (a < b)
    throw UserError("RDP accountant: the series for fractional order " + num(alpha) + " lost precision at q = " +
                    num(q) + ", sigma = " + num(sigma) + " (use integer orders there)");
  if (a == b) return -kInf;
  const double d = a - b;
  // log(e^d - 1): expm1 is exact near 0; for large d, d + log1p(-e^-d) cannot overflow.
  return d < 1 ? std::log(std::expm1(d)) + b : a + std::log1p(-std::exp(-d));
}

// log(erfc(x)), accurate where erfc(x) underflows (x > ~26).
double log_erfc(double x) {
  if (x < 20) return std::log(std::erfc(x));
  // erfc(x) = e^(-x^2) / (x sqrt(pi)) * (1 - 1/(2x^2) + 1*3/(2x^2)^2 - 1*3*5/(2x^2)^3 + ...);
  // at x >= 20 the ninth term is below 1e-20 of the first.
  const double t = 1.0 / (2.0 * x * x);
  double term = 1.0, sum = 1.0;
  for (int n = 1; n <= 8; ++n) {
    term *= -(2.0 * n - 1.0) * t;
    sum += term;
  }
  return -x * x - std::log(x) - 0.5 * std::log(M_PI) + std::log(sum);
}

// log A_alpha for integer alpha: A = sum_i C(alpha, i) q^i (1-q)^(alpha-i) e^((i^2 - i)/(2 sigma^2)).
double log_a_int(double q, double sigma, double alpha) {
  const double log_q = std::log(q), log_1mq = std::log1p(-q), two_s2 = 2.0 * sigma * sigma;
  const double lg_a1 = log_gamma(alpha + 1.0);
  double log_a = -kInf;
  for (double i = 0; i <= alpha; i += 1.0) {
    const double log_coef = lg_a1 - log_gamma(i + 1.0) - log_gamma(alpha - i + 1.0);
    log_a = log_add(log_a, log_coef + i * log_q + (alpha - i) * log_1mq + (i * i - i) / two_s2);
  }
  return log_a;
}

// log A_alpha for fractional alpha (MTZ19 §3.3): the integral split at z0 where the two
// Gaussians' densities cross, each half a series in C(alpha, i) (signs alternate once
// i > alpha) times a Gaussian tail; summed past i = alpha until both new terms fall below e^-30.
double log_a_frac(double q, double sigma, double alpha) {
  const double log_q = std::log(q), log_1mq = std::log1p(-q), two_s2 = 2.0 * sigma * sigma;
  const double z0 = sigma * sigma * std::log(1.0 / q - 1.0) + 0.5;
  const double lg_a1 = log_gamma(alpha + 1.0), erfc_scale = std::sqrt(2.0) * sigma, log_half = std::log(0.5);
  double log_a0 = -kInf, log_a1 = -kInf;
  for (std::int64_t k = 0;; ++k) {
    const double i = static_cast<double>(k), j = alpha - i;
    int sign = 1;  // sign of C(alpha, i) = sign of Gamma(alpha - i + 1)
    const double log_coef = lg_a1 - log_gamma(i + 1.0) - ::lgamma_r(j + 1.0, &sign);
    const double log_t0 = log_coef + i * log_q + j * log_1mq;
    const double log_t1 = log_coef + j * log_q + i * log_1mq;
    const double log_e0 = log_half + log_erfc((i - z0) / erfc_scale);
    const double log_e1 = log_half + log_erfc((z0 - j) / erfc_scale);
    const double log_s0 = log_t0 + (i * i - i) / two_s2 + log_e0;
    const double log_s1 = log_t1 + (j * j - j) / two_s2 + log_e1;
    if (sign > 0) {
      log_a0 = log_add(log_a0, log_s0);
      log_a1 = log_add(log_a1, log_s1);
    } else {
      log_a0 = log_sub(log_a0, log_s0, q, sigma, alpha);
      log_a1 = log_sub(log_a1, log_s1, q, sigma, alpha);
    }
    // Opacus and TF Privacy stop at the first i whose terms are below e^-30; at q = 0.5 and
    // alpha = 255.9 that is i = 0 (q^alpha ~ 2^-256), before the bulk of the sum, and log A
    // comes out -174 (a negative RDP). The terms only decrease for certain once i > alpha
    // (the binomial's alternating tail), so we sum at least that far.
    if (i > alpha && std::max(log_s0, log_s1) < -30) break;
    if (!(log_s0 == log_s0 && log_s1 == log_s1) || k > 100'000'000)
      throw UserError("RDP accountant: the series for order " + num(alpha) + " does not converge at q = " +
                      num(q) + ", sigma = " + num(sigma));
  }
  return log_add(log_a0, log_a1);
}

void check_order(double a) {
  if (!(a > 1)) throw UserError("RDP order must be > 1, got " + num(a));
  if (a > kMaxOrder && !std::isinf(a))
    throw UserError("RDP order " + num(a) + " is above the supported " + num(kMaxOrder) + " (or use inf)");
}

void check_orders(std::span<const double> orders) {
  for (double a : orders) check_order(a);
}

std::span<const double> or_default(std::span<const double> orders) {
  return orders.empty() ? std::span<const double>(default_orders()) : orders;
}

}  // namespace

const std::vector<double>& default_orders() {
  static const std::vector<double> orders = [] {
    std::vector<double> o;
    for (int x = 1; x < 100; ++x) o.push_back(1.0 + x / 10.0);  // the doubles Python computes
    for (int a = 12; a < 64; ++a) o.push_back(a);
    return o;
  }();
  return orders;
}

double sampled_gaussian_rdp(double q, double sigma, double alpha) {
  if (!(q >= 0 && q <= 1)) throw UserError("sampling rate q must be in [0, 1], got " + num(q));
  if (!(sigma > 0) || !std::isfinite(sigma))
    throw UserError("noise multiplier sigma must be positive and finite, got " + num(sigma));
  check_order(alpha);
  if (q == 0) return 0;
  if (q == 1) return alpha / (2 * sigma * sigma);  // the Gaussian mechanism itself
  if (std::isinf(alpha)) return kInf;
  const double log_a = alpha == std::floor(alpha) ? log_a_int(q, sigma, alpha) : log_a_frac(q, sigma, alpha);
  // A_alpha >= 1 (Jensen: E[(mu/mu0)^alpha] >= E[mu/mu0]^alpha = 1); where the true RDP is
  // ~1e-22 (q ~ 1e-9, sigma ~ 170) rounding can leave log A at -1e-23.
  return std::max(0.0, log_a) / (alpha - 1);
}

std::vector<double> compute_rdp(double q, double sigma, std::int64_t steps, std::span<const double> orders) {
  if (steps < 0) throw UserError("the number of steps must be >= 0, got " + std::to_string(steps));
  check_orders(orders);
  std::vector<double> rdp;
  rdp.reserve(orders.size());
  for (double a : orders) {
    const double r = sampled_gaussian_rdp(q, sigma, a);
    rdp.push_back(steps == 0 ? 0.0 : r * static_cast<double>(steps));
  }
  return rdp;
}

Conversion parse_conversion(const std::string& name) {
  if (name == "balle") return Conversion::balle;
  if (name == "classic") return Conversion::classic;
  throw UserError("unknown RDP-to-DP conversion '" + name + "' (expected balle or classic)");
}

const char* to_string(Conversion c) { return c == Conversion::balle ? "balle" : "classic"; }

PrivacySpent privacy_spent(std::span<const double> orders, std::span<const double> rdp, double delta,
                           Conversion conversion) {
  if (!(delta > 0 && delta < 1)) throw UserError("delta must be in (0, 1), got " + num(delta));
  if (orders.size() != rdp.size())
    throw UserError("privacy_spent: " + std::to_string(orders.size()) + " orders but " +
                    std::to_string(rdp.size()) + " RDP values");
  if (orders.empty()) throw UserError("privacy_spent: no RDP orders");
  check_orders(orders);
  const double log_delta = std::log(delta);
  PrivacySpent best{kInf, std::numeric_limits<double>::quiet_NaN(), false};
  std::size_t best_i = 0;
  bool found = false;
  for (std::size_t i = 0; i < orders.size(); ++i) {
    const double a = orders[i], r = rdp[i];
    if (r < 0) throw UserError("privacy_spent: negative RDP value " + num(r) + " at order " + num(a));
    double eps;
    if (std::isinf(a)) eps = r;  // both conversions tend to rdp as alpha -> inf
    else if (conversion == Conversion::balle)
      eps = r - (log_delta + std::log(a)) / (a - 1) + std::log((a - 1) / a);
    else eps = r - log_delta / (a - 1);
    if (std::isnan(eps)) continue;
    if (!found || eps < best.epsilon) {  // the first order attaining the minimum, as np.nanargmin
      best.epsilon = eps;
      best.order = a;
      best_i = i;
      found = true;
    }
  }
  if (found) {
    best.epsilon = std::max(0.0, best.epsilon);  // a negative bound means ε = 0
    best.order_at_edge = orders.size() > 1 && (best_i == 0 || best_i + 1 == orders.size());
  }
  return best;
}

PrivacySpent epsilon(double q, double sigma, std::int64_t steps, double delta, Conversion conversion,
                     std::span<const double> orders) {
  orders = or_default(orders);
  const std::vector<double> rdp = compute_rdp(q, sigma, steps, orders);
  return privacy_spent(orders, rdp, delta, conversion);
}

void RdpAccountant::step(double sigma, double q, std::int64_t count) {
  if (count < 0) throw UserError("RdpAccountant::step: count must be >= 0, got " + std::to_string(count));
  (void)sampled_gaussian_rdp(q, sigma, 2.0);  // validates q and sigma now, not at the first query
  if (!history_.empty() && history_.back().sigma == sigma && history_.back().q == q) history_.back().steps += count;
  else history_.push_back({sigma, q, count});
}

std::int64_t RdpAccountant::total_steps() const {
  std::int64_t n = 0;
  for (const Entry& e : history_) n += e.steps;
  return n;
}

std::vector<double> RdpAccountant::rdp(std::span<const double> orders) const {
  orders = or_default(orders);
  std::vector<double> total(orders.size(), 0.0);
  for (const Entry& e : history_) {
    const std::vector<double> r = compute_rdp(e.q, e.sigma, e.steps, orders);
    for (std::size_t i = 0; i < r.size(); ++i) total[i] += r[i];
  }
  return total;
}

PrivacySpent RdpAccountant::privacy_spent(double delta, Conversion conversion, std::span<const double> orders) const {
  orders = or_default(orders);
  const std::vector<double> r = rdp(orders);
  return mg::privacy::privacy_spent(orders, r, delta, conversion);
}

NoiseSearch noise_multiplier(double target_epsilon, double q, std::int64_t steps, double delta, Conversion conversion,
                             double epsilon_tolerance, std::span<const double> orders) {
  if (!(target_epsilon > 0) || !std::isfinite(target_epsilon))
    throw UserError("target epsilon must be positive and finite, got " + num(target_epsilon));
  if (!(q > 0 && q <= 1)) throw UserError("sampling rate q must be in (0, 1], got " + num(q));
  if (steps < 1) throw UserError("the number of steps must be >= 1, got " + std::to_string(steps));
  if (!(delta > 0 && delta < 1)) throw UserError("delta must be in (0, 1), got " + num(delta));
  if (!(epsilon_tolerance > 0) || !std::isfinite(epsilon_tolerance))
    throw UserError("epsilon tolerance must be positive, got " + num(epsilon_tolerance));
  orders = or_default(orders);
  check_orders(orders);
  constexpr double kMaxSigma = 1e6;  // Opacus's MAX_SIGMA
  NoiseSearch out;
  auto eps_at = [&](double sigma) {
    ++out.evaluations;
    return epsilon(q, sigma, steps, delta, conversion, orders);
  };
  double sigma_low = 0, sigma_high = 10;
  PrivacySpent high{kInf, 0, false};
  while (high.epsilon > target_epsilon) {
    sigma_high *= 2;
    high = eps_at(sigma_high);
    if (sigma_high > kMaxSigma && high.epsilon > target_epsilon)
      throw UserError("no noise multiplier up to " + num(kMaxSigma) + " reaches epsilon " + num(target_epsilon) +
                      " at q = " + num(q) + ", " + std::to_string(steps) + " steps, delta = " + num(delta) +
                      ": the privacy budget is too small");
  }
  while (target_epsilon - high.epsilon > epsilon_tolerance) {
    const double sigma = 0.5 * (sigma_low + sigma_high);
    if (!(sigma > sigma_low && sigma < sigma_high)) break;  // the interval cannot shrink further
    const PrivacySpent mid = eps_at(sigma);
    if (mid.epsilon < target_epsilon) {
      sigma_high = sigma;
      high = mid;
    } else {
      sigma_low = sigma;
    }
  }
  out.sigma = sigma_high;
  out.epsilon = high.epsilon;
  out.order = high.order;
  return out;
}

}  // namespace mg::privacy
