// scaled_dot_product_attention and MultiheadAttention; see attention.hpp. Everything here
// is built from registry ops, so autodiff (to any order), the passes and C99 apply as is.
#include "minigrad/dsl/nn/attention.hpp"

#include <cmath>
#include <string>

#include "minigrad/dsl/graph.hpp"
#include "minigrad/ir/errors.hpp"

namespace mg::nn {

namespace {

[[noreturn]] void fail(const std::string& op, const std::string& what) {
  throw ShapeError(op + ": " + what, ambient_loc());
}

Tensor combine_blocked(const Tensor& a, const Tensor& b, Loc loc) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  return Tensor(a | b, loc);
}
Tensor combine_additive(const Tensor& a, const Tensor& b, Loc loc) {
  if (!a.valid()) return b;
  if (!b.valid()) return a;
  return Tensor(a + b, loc);
}

// The attention proper. `blocked` (bool, true = masked out) and `additive` (float, added to
// the scores) may be empty handles; both broadcast against the scores [..., L, S].
AttentionResult attend(const char* op, const Tensor& q, const Tensor& k, const Tensor& v, double scale,
                       Tensor blocked, const Tensor& additive, bool is_causal, const Dropout* dropout, Loc loc) {
  if (q.rank() < 2 || k.rank() < 2 || v.rank() < 2)
    fail(op, "q, k and v must have rank >= 2 ([..., L, E]), got " + to_string(q.type()) + ", " + to_string(k.type()) +
                 ", " + to_string(v.type()));
  if (!is_float(q.dtype()) || k.dtype() != q.dtype() || v.dtype() != q.dtype())
    fail(op, "q, k and v must share one float dtype, got " + to_string(q.type()) + ", " + to_string(k.type()) + ", " +
                 to_string(v.type()));
  if (q.shape().back() != k.shape().back())
    fail(op, "q and k must have the same feature size E, got " + to_string(q.type()) + " and " + to_string(k.type()));
  if (k.size(-2) != v.size(-2))
    fail(op, "k and v must have the same number of keys S, got " + to_string(k.type()) + " and " + to_string(v.type()));
  const std::int64_t L = q.size(-2), S = k.size(-2);
  Tensor scores = matmul(Tensor(q * scale, loc), k.transpose(-2, -1, loc), loc);  // [..., L, S]
  if (additive.valid()) {
    if (additive.dtype() != q.dtype())
      fail(op, "a float mask must have the dtype of q (" + std::string(name_of(q.dtype())) + "), got " +
                   to_string(additive.type()));
    scores = Tensor(scores + additive, loc);
  }
  if (is_causal) {  // -inf where j > i, added: a constant [L, S] the fold pass computes once, and
                    // the backward pass needs no select (add passes the cotangent through)
    Graph gq = graph_of(q, loc);
    Tensor future = triu(gq.ones({L, S}, boolean, loc), 1, loc);
    scores = Tensor(scores + masked_fill(gq.zeros({L, S}, q.dtype(), loc), future, -INFINITY, loc), loc);
  }
  if (blocked.valid()) scores = masked_fill(scores, blocked, -INFINITY, loc);
  Tensor weights = softmax(scores, -1, loc);
  if (dropout != nullptr) weights = (*dropout)(weights, loc);
  return {matmul(weights, v, loc), weights};
}

// Splits a user mask into the blocked/additive pair; `true_blocks` says what true means.
void split_mask(const char* op, const Tensor& mask, bool true_blocks, Tensor& blocked, Tensor& additive, Loc loc) {
  if (!mask.valid()) return;
  if (mask.dtype() == boolean) blocked = combine_blocked(blocked, true_blocks ? mask : Tensor(!mask, loc), loc);
  else if (is_float(mask.dtype())) additive = combine_additive(additive, mask, loc);
  else fail(op, "a mask must be bool or float, got " + to_string(mask.type()));
}

}  // namespace

AttentionResult attention_with_weights(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o,
                                       Loc loc) {
  LocScope at(SourceLoc::from(loc));
  const char* op = "scaled_dot_product_attention";
  if (q.rank() < 2) fail(op, "q must have rank >= 2 ([..., L, E]), got " + to_string(q.type()));
  double scale = o.scale ? *o.scale : 1.0 / std::sqrt(static_cast<double>(q.shape().back()));
  Tensor blocked, additive;
  split_mask(op, o.attn_mask, /*true_blocks=*/false, blocked, additive, loc);
  return attend(op, q, k, v, scale, blocked, additive, o.is_causal, o.dropout, loc);
}

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const AttentionOptions& o,
                                    Loc loc) {
  return attention_with_weights(q, k, v, o, loc).output;
}

