// Poisson sampling of batches, the sampling DP-SGD's privacy accounting assumes (the RDP
// accountant of runtime/privacy analyses exactly this): at every step each example is in
// the batch independently with probability q, so batch sizes vary (Binomial(n, q)) and a
// batch can be empty. Invariant: the rows of step s are a pure function of (seed, s, n, q),
// drawn from the random ops' counter-based stream (the one `random_uniform` and the Dropout
// mask use: mt19937_64 per 2^16-element chunk, keyed by splitmix64 of the seed and the chunk),
// keyed by seed ^ splitmix64(step): example i is in when its f64 draw u_i in [0, 1) is < q.
// So a batch never depends on earlier steps, threads or platform.
#pragma once
#include <cstdint>
#include <vector>

#include "minigrad/ir/array.hpp"

namespace mg::io {

// The examples (ascending indices) Poisson sampling puts in the batch of `step`.
// UserError unless n >= 0 and 0 <= q <= 1.
std::vector<std::int64_t> poisson_sample(std::int64_t n, double q, std::uint64_t seed, std::int64_t step);

// The smallest c with P(Binomial(n, q) > c) <= tail: a padded capacity that a Poisson batch
// exceeds with probability at most `tail` per step (n = 60000, q = 256/60000, tail 1e-12:
// 376 rows for an expected 256).
std::int64_t poisson_capacity(std::int64_t n, double q, double tail = 1e-12);

struct PoissonOptions {
  double q = 0.01;                  // sampling rate: each example's inclusion probability
  std::int64_t steps_per_epoch = 0;  // 0: round(1 / q), as Opacus's DPDataLoader (n / expected batch)
  // 0: a batch has exactly its sampled rows ([b, ...], b may be 0). > 0: every batch has this
  // many rows, the sampled ones first, then zero rows with weight 0, so one compiled step
  // (static shapes) runs every batch; a step sampling more rows than this is a UserError
  // (dropping rows would change the mechanism the accountant analyses): see poisson_capacity.
  std::int64_t capacity = 0;
  std::uint64_t seed = 0;
};

struct PoissonBatch {
  Array inputs;   // [rows, inputs.shape[1:]...]: rows = size, or capacity when padded
  Array targets;  // [rows, targets.shape[1:]...]
  // [rows], 1 for a sampled example and 0 for padding, in the inputs' float dtype (f32 when
  // the inputs are not float). A DP-SGD step multiplies each example's clipped gradient by
  // it and divides the noisy sum by the EXPECTED batch size q n (not by `size`, which would
  // leak it), as Opacus does.
  Array weights;
  std::int64_t size = 0;              // examples sampled (Binomial(n, q))
  std::int64_t step = 0;              // global step: epoch * steps_per_epoch + index in the epoch
  std::vector<std::int64_t> rows;     // their indices in the dataset, ascending
};

class PoissonBatchLoader {
 public:
  // `inputs` and `targets` share their leading (sample) dimension; the loader shares their
  // storage. UserError on mismatch, q outside [0, 1] (or 0 with steps_per_epoch 0), or
  // negative steps_per_epoch/capacity.
  PoissonBatchLoader(Array inputs, Array targets, PoissonOptions options);

  std::int64_t num_samples() const { return n_; }
  std::int64_t steps_per_epoch() const { return steps_; }
  const PoissonOptions& options() const { return opt_; }
  double expected_batch_size() const { return opt_.q * static_cast<double>(n_); }

  PoissonBatch batch(std::int64_t step) const;  // any step >= 0, in any order

  // `for (const PoissonBatch& b : loader.epoch(e))`: steps e * steps_per_epoch() onwards.
  class Epoch {
   public:
    class iterator {
     public:
      using difference_type = std::ptrdiff_t;
      using value_type = PoissonBatch;
      iterator() = default;
      PoissonBatch operator*() const { return loader_->batch(first_ + i_); }
      iterator& operator++() { ++i_; return *this; }
      iterator operator++(int) { iterator t = *this; ++i_; return t; }
      bool operator==(const iterator& o) const { return i_ == o.i_; }

     private:
      friend class Epoch;
      iterator(const PoissonBatchLoader* l, std::int64_t first, std::int64_t i) : loader_(l), first_(first), i_(i) {}
      const PoissonBatchLoader* loader_ = nullptr;
      std::int64_t first_ = 0, i_ = 0;
    };
    iterator begin() const { return {loader_, first_, 0}; }
    iterator end() const { return {loader_, first_, loader_->steps_}; }
    std::int64_t size() const { return loader_->steps_; }

   private:
    friend class PoissonBatchLoader;
    Epoch(const PoissonBatchLoader* l, std::int64_t first) : loader_(l), first_(first) {}
    const PoissonBatchLoader* loader_;
    std::int64_t first_;
  };
  Epoch epoch(std::int64_t e) const;  // the loader must outlive it

 private:
  Array inputs_, targets_;
  PoissonOptions opt_;
  std::int64_t n_ = 0, steps_ = 0;
};

}  // namespace mg::io
