// Seeded permutations, row gathering, the batch loader and mean/std normalisation.
#include "minigrad/runtime/io/batches.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "minigrad/ir/errors.hpp"

namespace mg::io {

std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n) {
  MG_ASSERT(n >= 1, "uniform_below: empty range");
  __extension__ typedef unsigned __int128 u128;
  u128 m = static_cast<u128>(rng()) * n;
  auto low = static_cast<std::uint64_t>(m);
  if (low < n) {
    const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
    while (low < threshold) {
      m = static_cast<u128>(rng()) * n;
      low = static_cast<std::uint64_t>(m);
    }
  }
  return static_cast<std::uint64_t>(m >> 64);
}

void fisher_yates(std::span<std::int64_t> values, std::mt19937_64& rng) {
  for (std::size_t i = values.size(); i > 1; --i) {
    auto j = static_cast<std::size_t>(uniform_below(rng, i));  // j in [0, i - 1]
    std::swap(values[i - 1], values[j]);
  }
}

std::vector<std::int64_t> epoch_permutation(std::int64_t n, std::uint64_t seed, std::int64_t epoch) {
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) order[static_cast<std::size_t>(i)] = i;
  const auto e = static_cast<std::uint64_t>(epoch);
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(e >> 32)};
  std::mt19937_64 rng(seq);
  fisher_yates(order, rng);
  return order;
}

Array take_rows(const Array& a, std::span<const std::int64_t> rows) {
  MG_ASSERT(a.rank() >= 1, "take_rows: needs rank >= 1");
  Shape shape = a.shape();
  const std::int64_t n = shape[0];
  shape[0] = static_cast<std::int64_t>(rows.size());
  Array out(a.dtype(), shape);
  const std::size_t row_bytes = n == 0 ? 0 : a.nbytes() / static_cast<std::size_t>(n);
  const auto* src = static_cast<const std::byte*>(a.raw());
  auto* dst = static_cast<std::byte*>(out.raw());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    MG_ASSERT(rows[i] >= 0 && rows[i] < n, "take_rows: row out of range");
    if (row_bytes)
      std::memcpy(dst + i * row_bytes, src + static_cast<std::size_t>(rows[i]) * row_bytes, row_bytes);
  }
  return out;
}

BatchLoader::BatchLoader(Array inputs, Array targets, BatchOptions options)
    : inputs_(std::move(inputs)), targets_(std::move(targets)), opt_(options) {
  if (inputs_.rank() < 1 || targets_.rank() < 1)
    throw UserError("BatchLoader: inputs " + to_string(inputs_.type()) + " and targets " +
                    to_string(targets_.type()) + " must have a leading sample axis");
  if (inputs_.shape()[0] != targets_.shape()[0])
    throw UserError("BatchLoader: " + std::to_string(inputs_.shape()[0]) + " inputs but " +
                    std::to_string(targets_.shape()[0]) + " targets");
  if (!inputs_.valid() || !targets_.valid())
    throw UserError("BatchLoader: inputs or targets have no storage");
  if (opt_.batch_size < 1)
    throw UserError("BatchLoader: batch_size must be >= 1, got " + std::to_string(opt_.batch_size));
  n_ = inputs_.shape()[0];
}

std::int64_t BatchLoader::num_batches() const {
  return opt_.drop_last ? n_ / opt_.batch_size : (n_ + opt_.batch_size - 1) / opt_.batch_size;
}

std::vector<std::int64_t> BatchLoader::order(std::int64_t epoch) const {
  if (opt_.shuffle) return epoch_permutation(n_, opt_.seed, epoch);
  std::vector<std::int64_t> identity(static_cast<std::size_t>(n_));
  for (std::int64_t i = 0; i < n_; ++i) identity[static_cast<std::size_t>(i)] = i;
  return identity;
}

Batch BatchLoader::Epoch::batch(std::int64_t i) const {
  MG_ASSERT(i >= 0 && i < size(), "Epoch::batch: index out of range");
  const std::int64_t bs = loader_->opt_.batch_size;
  const std::int64_t begin = i * bs;
  const std::int64_t end = std::min(begin + bs, loader_->n_);
  std::span<const std::int64_t> rows(order_.data() + begin, static_cast<std::size_t>(end - begin));
  return Batch{take_rows(loader_->inputs_, rows), take_rows(loader_->targets_, rows), i};
}

// ---- Normalisation ------------------------------------------------------------------------

