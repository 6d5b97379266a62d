// Spike-count losses, as snntorch.functional computes them, over output spikes [T, B, C]
// and class targets i64 [B].
#pragma once
#include "minigrad/dsl/tensor.hpp"

namespace mg::frontier::spanda {

// ce_rate_loss: cross-entropy of each step's spikes (as logits), averaged over the T steps
// (and, as nn.NLLLoss, over the batch): (1/T) sum_t CE(spikes[t], targets).
Tensor ce_rate_loss(const Tensor& spikes, const Tensor& targets, Loc loc = Loc::current());

// mse_count_loss: MSE between the spike counts sum_t spikes[t] and target counts
// int(T correct_rate) for the true class and int(T incorrect_rate) for the others,
// divided by T (snnTorch's `loss / num_steps`).
Tensor mse_count_loss(const Tensor& spikes, const Tensor& targets, double correct_rate = 1.0,
                      double incorrect_rate = 0.0, Loc loc = Loc::current());

}  // namespace mg::frontier::spanda
