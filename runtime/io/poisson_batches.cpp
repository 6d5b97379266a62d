// Poisson-sampled batches; see poisson_batches.hpp. The draw per example reproduces the
// random ops' stream (ir/ops/creation.cpp: for_random_chunks + unit_closed_open), which
// tests/io/test_poisson_batches.cpp checks against a compiled `random_uniform` node.
#include "minigrad/runtime/io/poisson_batches.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "minigrad/ir/errors.hpp"
#include "minigrad/runtime/io/batches.hpp"

namespace mg::io {

namespace {

constexpr std::int64_t kChunk = 1 << 16;  // the random ops' chunk (kRandomChunk)

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double log_gamma(double x) {  // without std::lgamma's write to the global signgam
  int sign = 0;
  return ::lgamma_r(x, &sign);
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

void check_q(double q, const char* who) {
  if (!(q >= 0 && q <= 1)) throw UserError(std::string(who) + ": sampling rate q must be in [0, 1], got " + num(q));
}

}  // namespace

std::vector<std::int64_t> poisson_sample(std::int64_t n, double q, std::uint64_t seed, std::int64_t step) {
  check_q(q, "poisson_sample");
  if (n < 0) throw UserError("poisson_sample: n must be >= 0, got " + std::to_string(n));
  std::vector<std::int64_t> rows;
  rows.reserve(static_cast<std::size_t>(q * static_cast<double>(n) * 1.1) + 16);
  // The stream of random_uniform(seed = seed ^ splitmix64(step)), f64 on [0, 1).
  const std::uint64_t s = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(step)));
  for (std::int64_t c = 0; c * kChunk < n; ++c) {
    std::mt19937_64 engine(s ^ splitmix64(static_cast<std::uint64_t>(c)));
    const std::int64_t end = std::min(n, (c + 1) * kChunk);
    for (std::int64_t i = c * kChunk; i < end; ++i) {
      const double u = static_cast<double>(engine() >> 11) * 0x1p-53;
      if (u < q) rows.push_back(i);
    }
  }
  return rows;
}

std::int64_t poisson_capacity(std::int64_t n, double q, double tail) {
  check_q(q, "poisson_capacity");
  if (n < 0) throw UserError("poisson_capacity: n must be >= 0, got " + std::to_string(n));
  if (!(tail > 0 && tail < 1)) throw UserError("poisson_capacity: tail must be in (0, 1), got " + num(tail));
  if (q == 0) return 0;
  if (q == 1) return n;
  // Walk down from k = n adding P(X = k) (underflow to 0 far out is harmless) until the tail
  // sum P(X >= k) exceeds `tail`: then P(X > k) <= tail < P(X > k - 1) and k is the answer.
  const double log_q = std::log(q), log_1mq = std::log1p(-q), lg_n1 = log_gamma(static_cast<double>(n) + 1);
  double tail_sum = 0;
  for (std::int64_t k = n; k >= 0; --k) {
    const auto kd = static_cast<double>(k);
    tail_sum += std::exp(lg_n1 - log_gamma(kd + 1) - log_gamma(static_cast<double>(n - k) + 1) + kd * log_q +
                         static_cast<double>(n - k) * log_1mq);
    if (tail_sum > tail) return k;
  }
  return 0;
}

PoissonBatchLoader::PoissonBatchLoader(Array inputs, Array targets, PoissonOptions options)
    : inputs_(std::move(inputs)), targets_(std::move(targets)), opt_(options) {
  if (inputs_.rank() < 1 || targets_.rank() < 1)
    throw UserError("PoissonBatchLoader: inputs " + to_string(inputs_.type()) + " and targets " +
                    to_string(targets_.type()) + " must have a leading sample axis");
  if (inputs_.shape()[0] != targets_.shape()[0])
    throw UserError("PoissonBatchLoader: " + std::to_string(inputs_.shape()[0]) + " inputs but " +
                    std::to_string(targets_.shape()[0]) + " targets");
  if (!inputs_.valid() || !targets_.valid()) throw UserError("PoissonBatchLoader: inputs or targets have no storage");
  check_q(opt_.q, "PoissonBatchLoader");
  if (opt_.steps_per_epoch < 0 || opt_.capacity < 0)
    throw UserError("PoissonBatchLoader: steps_per_epoch and capacity must be >= 0, got " +
                    std::to_string(opt_.steps_per_epoch) + " and " + std::to_string(opt_.capacity));
  if (opt_.steps_per_epoch == 0 && opt_.q == 0)
    throw UserError("PoissonBatchLoader: q = 0 needs an explicit steps_per_epoch (default is 1 / q)");
  n_ = inputs_.shape()[0];
  steps_ = opt_.steps_per_epoch > 0 ? opt_.steps_per_epoch : std::max<std::int64_t>(1, std::llround(1.0 / opt_.q));
}

PoissonBatch PoissonBatchLoader::batch(std::int64_t step) const {
  if (step < 0) throw UserError("PoissonBatchLoader::batch: step must be >= 0, got " + std::to_string(step));
  PoissonBatch b;
  b.step = step;
  b.rows = poisson_sample(n_, opt_.q, opt_.seed, step);
  b.size = static_cast<std::int64_t>(b.rows.size());
  const DType wdt = is_float(inputs_.dtype()) ? inputs_.dtype() : f32;
  if (opt_.capacity == 0) {
    b.inputs = take_rows(inputs_, b.rows);
    b.targets = take_rows(targets_, b.rows);
    b.weights = Array::zeros(Type{wdt, {b.size}});
  } else {
    if (b.size > opt_.capacity)
      throw UserError("PoissonBatchLoader: step " + std::to_string(step) + " sampled " + std::to_string(b.size) +
                      " examples, more than the capacity " + std::to_string(opt_.capacity) +
                      " (expected " + num(expected_batch_size()) +
                      "); raise it, e.g. to io::poisson_capacity(n, q) = " +
                      std::to_string(poisson_capacity(n_, opt_.q)) + " rows");
    auto padded = [&](const Array& a) {
      Shape shape = a.shape();
      shape[0] = opt_.capacity;
      Array out = Array::zeros(Type{a.dtype(), shape});
      const Array taken = take_rows(a, b.rows);
      if (taken.nbytes()) std::memcpy(out.raw(), taken.raw(), taken.nbytes());  // sampled rows first
      return out;
    };
    b.inputs = padded(inputs_);
    b.targets = padded(targets_);
    b.weights = Array::zeros(Type{wdt, {opt_.capacity}});
  }
  for (std::int64_t i = 0; i < b.size; ++i) {
    if (wdt == f64) b.weights.data<double>()[i] = 1.0;
    else b.weights.data<float>()[i] = 1.0f;
  }
  return b;
}

PoissonBatchLoader::Epoch PoissonBatchLoader::epoch(std::int64_t e) const {
  if (e < 0) throw UserError("PoissonBatchLoader::epoch: epoch must be >= 0, got " + std::to_string(e));
  return Epoch(this, e * steps_);
}

}  // namespace mg::io
