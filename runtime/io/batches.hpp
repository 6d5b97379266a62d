// Mini-batches over (inputs, targets) with seeded shuffling, and mean/std normalisation.
// Invariant: the sample order of an epoch is a pure function of (seed, epoch) — the same
// on every platform and standard library (std::mt19937_64 seeded through std::seed_seq,
// both fully specified; our own Fisher–Yates and bounded draw instead of std::shuffle and
// std::uniform_int_distribution, whose algorithms are implementation-defined).
#pragma once
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "minigrad/ir/array.hpp"

namespace mg::io {

// Uniform integer in [0, n) for n >= 1 (Lemire's multiply-and-reject: unbiased).
std::uint64_t uniform_below(std::mt19937_64& rng, std::uint64_t n);
// In-place Fisher–Yates shuffle (Durstenfeld's form: i from the end, j in [0, i]).
void fisher_yates(std::span<std::int64_t> values, std::mt19937_64& rng);
// The permutation of 0..n-1 for `epoch` under `seed`; independent of earlier epochs.
std::vector<std::int64_t> epoch_permutation(std::int64_t n, std::uint64_t seed, std::int64_t epoch);

// Rows `rows` of `a` (along axis 0) stacked into a new array [rows.size(), a.shape[1:]...].
Array take_rows(const Array& a, std::span<const std::int64_t> rows);

struct BatchOptions {
  std::int64_t batch_size = 64;
  bool shuffle = true;      // false: samples in file order every epoch
  bool drop_last = false;   // true: skip a final partial batch (a compiled step has static shapes)
  std::uint64_t seed = 0;
};

struct Batch {
  Array inputs;   // [b, inputs.shape[1:]...]
  Array targets;  // [b, targets.shape[1:]...]
  std::int64_t index = 0;  // position of this batch within its epoch
};

class BatchLoader {
 public:
  // `inputs` and `targets` must have rank >= 1 and the same leading dimension (the sample
  // count); the loader shares their storage. UserError on mismatch or batch_size < 1.
  BatchLoader(Array inputs, Array targets, BatchOptions options);

  std::int64_t num_samples() const { return n_; }
  std::int64_t num_batches() const;  // per epoch, honouring drop_last
  const BatchOptions& options() const { return opt_; }
  // The sample order of `epoch` (identity when shuffle is off).
  std::vector<std::int64_t> order(std::int64_t epoch) const;

  // One epoch: `for (const Batch& b : loader.epoch(e)) ...`. Batches are gathered when
  // dereferenced; every sample appears exactly once unless drop_last drops the tail.
  class Epoch {
   public:
    class iterator {
     public:
      using difference_type = std::ptrdiff_t;
      using value_type = Batch;
      iterator() = default;
      Batch operator*() const { return epoch_->batch(i_); }
      iterator& operator++() { ++i_; return *this; }
      iterator operator++(int) { iterator t = *this; ++i_; return t; }
      bool operator==(const iterator& o) const { return i_ == o.i_; }

     private:
      friend class Epoch;
      iterator(const Epoch* e, std::int64_t i) : epoch_(e), i_(i) {}
      const Epoch* epoch_ = nullptr;
      std::int64_t i_ = 0;
    };
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, size()}; }
    std::int64_t size() const { return loader_->num_batches(); }
    Batch batch(std::int64_t i) const;  // 0 <= i < size()

   private:
    friend class BatchLoader;
    Epoch(const BatchLoader* l, std::vector<std::int64_t> order) : loader_(l), order_(std::move(order)) {}
    const BatchLoader* loader_;
    std::vector<std::int64_t> order_;
  };
  // The returned Epoch refers to this loader, which must outlive it.
  Epoch epoch(std::int64_t e) const { return Epoch(this, order(e)); }

 private:
  Array inputs_, targets_;
  BatchOptions opt_;
  std::int64_t n_ = 0;
};

// Mean/std normalisation fitted on a training set, applied to any split: (x - mean) / std.
enum class NormalizeOver { global, per_feature };

struct Normalizer {
  Array mean;    // f64; shape [] (global) or x.shape[1:] (per feature)
  Array stddev;  // f64, same shape; population std (divides by the count), see fit_normalizer
  // (x - mean) / stddev computed in x's dtype (f32 or f64), broadcasting over axis 0 when
  // per-feature; x.shape[1:] must match the fitted feature shape. Returns a new array.
  Array apply(const Array& x) const;
  // The same, in x's own storage when nothing else shares it (x.sole_owner()): a
  // dataset is normalised without a second copy, `norm.apply(std::move(images))`.
  Array apply(Array&& x) const;

 private:
  void normalize(const Array& x, Array& out) const;  // out may be x
};

// Fits on `train` (f32 or f64, rank >= 1, axis 0 = samples; statistics in double). A
// standard deviation below `min_std` (a constant feature, e.g. an always-black corner
// pixel) is stored as 1, so such features become 0 instead of inf/nan.
Normalizer fit_normalizer(const Array& train, NormalizeOver over = NormalizeOver::global,
                          double min_std = 1e-7);

}  // namespace mg::io