namespace {

// acc[j] += sum over rows of x[r, j] (centre null) or of (x[r, j] - centre[j])^2, in double,
// each column in row order; restrict lets the column loop be vectorised.
template <class T>
void column_sums(const T* __restrict x, std::int64_t rows, std::int64_t cols, const double* __restrict centre,
                 double* __restrict acc) {
  for (std::int64_t r = 0; r < rows; ++r, x += cols)
    for (std::int64_t j = 0; j < cols; ++j) {
      const double v = static_cast<double>(x[j]);
      if (centre) {
        const double d = v - centre[j];
        acc[j] += d * d;
      } else {
        acc[j] += v;
      }
    }
}

// column_sums of a [rows, f] matrix. One feature (global statistics) is summed as 16
// interleaved lanes folded at the end: one running sum over 47M pixels was bound by the
// add's latency (0.35 s for Fashion-MNIST's mean and variance).
template <class T>
void feature_sums(const T* x, std::int64_t rows, std::int64_t f, const double* centre, double* out) {
  constexpr std::int64_t kLanes = 16;
  if (f > 1 || rows < kLanes) {
    column_sums(x, rows, f, centre, out);
    return;
  }
  double lanes[kLanes] = {};
  double centres[kLanes];
  std::fill(centres, centres + kLanes, centre ? centre[0] : 0.0);
  const std::int64_t full = rows / kLanes;
  column_sums(x, full, kLanes, centre ? centres : nullptr, lanes);
  column_sums(x + full * kLanes, rows - full * kLanes, 1, centre, lanes);
  for (double v : lanes) out[0] += v;
}

}  // namespace

Normalizer fit_normalizer(const Array& train, NormalizeOver over, double min_std) {
  if (!is_float(train.dtype()) || train.rank() < 1 || train.numel() < 1 || !train.valid())
    throw UserError("fit_normalizer: expects a non-empty f32/f64 array with a sample axis, got " +
                    to_string(train.type()));
  Shape feature_shape;
  if (over == NormalizeOver::per_feature)
    feature_shape.assign(train.shape().begin() + 1, train.shape().end());
  Array mean = Array::zeros(Type{f64, feature_shape});
  Array sd = Array::zeros(Type{f64, feature_shape});
  // Viewed as a [rows, f] matrix: per feature f = numel / N; global f = 1.
  const std::int64_t f = mean.numel();
  const std::int64_t rows = train.numel() / f;
  double* m = mean.data<double>();
  double* s = sd.data<double>();
  visit_dtype(train.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      const T* x = train.data<T>();
      feature_sums(x, rows, f, nullptr, m);
      for (std::int64_t j = 0; j < f; ++j) m[j] /= static_cast<double>(rows);
      feature_sums(x, rows, f, m, s);
      for (std::int64_t j = 0; j < f; ++j) {
        s[j] = std::sqrt(s[j] / static_cast<double>(rows));
        if (!(s[j] >= min_std)) s[j] = 1.0;
      }
    }
  });
  return Normalizer{mean, sd};
}

Array Normalizer::apply(const Array& x) const {
  Array out(x.type());
  normalize(x, out);
  return out;
}

Array Normalizer::apply(Array&& x) const {
  if (!x.sole_owner()) return apply(std::as_const(x));
  normalize(x, x);  // element k reads only in[k] before writing out[k]
  return std::move(x);
}

void Normalizer::normalize(const Array& x, Array& out) const {
  const Shape& fs = mean.shape();
  const bool shape_ok = x.rank() >= 1 &&
                        (fs.empty() || Shape(x.shape().begin() + 1, x.shape().end()) == fs);
  if (!is_float(x.dtype()) || !shape_ok || !x.valid())
    throw UserError("Normalizer::apply: expects f32/f64 [N" +
                    (fs.empty() ? std::string(",...]") : "," + to_string(fs).substr(1)) +
                    ", got " + to_string(x.type()));
  const std::int64_t f = mean.numel();
  const std::int64_t total = x.numel();
  visit_dtype(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      std::vector<T> m(static_cast<std::size_t>(f)), s(static_cast<std::size_t>(f));
      for (std::int64_t j = 0; j < f; ++j) {
        m[static_cast<std::size_t>(j)] = static_cast<T>(mean.data<double>()[j]);
        s[static_cast<std::size_t>(j)] = static_cast<T>(stddev.data<double>()[j]);
      }
      const T* in = x.data<T>();  // may be o: in place
      T* o = out.data<T>();
      const T* __restrict mp = m.data();
      const T* __restrict sp = s.data();
      const std::int64_t rows = total / f;
#pragma omp parallel for if (total > (1 << 16))
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < f; ++j) o[r * f + j] = (in[r * f + j] - mp[j]) / sp[j];
    }
  });
}

}  // namespace mg::io
