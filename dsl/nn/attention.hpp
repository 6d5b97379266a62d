// Attention with PyTorch's semantics: the functional scaled_dot_product_attention (as
// torch.nn.functional.scaled_dot_product_attention) and the MultiheadAttention module (as
// torch.nn.MultiheadAttention, parameter names included, so a PyTorch state_dict saved as
// SafeTensors loads with nn::load). Both are compositions of existing IR ops (matmul,
// softmax, where, ...), so they differentiate to any order (grad of grad included, which
// PyTorch's fused SDPA lacks), fold, fuse and run in C99 like any other graph.
#pragma once
#include <cstdint>
#include <optional>

#include "minigrad/dsl/nn/layers.hpp"
#include "minigrad/dsl/nn/lora.hpp"

namespace mg::nn {

struct AttentionOptions {
  // bool: true where a query MAY attend (torch SDPA's convention); float: added to the
  // scores. Broadcasts against the scores [..., L, S].
  Tensor attn_mask = {};
  bool is_causal = false;             // query i attends to keys j <= i (top-left aligned)
  std::optional<double> scale = {};   // default 1/sqrt(E), E = the last axis of q
  const Dropout* dropout = nullptr;   // applied to the attention weights (its p, its stream)
};

struct AttentionResult {
  Tensor output;   // [..., L, Ev]
  Tensor weights;  // [..., L, S] softmax weights (after dropout), as need_weights returns
};

// softmax(q k^T * scale + mask) v for q [..., L, E], k [..., S, E], v [..., S, Ev] (leading
// axes broadcast). A row whose keys are all masked gives NaN, as in PyTorch.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o = {},
                                    Loc loc = Loc::current());
AttentionResult attention_with_weights(const Tensor& q, const Tensor& k, const Tensor& v,
                                       const AttentionOptions& o = {}, Loc loc = Loc::current());

struct MultiheadAttentionOptions {
  double dropout = 0.0;     // on the attention weights, in training
  bool bias = true;         // in_proj_bias and out_proj.bias
  std::int64_t kdim = 0;    // key features (0: embed_dim)
  std::int64_t vdim = 0;    // value features (0: embed_dim)
  bool batch_first = false; // [N, L, E] instead of PyTorch's default [L, N, E]
  DType dtype = default_float;
};

struct MhaCall {
  // bool [N, S] (true: this key is padding, ignored) or float [N, S] (added).
  Tensor key_padding_mask = {};
  bool need_weights = true;
  // bool (true: NOT allowed, torch MHA's convention) or float (added); [L, S] or [N*H, L, S].
  Tensor attn_mask = {};
  bool average_attn_weights = true;  // weights [N, L, S] averaged over heads, else [N, H, L, S]
  bool is_causal = false;            // also mask keys j > i
};

// torch.nn.MultiheadAttention (without add_bias_kv / add_zero_attn). Inputs are [L, N, E]
// ([N, L, E] with batch_first, or unbatched [L, E]); returns the output (the query's
// layout) and, if need_weights, the attention weights.
struct MultiheadAttention {
  std::int64_t embed_dim, num_heads, kdim, vdim;
  bool batch_first, has_bias, training = true;
  Parameter in_proj_weight;                              // [3E, E] when kdim == vdim == E
  Parameter q_proj_weight, k_proj_weight, v_proj_weight; // [E, E], [E, kdim], [E, vdim] otherwise
  Parameter in_proj_bias;                                // [3E]
  Linear out_proj;
  Dropout attn_dropout;  // its random-stream counter is a buffer only when dropout > 0
  // LoRA (peft's lora.MultiheadAttention): adapters on the packed input projection
  // (lora_A [r, E], lora_B [3E, r]) and on out_proj (out_proj.lora_A / lora_B [r, E] /
  // [E, r]), B zero; rank 0 when not adapted. See add_lora.
  std::int64_t lora_rank = 0;
  double lora_alpha = 0;
  Parameter lora_A, lora_B, out_lora_A, out_lora_B;
  Dropout lora_dropout{0.0};

  MultiheadAttention(std::int64_t embed_dim, std::int64_t num_heads, MultiheadAttentionOptions o = {});
  bool same_embed_dim() const { return kdim == embed_dim && vdim == embed_dim; }

  // Adds LoRA adapters to the input projection and out_proj and freezes every other
  // parameter (call before nn::bind; needs kdim == vdim == embed_dim): the projections
  // become x W^T + (dropout(x) A^T) B^T * alpha / rank, so training starts from the base
  // model exactly and the step differentiates (and keeps optimizer state for) A and B only.
  void add_lora(LoRAOptions o = {});
  // Folds the adapters into in_proj_weight and out_proj.weight (on the current values) and
  // drops them: the module then has exactly torch's MultiheadAttention parameters again.
  void merge_lora();
  double lora_scaling() const { return lora_alpha / static_cast<double>(lora_rank); }

  AttentionResult operator()(const Tensor& query, const Tensor& key, const Tensor& value, const MhaCall& call = {},
                             Loc loc = Loc::current()) const;

  // One step of cached self-attention decoding (a KV cache; batch first): x [N, 1, E] is the
  // newest position; k_cache, v_cache [N, H, C, D] (D = E / H) hold the keys and values of
  // earlier positions, and cache_bias [C] (x's dtype: 0 for a filled slot, -inf for an
  // empty one) says which slots count. Returns the output [N, 1, E] and this position's
  // key and value [N, H, 1, D] to store in the cache: no earlier position is recomputed.
  struct CachedStep {
    Tensor output, k, v;
  };
  CachedStep decode_step(const Tensor& x, const Tensor& k_cache, const Tensor& v_cache, const Tensor& cache_bias,
                         Loc loc = Loc::current()) const;

  template <class F> void for_each_parameter(F&& f) {
    if (same_embed_dim()) {
      f("in_proj_weight", in_proj_weight);
    } else {
      f("q_proj_weight", q_proj_weight);
      f("k_proj_weight", k_proj_weight);
      f("v_proj_weight", v_proj_weight);
    }
    if (has_bias) f("in_proj_bias", in_proj_bias);
    out_proj.for_each_parameter([&](const std::string& n, Parameter& p) { f("out_proj." + n, p); });
    if (attn_dropout.p > 0) f("attn_dropout.counter", attn_dropout.counter);
    if (lora_rank > 0) {
      f("lora_A.weight", lora_A);
      f("lora_B.weight", lora_B);
      f("out_proj.lora_A.weight", out_lora_A);
      f("out_proj.lora_B.weight", out_lora_B);
      if (lora_dropout.p > 0) f("lora_dropout.counter", lora_dropout.counter);
    }
  }
  template <class F> void for_each_submodule(F&& f) {
    f(out_proj);
    f(attn_dropout);
    f(lora_dropout);
  }

 private:
  // y + (dropout(x) A^T) B[rows)^T * alpha / rank: the adapter's share of a projection
  // whose weight rows [row0, row0 + E) are adapted; y itself when not adapted.
  Tensor adapted(const Tensor& x, const Tensor& y, const Parameter& A, const Parameter& B, std::int64_t row0,
                 Loc loc) const;
};

}  // namespace mg::nn
