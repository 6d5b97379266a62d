// Gradient explanations and the training step's picture (the glass box, pillar 1).
// explain_gradients runs one step's forward and backward on a batch WITHOUT updating
// anything and says, per parameter, how large its gradient and its update are relative to
// its weight, and per activation how many units are dead (ReLU) or saturated
// (sigmoid/tanh), then diagnoses in plain English with the thresholds stated below.
#pragma once
#include <string>
#include <vector>

#include "minigrad/dsl/compile.hpp"
#include "minigrad/dsl/nn/train.hpp"
#include "minigrad/runtime/glassbox/ascii_view.hpp"

namespace mg::nn {

// The thresholds of the diagnosis (their defaults are the usual rules of thumb: a healthy
// update moves a weight by about 1e-3 of its norm per step).
struct ExplainThresholds {
  double exploding_grad_norm = 1e3;   // ||g|| above: exploding (or any NaN/Inf)
  double vanishing_grad_norm = 1e-7;  // ||g|| below: vanishing
  double vanishing_vs_largest = 1e-3; // ||g|| below this fraction of the largest ||g||: vanishing
  double not_learning_ratio = 1e-5;   // ||update|| / ||w|| below: the layer is not learning
  double dead_fraction = 0.5;         // ReLU units never active on the batch, above: dead units
  double saturated_fraction = 0.5;    // sigmoid/tanh outputs within 0.01 of their bounds, above
};

struct ParameterHealth {
  std::string name;
  double weight_norm = 0, grad_norm = 0, update_norm = 0;
  double update_ratio() const { return weight_norm > 0 ? update_norm / weight_norm : 0; }
};

struct ActivationHealth {
  std::string node;   // "%12 relu"
  std::string where;  // the user's file:line
  std::string op;     // relu, sigmoid or tanh
  std::int64_t units = 0;  // per sample (the non-batch axes)
  double dead = 0;       // relu: fraction of units zero for every sample of the batch
  double saturated = 0;  // sigmoid/tanh: fraction of outputs within 0.01 of the bounds
};

struct GradientReport {
  std::vector<ParameterHealth> parameters;
  std::vector<ActivationHealth> activations;
  std::vector<std::string> diagnosis;  // one plain-English finding each; empty: healthy
  ExplainThresholds thresholds;
  std::string text() const;            // tables, the diagnosis and the thresholds used
};

// One forward and backward pass of `step`'s graph on `batch` with its current parameters
// and optimizer state; nothing is updated (step.steps_done() is unchanged).
GradientReport explain_gradients(const TrainStep& step, const std::vector<Feed>& batch,
                                 const ExplainThresholds& thresholds = {});

// The training step as the ASCII view prints it: forward, backward and update blocks.
std::string visualize(const TrainStep& step, const rt::glassbox::AsciiViewOptions& options = {});

}  // namespace mg::nn
