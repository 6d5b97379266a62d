// Deterministic uniform values in [-scale, scale] (xorshift64 from `seed`): the inputs a
// benchmark hands both to ours and to its torch peer, identical on every machine.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace mg::bench {

inline std::vector<float> uniform(std::size_t n, std::uint64_t seed, double scale) {
  std::vector<float> v(n);
  std::uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (auto& e : v) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    e = static_cast<float>(scale * (static_cast<double>(x % 2000001) / 1000000.0 - 1.0));
  }
  return v;
}

}  // namespace mg::bench