namespace {
// torch.nn.init.xavier_uniform_ for a [fan_out, fan_in] weight.
Init xavier_uniform(std::int64_t fan_out, std::int64_t fan_in) {
  double bound = std::sqrt(6.0 / static_cast<double>(fan_in + fan_out));
  return uniform_init(-bound, bound);
}
}  // namespace

MultiheadAttention::MultiheadAttention(std::int64_t e, std::int64_t h, MultiheadAttentionOptions o)
    : embed_dim(e), num_heads(h), kdim(o.kdim > 0 ? o.kdim : e), vdim(o.vdim > 0 ? o.vdim : e),
      batch_first(o.batch_first), has_bias(o.bias),
      in_proj_weight{{3 * e, e}, o.dtype, xavier_uniform(3 * e, e)},
      q_proj_weight{{e, e}, o.dtype, xavier_uniform(e, e)},
      k_proj_weight{{e, kdim}, o.dtype, xavier_uniform(e, kdim)},
      v_proj_weight{{e, vdim}, o.dtype, xavier_uniform(e, vdim)},
      in_proj_bias{{3 * e}, o.dtype, constant_init(0.0)},
      out_proj(e, e, o.bias, o.dtype), attn_dropout(o.dropout) {
  if (e <= 0 || h <= 0 || e % h != 0)
    throw UserError("MultiheadAttention: embed_dim (" + std::to_string(e) + ") must be divisible by num_heads (" +
                    std::to_string(h) + ")");
  out_proj.bias.init = constant_init(0.0);  // torch zeroes out_proj.bias in _reset_parameters
}

void MultiheadAttention::add_lora(LoRAOptions o) {
  const std::int64_t E = embed_dim;
  if (lora_rank > 0) throw UserError("MultiheadAttention::add_lora: the module already has LoRA adapters");
  if (!same_embed_dim())
    throw UserError("MultiheadAttention::add_lora: needs kdim == vdim == embed_dim (the packed in_proj_weight), got "
                    "kdim " + std::to_string(kdim) + ", vdim " + std::to_string(vdim) + ", embed_dim " +
                    std::to_string(E));
  if (o.rank <= 0 || o.rank > E)
    throw UserError("MultiheadAttention::add_lora: rank must be in [1, embed_dim] = [1, " + std::to_string(E) +
                    "], got " + std::to_string(o.rank));
  if (in_proj_weight.tensor.valid())
    throw UserError("MultiheadAttention::add_lora: call it before nn::bind (the adapters are new parameters)");
  const DType dt = in_proj_weight.dtype;
  lora_rank = o.rank;
  lora_alpha = o.alpha;
  lora_A = Parameter{{o.rank, E}, dt, fan_in_uniform_init(E)};
  lora_B = Parameter{{3 * E, o.rank}, dt, constant_init(0.0)};
  out_lora_A = Parameter{{o.rank, E}, dt, fan_in_uniform_init(E)};
  out_lora_B = Parameter{{E, o.rank}, dt, constant_init(0.0)};
  lora_dropout = Dropout(o.dropout);
  for (Parameter* p : {&in_proj_weight, &in_proj_bias, &out_proj.weight, &out_proj.bias}) p->trainable = false;
}

void MultiheadAttention::merge_lora() {
  if (lora_rank == 0) return;
  if (!in_proj_weight.has_value() || !lora_A.has_value() || !lora_B.has_value() || !out_lora_A.has_value() ||
      !out_lora_B.has_value())
    throw UserError("MultiheadAttention::merge_lora: the adapters have no values yet (bind and train first)");
  add_low_rank(in_proj_weight, lora_B, lora_A, lora_scaling());
  add_low_rank(out_proj.weight, out_lora_B, out_lora_A, lora_scaling());
  lora_rank = 0;
}

Tensor MultiheadAttention::adapted(const Tensor& x, const Tensor& y, const Parameter& A, const Parameter& B,
                                   std::int64_t row0, Loc loc) const {
  if (lora_rank == 0) return y;
  Tensor b = B.tensor;
  if (B.shape[0] != y.size(-1)) b = slice(b, 0, row0, row0 + y.size(-1), 1, loc);  // q, k or v rows of lora_B
  Tensor h = lora_dropout.p > 0 ? lora_dropout(x, loc) : x;
  return Tensor(y + matmul(matmul(h, A.tensor.T(loc), loc), b.T(loc), loc) * lora_scaling(), loc);
}

