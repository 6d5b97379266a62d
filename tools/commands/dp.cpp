// `minigrad dp-epsilon` and `minigrad dp-sigma`: the RDP accountant of DP-SGD from the
// command line (like TF Privacy's compute_dp_sgd_privacy and Opacus's get_noise_multiplier).
// Values print with 17 significant digits, so they round-trip to the same double.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "minigrad/runtime/privacy/rdp_accountant.hpp"
#include "tools/cli.hpp"

namespace mg::tools {

namespace {

std::string g17(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

// The shortest text that reads back as `v` (3.9, not 3.8999999999999999): for orders and echoes.
std::string shortest(double v) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

// Options both commands take: the rate, the length (steps or epochs), delta, conversion, orders.
void add_common_options(po::options_description& o) {
  o.add_options()
      ("q", po::value<double>(), "sampling rate: each example is in a batch with probability Q, in (0, 1]")
      ("steps", po::value<std::int64_t>(), "number of training steps N (or --epochs)")
      ("epochs", po::value<double>(), "epochs E instead of --steps: N = floor(E / Q), as Opacus")
      ("delta", po::value<double>(), "target delta, in (0, 1); usually below 1 / dataset size")
      ("conversion", po::value<std::string>()->default_value("balle"),
       "RDP to (eps, delta): balle (Balle et al. 2020, current Opacus) or classic (eps = rdp - log(delta)/(alpha - 1))")
      ("orders", po::value<std::string>(), "comma-separated RDP orders > 1 (default: Opacus's 1.1, 1.2, ..., 10.9, 12, ..., 63)");
}

// Required options are checked here, not by Program_options, so --help works without them.
double finite_option(const po::variables_map& vm, const char* name) {
  if (!vm.count(name)) throw UsageError(std::string("missing --") + name);
  const double v = vm[name].as<double>();
  if (!std::isfinite(v)) throw UsageError(std::string("--") + name + " must be a finite number, got " + shortest(v));
  return v;
}

struct Common {
  double q = 0, delta = 0;
  std::int64_t steps = 0;
  privacy::Conversion conversion = privacy::Conversion::balle;
  std::vector<double> orders;  // empty: the default grid
};

Common read_common(const po::variables_map& vm, bool q_may_be_zero) {
  Common c;
  c.q = finite_option(vm, "q");
  if (!(c.q <= 1 && (c.q > 0 || (q_may_be_zero && c.q == 0))))
    throw UsageError(std::string("--q must be in ") + (q_may_be_zero ? "[0, 1]" : "(0, 1]") + ", got " + shortest(c.q));
  c.delta = finite_option(vm, "delta");
  if (!(c.delta > 0 && c.delta < 1)) throw UsageError("--delta must be in (0, 1), got " + shortest(c.delta));
  if (vm.count("steps") == vm.count("epochs")) throw UsageError("give exactly one of --steps and --epochs");
  if (vm.count("steps")) {
    c.steps = vm["steps"].as<std::int64_t>();
    if (c.steps < 0) throw UsageError("--steps must be >= 0, got " + std::to_string(c.steps));
  } else {
    const double e = finite_option(vm, "epochs");
    if (e < 0) throw UsageError("--epochs must be >= 0, got " + shortest(e));
    if (c.q == 0) throw UsageError("--epochs needs --q > 0 (steps = epochs / q)");
    const double n = std::floor(e / c.q);
    if (n > 9e18) throw UsageError("--epochs / --q is too many steps: " + shortest(n));
    c.steps = static_cast<std::int64_t>(n);
  }
  const std::string conv = vm["conversion"].as<std::string>();
  if (conv != "balle" && conv != "classic")
    throw UsageError("--conversion must be balle or classic, got '" + conv + "'");
  c.conversion = privacy::parse_conversion(conv);
  if (vm.count("orders")) {
    std::stringstream ss(vm["orders"].as<std::string>());
    std::string item;
    while (std::getline(ss, item, ',')) {
      std::size_t used = 0;
      double a = 0;
      try {
        a = std::stod(item, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used == 0 || used != item.size() || !(a > 1))
        throw UsageError("--orders: '" + item + "' is not an order > 1 (expected e.g. --orders 1.5,2,4,8,16,32)");
      c.orders.push_back(a);
    }
    if (c.orders.empty()) throw UsageError("--orders: no orders given");
  }
  return c;
}

void warn_if_at_edge(const privacy::PrivacySpent& s, const Common& c, const std::string& who) {
  if (!s.order_at_edge) return;
  const auto& orders = c.orders.empty() ? privacy::default_orders() : c.orders;
  const bool smallest = s.order == *std::min_element(orders.begin(), orders.end());
  std::cerr << who << ": warning: the best order " << shortest(s.order) << " is the " << (smallest ? "smallest" : "largest")
            << " of the grid; --orders with " << (smallest ? "smaller" : "larger")
            << " ones may give a smaller epsilon\n";
}

}  // namespace

int run_dp_epsilon(const Command& self, Args args) {
  po::options_description o = options_section();
  add_common_options(o);
  o.add_options()("sigma", po::value<double>(), "noise multiplier: noise std / clipping norm, > 0");
  po::variables_map vm;
  if (!parse_command_line(self, args, o, {}, 0, vm)) return kOk;
  const Common c = read_common(vm, /*q_may_be_zero=*/true);
  const double sigma = finite_option(vm, "sigma");
  if (!(sigma > 0)) throw UsageError("--sigma must be > 0, got " + shortest(sigma));
  const privacy::PrivacySpent s = privacy::epsilon(c.q, sigma, c.steps, c.delta, c.conversion, c.orders);
  std::cout << "epsilon: " << g17(s.epsilon) << "\norder: " << shortest(s.order) << "\n";
  warn_if_at_edge(s, c, "minigrad dp-epsilon");
  return kOk;
}

int run_dp_sigma(const Command& self, Args args) {
  po::options_description o = options_section();
  add_common_options(o);
  o.add_options()
      ("epsilon", po::value<double>(), "target epsilon, > 0")
      ("tolerance", po::value<double>()->default_value(0.01, "0.01"),
       "stop once target - eps(sigma) <= T (Opacus's default 0.01; e.g. 1e-9 for a tight sigma)");
  po::variables_map vm;
  if (!parse_command_line(self, args, o, {}, 0, vm)) return kOk;
  const Common c = read_common(vm, /*q_may_be_zero=*/false);
  const double target = finite_option(vm, "epsilon"), tol = finite_option(vm, "tolerance");
  if (!(target > 0)) throw UsageError("--epsilon must be > 0, got " + shortest(target));
  if (!(tol > 0)) throw UsageError("--tolerance must be > 0, got " + shortest(tol));
  if (c.steps < 1) throw UsageError("--steps must be >= 1 to need any noise, got " + std::to_string(c.steps));
  const privacy::NoiseSearch s = privacy::noise_multiplier(target, c.q, c.steps, c.delta, c.conversion, tol, c.orders);
  std::cout << "sigma: " << g17(s.sigma) << "\nepsilon: " << g17(s.epsilon) << "\norder: " << shortest(s.order) << "\n";
  return kOk;
}

}  // namespace mg::tools
