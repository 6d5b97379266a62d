// Initialisers: deterministic, keyed by (seed, parameter name).
#include <cmath>
#include <random>

#include "minigrad/dsl/nn/parameter.hpp"

namespace mg::nn {

std::uint64_t hash_name(std::uint64_t seed, const std::string& name) {
  std::uint64_t h = 1469598103934665603ULL ^ seed;  // FNV-1a over the name, seeded
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ULL;
  return h;
}

namespace {
// U[0,1) with 53 random bits (std::uniform_real_distribution is implementation-defined).
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }
}  // namespace

Init uniform_init(double low, double high) {
  return [low, high](const Type& t, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    Array a(t);
    for (std::int64_t i = 0; i < a.numel(); ++i) a.set(i, low + (high - low) * unit(rng));
    return a;
  };
}

Init constant_init(double value) {
  return [value](const Type& t, std::uint64_t) { return Array::full(t, value); };
}

Init fan_in_uniform_init(std::int64_t fan_in) {
  double bound = fan_in > 0 ? 1.0 / std::sqrt(static_cast<double>(fan_in)) : 0.0;
  return uniform_init(-bound, bound);
}

Init normal_init(double mean, double std) {
  return [mean, std](const Type& t, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    Array a(t);
    for (std::int64_t i = 0; i < a.numel(); ++i) {  // Box-Muller
      double u1 = 1.0 - unit(rng), u2 = unit(rng);
      a.set(i, mean + std * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
    }
    return a;
  };
}

}  // namespace mg::nn
