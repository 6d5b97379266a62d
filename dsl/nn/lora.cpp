// LoRA; see lora.hpp.
#include "minigrad/dsl/nn/lora.hpp"

#include <algorithm>
#include <string>

#include "minigrad/ir/errors.hpp"

namespace mg::nn {

LoRA::LoRA(std::int64_t in, std::int64_t out, LoRAOptions o, bool bias, DType dtype)
    : base(in, out, bias, dtype), lora_A{{o.rank, in}, dtype, fan_in_uniform_init(in)},
      lora_B{{out, o.rank}, dtype, constant_init(0.0)}, rank(o.rank), alpha(o.alpha), lora_dropout(o.dropout) {
  if (o.rank <= 0 || o.rank > std::min(in, out))
    throw UserError("LoRA: rank must be in [1, min(in, out)] = [1, " + std::to_string(std::min(in, out)) + "], got " +
                    std::to_string(o.rank));
  base.weight.trainable = false;  // frozen: no gradient, no optimizer state
  base.bias.trainable = false;
}

Tensor LoRA::operator()(const Tensor& x, Loc loc) const {
  LocScope at(SourceLoc::from(loc));
  Tensor y = base(x, loc);
  if (merged) return y;
  if (!lora_A.tensor.valid())
    throw UserError("LoRA: parameters are not bound to a graph; call nn::bind(model, graph) first", ambient_loc());
  Tensor h = lora_dropout.p > 0 ? lora_dropout(x, loc) : x;
  Tensor delta = matmul(matmul(h, lora_A.tensor.T(loc), loc), lora_B.tensor.T(loc), loc);
  return Tensor(y + delta * scaling(), loc);
}

void add_low_rank(const Parameter& W, const Parameter& B, const Parameter& A, double scale) {
  const Array& a = A.value();
  const Array& b = B.value();
  Array w = W.value().clone();
  const std::int64_t out = w.shape()[0], in = w.shape()[1], rank = a.shape()[0];
  for (std::int64_t i = 0; i < out; ++i)
    for (std::int64_t j = 0; j < in; ++j) {
      double d = 0;
      for (std::int64_t r = 0; r < rank; ++r) d += b.at(i * rank + r) * a.at(r * in + j);
      w.set(i * in + j, w.at(i * in + j) + scale * d);
    }
  W.assign(std::move(w));
}

void LoRA::merge() {
  if (merged) return;
  if (!base.weight.has_value() || !lora_A.has_value() || !lora_B.has_value())
    throw UserError("LoRA::merge: the layer has no values yet (bind and train it first)");
  add_low_rank(base.weight, lora_B, lora_A, scaling());
  merged = true;
}

}  // namespace mg::nn
