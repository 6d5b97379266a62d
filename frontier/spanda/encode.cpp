// Host-side spike encoders (mt19937_64 draws, reproducible by seed) and the rate decoder.
#include "minigrad/frontier/spanda/encode.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "minigrad/dsl/tensor_methods.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::frontier::spanda {
namespace {

Shape with_time(std::int64_t steps, const Shape& s) {
  Shape out{steps};
  out.insert(out.end(), s.begin(), s.end());
  return out;
}

void check(const Array& x, std::int64_t steps, const char* who) {
  if (steps <= 0) throw UserError(std::string(who) + ": expects a positive number of steps, got " + std::to_string(steps));
  if (!is_float(x.dtype())) throw UserError(std::string(who) + ": expects float intensities, got " + to_string(x.type()));
}

}  // namespace

Array rate_encode(const Array& x, std::int64_t steps, std::uint64_t seed) {
  check(x, steps, "spanda::rate_encode");
  Array out(x.dtype(), with_time(steps, x.shape()));
  const std::int64_t n = x.numel();
  const std::vector<double> p = x.to_doubles();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);  // [0, 1): p = 0 never fires, p = 1 always
  for (std::int64_t t = 0; t < steps; ++t)
    for (std::int64_t i = 0; i < n; ++i) out.set(t * n + i, u(rng) < std::clamp(p[i], 0.0, 1.0) ? 1.0 : 0.0);
  return out;
}

Array latency_encode(const Array& x, std::int64_t steps, LatencyOptions o) {
  check(x, steps, "spanda::latency_encode");
  Array out = Array::zeros(Type{x.dtype(), with_time(steps, x.shape())});
  const std::int64_t n = x.numel();
  const std::vector<double> v = x.to_doubles();
  const double never = std::numeric_limits<double>::infinity();
  auto time_of = [&](double xi) {
    if (o.linear) return o.tau * (1.0 - std::clamp(xi, 0.0, 1.0));
    if (xi <= o.threshold) return never;
    return o.tau * std::log(xi / (xi - o.threshold));
  };
  if (o.normalize && !o.linear)
    throw UserError("spanda::latency_encode: normalize needs linear=true (the log code has no latest time)");
  const double scale = o.normalize ? static_cast<double>(steps - 1) / o.tau : 1.0;  // x = 0 lands at T - 1
  for (std::int64_t i = 0; i < n; ++i) {
    const double t = time_of(v[i]) * scale;
    if (!std::isfinite(t)) continue;
    const auto step = std::min<std::int64_t>(steps - 1, static_cast<std::int64_t>(std::llround(t)));
    out.set(step * n + i, 1.0);
  }
  return out;
}

Tensor rate_decode(const Tensor& spikes, Loc loc) {
  if (spikes.rank() < 1) throw ShapeError("spanda::rate_decode: expects spikes [T, ...], got a scalar", SourceLoc::from(loc));
  return spikes.mean(0, false, loc);
}

}  // namespace mg::frontier::spanda
