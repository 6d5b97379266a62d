// Optimizers as IR (DESIGN invariant 5): each one is a per-parameter update rule written
// with the DSL, so the optimizer step is part of the one training-step graph and its
// state (momenta, second moments) is persistent state of the executable. Formulas and
// defaults follow torch.optim exactly, operation for operation.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "minigrad/dsl/graph.hpp"
#include "minigrad/dsl/nn/parameter.hpp"

namespace mg::nn {

// What an update rule may use: the learning rate (a graph input, so schedules need no
// recompile), the 1-based step count of this update, and named state slots per parameter.
class OptimContext {
 public:
  OptimContext(Graph& g, Tensor lr, Tensor step) : g_(g), lr_(lr), step_(step) {}
  Graph& graph() { return g_; }
  Tensor lr(DType dtype) const;    // the learning rate, cast to the parameter's dtype
  Tensor step(DType dtype) const;  // t, counting this update (1 on the first step)
  // A persistent tensor shaped like `p`, named "optim.<param>.<slot>", starting at `init`.
  Tensor state(const Parameter& p, const std::string& slot, double init = 0.0);
  void set_next(const Tensor& state, const Tensor& next);  // its value after the step

  struct Slot {
    std::string name;
    Tensor input, next;
    Array initial;
  };
  std::vector<Slot>& slots() { return slots_; }

 private:
  Graph& g_;
  Tensor lr_, step_;
  std::vector<Slot> slots_;
};

struct SGD {
  double lr = 1e-2, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false;
  Tensor update(OptimContext& ctx, const Parameter& p, Tensor grad) const;
};

struct Adam {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  Tensor update(OptimContext& ctx, const Parameter& p, Tensor grad) const;
};

struct AdamW {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 1e-2;
  Tensor update(OptimContext& ctx, const Parameter& p, Tensor grad) const;
};

struct RMSprop {
  double lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false;
  Tensor update(OptimContext& ctx, const Parameter& p, Tensor grad) const;
};

// Learning-rate schedules, evaluated on the host per step (the lr is a graph input).
// step counts completed updates before the one being made (0 first), like PyTorch's
// scheduler.step() called once per iteration.
using Schedule = std::function<double(double base_lr, std::int64_t step)>;
Schedule constant_lr();
Schedule step_lr(std::int64_t step_size, double gamma = 0.1);          // torch StepLR
Schedule cosine_lr(std::int64_t t_max, double eta_min = 0.0);          // torch CosineAnnealingLR
// Linear warm-up then cosine decay (nanoGPT's get_lr): base * (step+1)/warmup for the first
// `warmup` steps, then from base down to min_lr at `total`, min_lr after it.
Schedule warmup_cosine_lr(std::int64_t warmup, std::int64_t total, double min_lr = 0.0);

}  // namespace mg::nn
