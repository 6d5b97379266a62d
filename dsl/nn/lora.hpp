// nn::LoRA: low-rank adaptation of a Linear layer (Hu et al. 2021, as peft's lora.Linear):
// y = base(x) + (dropout(x) A^T B^T) * alpha / rank, with A [rank, in] drawn as Linear's
// weight is and B [out, rank] zero, so training starts from the base model exactly. The
// base weight and bias are frozen (not trainable): the training step differentiates only
// A and B and keeps optimizer state only for them. `merge()` folds B A * alpha / rank into
// the base weight; a merged LoRA has exactly the parameters (names, shapes) of the Linear it
// wraps, so its weights load into the plain model for export (C99 included).
#pragma once
#include <cstdint>

#include "minigrad/dsl/nn/layers.hpp"
#include "minigrad/dsl/nn/module.hpp"

namespace mg::nn {

struct LoRAOptions {
  std::int64_t rank = 8;
  double alpha = 16;
  double dropout = 0.0;  // on the adapter's input, in training
};

struct LoRA {
  Linear base;
  Parameter lora_A, lora_B;
  std::int64_t rank;
  double alpha;
  Dropout lora_dropout;
  bool merged = false;

  LoRA(std::int64_t in, std::int64_t out, LoRAOptions o = {}, bool bias = true, DType dtype = default_float);
  double scaling() const { return alpha / static_cast<double>(rank); }
  Tensor operator()(const Tensor& x, Loc loc = Loc::current()) const;
  // Folds the adapter into base.weight (W += B A * alpha / rank, on the current values) and
  // drops A and B from the parameters. Binds no graph: rebuild the forward pass after it.
  void merge();

  // The base layer's parameters keep the Linear's names ("weight", "bias"), so a
  // pre-trained plain model's state dict loads into the adapted one (A and B reported
  // missing) and a merged one's back into the plain model.
  template <class F> void for_each_parameter(F&& f) {
    base.for_each_parameter(f);
    if (merged) return;
    f("lora_A.weight", lora_A);
    f("lora_B.weight", lora_B);
    if (lora_dropout.p > 0) f("lora_dropout.counter", lora_dropout.counter);
  }
  template <class F> void for_each_submodule(F&& f) { f(lora_dropout); }
};

// W += B A * scale on the parameters' current values (W [out, in], B [out, r], A [r, in]):
// folding a low-rank adapter into its base weight.
void add_low_rank(const Parameter& W, const Parameter& B, const Parameter& A, double scale);

// Freezes every parameter of `m` (requires_grad_(False) on a whole module): compile_train
// then neither differentiates them nor keeps optimizer state for them.
template <class M>
void freeze(M& m) {
  for_each_parameter(m, [](const std::string&, Parameter& p) { p.trainable = false; });
}

}  // namespace mg::nn