AttentionResult MultiheadAttention::operator()(const Tensor& query, const Tensor& key, const Tensor& value,
                                               const MhaCall& call, Loc loc) const {
  LocScope at(SourceLoc::from(loc));
  const char* op = "MultiheadAttention";
  const Parameter& w0 = same_embed_dim() ? in_proj_weight : q_proj_weight;
  if (!w0.tensor.valid())
    throw UserError("MultiheadAttention: parameters are not bound to a graph; call nn::bind(model, graph) first",
                    ambient_loc());
  const int rank = query.rank();
  if ((rank != 2 && rank != 3) || key.rank() != rank || value.rank() != rank)
    fail(op, "query, key and value must all be [L, N, E] ([N, L, E] with batch_first) or unbatched [L, E], got " +
                 to_string(query.type()) + ", " + to_string(key.type()) + ", " + to_string(value.type()));
  // Canonical layout inside: batch first, [N, L, E].
  auto to_nle = [&](const Tensor& x) {
    if (rank == 2) return unsqueeze(x, 0, loc);
    return batch_first ? x : x.transpose(0, 1, loc);
  };
  Tensor q_in = to_nle(query), k_in = to_nle(key), v_in = to_nle(value);
  const std::int64_t E = embed_dim, H = num_heads, D = E / H;
  const std::int64_t N = q_in.size(0), L = q_in.size(1), S = k_in.size(1);
  auto want = [&](const Tensor& x, std::int64_t feat, const char* what) {
    if (x.size(-1) != feat || x.size(0) != N || x.dtype() != w0.dtype)
      fail(op, std::string(what) + " must have " + std::to_string(feat) + " features, batch " + std::to_string(N) +
                   " and dtype " + std::string(name_of(w0.dtype)) + ", got " + to_string(x.type()));
  };
  want(q_in, E, "query");
  want(k_in, kdim, "key");
  want(v_in, vdim, "value");
  if (v_in.size(1) != S) fail(op, "key and value must have the same length, got " + to_string(key.type()) + " and " +
                                      to_string(value.type()));

  // Input projections (one GEMM for self-attention with a packed weight, as torch does).
  auto rows = [&](const Tensor& t, std::int64_t i) { return slice(t, 0, i * E, (i + 1) * E, 1, loc); };
  auto project = [&](const Tensor& x, const Tensor& w, std::int64_t i) {
    Tensor y = adapted(x, matmul(x, w.T(loc), loc), lora_A, lora_B, i * E, loc);
    if (has_bias) y = Tensor(y + rows(in_proj_bias.tensor, i), loc);
    return y;
  };
  Tensor q, k, v;
  if (same_embed_dim() && query.value() == key.value() && key.value() == value.value()) {
    Tensor qkv = adapted(q_in, matmul(q_in, in_proj_weight.tensor.T(loc), loc), lora_A, lora_B, 0, loc);
    if (has_bias) qkv = Tensor(qkv + in_proj_bias.tensor, loc);
    q = slice(qkv, 2, 0, E, 1, loc);
    k = slice(qkv, 2, E, 2 * E, 1, loc);
    v = slice(qkv, 2, 2 * E, 3 * E, 1, loc);
  } else if (same_embed_dim()) {
    q = project(q_in, rows(in_proj_weight.tensor, 0), 0);
    k = project(k_in, rows(in_proj_weight.tensor, 1), 1);
    v = project(v_in, rows(in_proj_weight.tensor, 2), 2);
  } else {
    q = project(q_in, q_proj_weight.tensor, 0);
    k = project(k_in, k_proj_weight.tensor, 1);
    v = project(v_in, v_proj_weight.tensor, 2);
  }
  auto heads = [&](const Tensor& x, std::int64_t len) { return x.reshape({N, len, H, D}, loc).permute({0, 2, 1, 3}, loc); };

  // Masks: MHA's bool masks are true where attention is NOT allowed.
  Tensor blocked, additive;
  if (call.attn_mask.valid()) {
    const Tensor& m = call.attn_mask;
    Tensor shaped;
    if (m.rank() == 2 && m.size(0) == L && m.size(1) == S) shaped = m;
    else if (m.rank() == 3 && m.size(0) == N * H && m.size(1) == L && m.size(2) == S) shaped = m.reshape({N, H, L, S}, loc);
    else
      fail(op, "attn_mask must be [L, S] = [" + std::to_string(L) + ", " + std::to_string(S) + "] or [N*num_heads, L, S] = [" +
                   std::to_string(N * H) + ", " + std::to_string(L) + ", " + std::to_string(S) + "], got " +
                   to_string(m.type()));
    split_mask(op, shaped, /*true_blocks=*/true, blocked, additive, loc);
  }
  if (call.key_padding_mask.valid()) {
    const Tensor& m = call.key_padding_mask;
    bool ok = rank == 3 ? (m.rank() == 2 && m.size(0) == N && m.size(1) == S) : (m.rank() == 1 && m.size(0) == S);
    if (!ok)
      fail(op, "key_padding_mask must be [N, S] = [" + std::to_string(N) + ", " + std::to_string(S) + "] ([S] unbatched), got " +
                   to_string(m.type()));
    split_mask(op, m.reshape({N, 1, 1, S}, loc), /*true_blocks=*/true, blocked, additive, loc);
  }

  const Dropout* drop = attn_dropout.p > 0 && attn_dropout.training ? &attn_dropout : nullptr;
  AttentionResult r = attend(op, heads(q, L), heads(k, S), heads(v, S), 1.0 / std::sqrt(static_cast<double>(D)),
                             blocked, additive, call.is_causal, drop, loc);
  Tensor out = r.output.permute({0, 2, 1, 3}, loc).reshape({N, L, E}, loc);
  out = adapted(out, out_proj(out, loc), out_lora_A, out_lora_B, 0, loc);
  if (rank == 2) out = squeeze(out, 0, loc);
  else if (!batch_first) out = out.transpose(0, 1, loc);

  Tensor weights;
  if (call.need_weights) {
    weights = call.average_attn_weights ? r.weights.mean(1, false, loc) : r.weights;
    if (rank == 2) weights = squeeze(weights, 0, loc);
  }
  return {out, weights};
}

