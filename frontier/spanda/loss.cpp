// The spike-count losses: one cross-entropy over the [T*B, C] rows (its batch mean is the
// mean over steps of the per-step means) and one MSE over the counts.
#include "minigrad/frontier/spanda/loss.hpp"

#include "minigrad/dsl/expr.hpp"
#include "minigrad/dsl/functions.hpp"
#include "minigrad/dsl/nn/loss.hpp"
#include "minigrad/dsl/tensor_methods.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::frontier::spanda {
namespace {

void check(const Tensor& spikes, const Tensor& targets, const char* who, Loc loc) {
  if (spikes.rank() != 3 || targets.rank() != 1 || targets.dtype() != i64 || targets.shape()[0] != spikes.shape()[1])
    throw ShapeError(std::string(who) + ": expects spikes [T, B, C] and i64 targets [B], got " +
                         to_string(spikes.type()) + " and " + to_string(targets.type()),
                     SourceLoc::from(loc));
}

}  // namespace

Tensor ce_rate_loss(const Tensor& spikes, const Tensor& targets, Loc loc) {
  check(spikes, targets, "spanda::ce_rate_loss", loc);
  const std::int64_t T = spikes.shape()[0], B = spikes.shape()[1], C = spikes.shape()[2];
  Tensor rows = spikes.reshape({T * B, C}, loc);
  Tensor y = broadcast_to(targets.unsqueeze(0, loc), {T, B}, loc).reshape({T * B}, loc);
  return nn::cross_entropy(rows, y, {}, loc);
}

Tensor mse_count_loss(const Tensor& spikes, const Tensor& targets, double correct_rate, double incorrect_rate,
                      Loc loc) {
  check(spikes, targets, "spanda::mse_count_loss", loc);
  const std::int64_t T = spikes.shape()[0], C = spikes.shape()[2];
  const double on = static_cast<double>(static_cast<std::int64_t>(static_cast<double>(T) * correct_rate));
  const double off = static_cast<double>(static_cast<std::int64_t>(static_cast<double>(T) * incorrect_rate));
  Tensor hot = one_hot(targets, C, spikes.dtype(), loc);
  Tensor target(hot * on + (1.0 - hot) * off, loc);
  Tensor counts = spikes.sum(0, false, loc);
  return Tensor(nn::mse_loss(counts, target, nn::Reduction::mean, loc) / static_cast<double>(T), loc);
}

}  // namespace mg::frontier::spanda
