// The loop every Fashion-MNIST example runs: epochs of shuffled batches through one
// compiled training step with a progress bar, then accuracy over the whole test set.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include <minigrad/minigrad.hpp>

#include "examples/progress.hpp"
#include "minigrad/runtime/io/batches.hpp"

namespace mg::examples {

struct TrainRun {
  std::int64_t batches = 0;  // steps run
  double seconds = 0;        // wall time of the loop
};

// `step.run` takes {"x", "y"} and returns the loss; max_batches > 0 caps each epoch
// (the smoke tests run a few).
template <class Step>
TrainRun train_epochs(Step& step, io::BatchLoader& loader, int epochs, std::int64_t max_batches,
                      std::int64_t batch) {
  TrainRun run;
  const auto t0 = std::chrono::steady_clock::now();
  for (int e = 0; e < epochs; ++e) {
    const std::int64_t n = max_batches > 0 ? std::min(max_batches, loader.num_batches()) : loader.num_batches();
    Progress bar("epoch " + std::to_string(e + 1) + "/" + std::to_string(epochs), n, batch);
    double sum = 0;
    auto ep = loader.epoch(e);
    for (std::int64_t i = 0; i < n; ++i) {
      const io::Batch b = ep.batch(i);
      sum += step.run({{"x", b.inputs}, {"y", b.targets}});
      bar.tick(sum / static_cast<double>(i + 1));
      ++run.batches;
    }
    bar.done();
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return run;
}

// Fraction of `x` whose predicted class (`predict(batch) -> i64 [n]`) equals `labels`;
// every sample counts, the final partial batch included.
template <class Predict>
double test_accuracy(Predict& predict, const Array& x, const Array& labels, std::int64_t batch) {
  io::BatchLoader test(x, labels, {.batch_size = batch, .shuffle = false, .drop_last = false});
  std::int64_t hits = 0;
  for (const io::Batch& b : test.epoch(0)) {
    Array guess = predict(b.inputs);
    for (std::int64_t i = 0; i < guess.numel(); ++i) hits += guess.at(i) == b.targets.at(i);
  }
  return static_cast<double>(hits) / static_cast<double>(test.num_samples());
}

}  // namespace mg::examples