MultiheadAttention::CachedStep MultiheadAttention::decode_step(const Tensor& x, const Tensor& k_cache,
                                                               const Tensor& v_cache, const Tensor& cache_bias,
                                                               Loc loc) const {
  LocScope at(SourceLoc::from(loc));
  const char* op = "MultiheadAttention::decode_step";
  if (!same_embed_dim()) fail(op, "needs kdim == vdim == embed_dim (self-attention)");
  if (!in_proj_weight.tensor.valid())
    throw UserError("MultiheadAttention: parameters are not bound to a graph; call nn::bind(model, graph) first",
                    ambient_loc());
  const std::int64_t E = embed_dim, H = num_heads, D = E / H;
  if (x.rank() != 3 || x.size(1) != 1 || x.size(2) != E || x.dtype() != in_proj_weight.dtype)
    fail(op, "x must be [N, 1, " + std::to_string(E) + "] " + std::string(name_of(in_proj_weight.dtype)) + ", got " +
                 to_string(x.type()));
  const std::int64_t N = x.size(0);
  const Shape cache{N, H, k_cache.rank() == 4 ? k_cache.size(2) : -1, D};
  if (k_cache.shape() != cache || v_cache.shape() != cache || k_cache.dtype() != x.dtype() || v_cache.dtype() != x.dtype())
    fail(op, "k_cache and v_cache must be [N, H, C, D] = " + to_string(Type{x.dtype(), cache}) + ", got " +
                 to_string(k_cache.type()) + " and " + to_string(v_cache.type()));
  const std::int64_t C = cache[2];
  if (C < 1 || cache_bias.shape() != Shape{C} || cache_bias.dtype() != x.dtype())
    fail(op, "cache_bias must be [" + std::to_string(C) + "] of x's dtype, got " + to_string(cache_bias.type()));
  Tensor qkv = adapted(x, matmul(x, in_proj_weight.tensor.T(loc), loc), lora_A, lora_B, 0, loc);
  if (has_bias) qkv = Tensor(qkv + in_proj_bias.tensor, loc);
  auto head = [&](std::int64_t i) {
    return slice(qkv, 2, i * E, (i + 1) * E, 1, loc).reshape({N, 1, H, D}, loc).permute({0, 2, 1, 3}, loc);
  };
  Tensor q = head(0), k = head(1), v = head(2);
  Tensor keys = concat({k_cache, k}, 2, loc), values = concat({v_cache, v}, 2, loc);
  Tensor bias = concat({cache_bias, zeros_like(slice(cache_bias, 0, 0, 1, 1, loc))}, 0, loc);
  AttentionResult r = attend(op, q, keys, values, 1.0 / std::sqrt(static_cast<double>(D)), Tensor(), bias, false,
                             nullptr, loc);
  Tensor heads_out = r.output.permute({0, 2, 1, 3}, loc).reshape({N, 1, E}, loc);
  Tensor out = adapted(heads_out, out_proj(heads_out, loc), out_lora_A, out_lora_B, 0, loc);
  return {out, k, v};
}

}  // namespace mg::nn
