// The character-level GPT of examples 06 and 07, shared with bench/ so the benchmark is
// about the model the examples train: token + position embeddings, pre-LayerNorm blocks
// (causal multi-head self-attention, GELU MLP), a final LayerNorm and a linear head; plus
// the text: Debian's `fortunes` package, one character per token.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <minigrad/minigrad.hpp>
#include <minigrad/nn.hpp>

namespace mg::examples {

struct GptConfig {
  std::int64_t vocab = 96, ctx = 64, layers = 4, heads = 4, dim = 128;
  nn::LoRAOptions lora = {};  // used when the MLP's linears are nn::LoRA (example 07)
};

// The MLP's linear layers are nn::Linear, or nn::LoRA adapters around them (example 07);
// the parameter names are the same either way ("h.0.c_fc.weight"), so a plain model's
// weights load into an adapted one and a merged adapted one's back into a plain one.
template <class Lin>
Lin make_linear(std::int64_t in, std::int64_t out, const GptConfig& c) {
  if constexpr (std::is_same_v<Lin, nn::LoRA>) return nn::LoRA(in, out, c.lora);
  else return Lin(in, out);
}

template <class Lin = nn::Linear>
struct GptBlockT {
  nn::LayerNorm ln_1, ln_2;
  nn::MultiheadAttention attn;
  Lin c_fc, c_proj;
  explicit GptBlockT(const GptConfig& c)
      : ln_1({c.dim}), ln_2({c.dim}), attn(c.dim, c.heads, {.batch_first = true}),
        c_fc(make_linear<Lin>(c.dim, 4 * c.dim, c)), c_proj(make_linear<Lin>(4 * c.dim, c.dim, c)) {}
  // x [B, T, dim] -> [B, T, dim]
  Tensor operator()(const Tensor& x) const {
    Tensor h = ln_1(x);
    Tensor a = attn(h, h, h, {.need_weights = false, .is_causal = true}).output;
    Tensor y = x + a;
    return y + mlp(y);
  }
  // The feed-forward half on the residual stream y (the KV-cache decoder calls it too, so
  // both compute one function).
  Tensor mlp(const Tensor& y) const { return c_proj(gelu(c_fc(ln_2(y)), "tanh")); }  // GPT-2's GELU
  template <class F> void for_each_parameter(F&& f) {
    nn::for_each_parameter(ln_1, f, "ln_1.");
    nn::for_each_parameter(attn, f, "attn.");
    nn::for_each_parameter(ln_2, f, "ln_2.");
    nn::for_each_parameter(c_fc, f, "c_fc.");
    nn::for_each_parameter(c_proj, f, "c_proj.");
  }
  template <class F> void for_each_submodule(F&& f) { f(ln_1), f(attn), f(ln_2), f(c_fc), f(c_proj); }
};

template <class Lin = nn::Linear>
struct GptT {
  GptConfig cfg;
  nn::Embedding wte, wpe;
  nn::ModuleList<GptBlockT<Lin>> h;
  nn::LayerNorm ln_f;
  nn::Linear lm_head;
  explicit GptT(const GptConfig& c)
      : cfg(c), wte(c.vocab, c.dim), wpe(c.ctx, c.dim), h(std::vector<GptBlockT<Lin>>(c.layers, GptBlockT<Lin>(c))),
        ln_f({c.dim}), lm_head(c.dim, c.vocab) {}
  // idx i64 [B, T] (T <= ctx) -> logits [B, T, vocab]
  Tensor operator()(const Tensor& idx) const {
    const std::int64_t T = idx.size(1);
    Tensor x = wte(idx) + wpe(graph_of(idx).arange(0, static_cast<double>(T)));
    for (const GptBlockT<Lin>& b : h) x = b(x);
    return lm_head(ln_f(x));
  }
  // Mean cross-entropy (nats per character) of predicting y [B, T] from x [B, T].
  Tensor loss(const Tensor& x, const Tensor& y) const {
    Tensor logits = (*this)(x);
    const std::int64_t n = x.numel();
    return nn::cross_entropy(logits.reshape({n, cfg.vocab}), y.reshape({n}));
  }
  template <class F> void for_each_parameter(F&& f) {
    nn::for_each_parameter(wte, f, "wte.");
    nn::for_each_parameter(wpe, f, "wpe.");
    nn::for_each_parameter(h, f, "h.");
    nn::for_each_parameter(ln_f, f, "ln_f.");
    nn::for_each_parameter(lm_head, f, "lm_head.");
  }
  template <class F> void for_each_submodule(F&& f) { f(wte), f(wpe), f(h), f(ln_f), f(lm_head); }
};

using GptBlock = GptBlockT<>;
using Gpt = GptT<>;

// ---- the text ----
// Tokens: '\n' is 0, printable ASCII 32..126 are 1..95; tabs become spaces, other bytes
// (overstrike backspaces, the rare Latin-1 letter) are dropped.
inline int encode_char(unsigned char c) {
  if (c == '\n') return 0;
  if (c == '\t') c = ' ';
  return c >= 32 && c <= 126 ? c - 31 : -1;
}
inline char decode_token(std::int64_t t) { return t == 0 ? '\n' : static_cast<char>(t + 31); }

struct Corpus {
  std::vector<std::int64_t> train, val;
};

// Reads the named fortune files (cookies separated by "%" lines) and holds out every tenth
// cookie, in file order, for validation: train and validation text never share a cookie,
// and bench/torch_minigpt.py makes exactly the same split.
inline Corpus load_fortunes(const std::string& dir, const std::vector<std::string>& files) {
  std::vector<std::string> cookies;
  for (const std::string& f : files) {
    std::ifstream in(std::filesystem::path(dir) / f, std::ios::binary);
    if (!in)
      throw UserError("load_fortunes: cannot read " + (std::filesystem::path(dir) / f).string() +
                      " (Debian package `fortunes`; scripts/setup.sh installs it)");
    std::string line, cur;
    while (std::getline(in, line)) {
      if (line == "%") {
        if (!cur.empty()) cookies.push_back(cur);
        cur.clear();
      } else {
        cur += line + "\n";
      }
    }
    if (!cur.empty()) cookies.push_back(cur);
  }
  Corpus c;
  for (std::size_t i = 0; i < cookies.size(); ++i) {
    auto& out = i % 10 == 9 ? c.val : c.train;
    for (unsigned char ch : cookies[i])
      if (int t = encode_char(ch); t >= 0) out.push_back(t);
    out.push_back(0);  // a blank line between cookies
  }
  return c;
}

// Random windows: x = text[s : s+T], y = text[s+1 : s+T+1] for B random starts.
inline void sample_batch(const std::vector<std::int64_t>& text, std::int64_t B, std::int64_t T, std::mt19937_64& rng,
                         Array& x, Array& y) {
  std::uniform_int_distribution<std::size_t> start(0, text.size() - static_cast<std::size_t>(T) - 2);
  for (std::int64_t b = 0; b < B; ++b) {
    std::size_t s = start(rng);
    for (std::int64_t t = 0; t < T; ++t) {
      x.set(b * T + t, static_cast<double>(text[s + static_cast<std::size_t>(t)]));
      y.set(b * T + t, static_cast<double>(text[s + static_cast<std::size_t>(t) + 1]));
    }
  }
}

// The text for sample_batch's windows: every non-overlapping window x = text[s : s+T],
// y = text[s+1 : s+T+1] (s = 0, T, 2T, ...), in batches of B; the last partial batch is
// dropped. For a validation loss over the whole held-out text, the same in every run.
inline std::int64_t full_batches(const std::vector<std::int64_t>& text, std::int64_t B, std::int64_t T) {
  return (static_cast<std::int64_t>(text.size()) - 1) / T / B;
}
inline void window_batch(const std::vector<std::int64_t>& text, std::int64_t i, std::int64_t B, std::int64_t T,
                         Array& x, Array& y) {
  for (std::int64_t b = 0; b < B; ++b)
    for (std::int64_t t = 0; t < T; ++t) {
      std::size_t s = static_cast<std::size_t>((i * B + b) * T + t);
      x.set(b * T + t, static_cast<double>(text[s]));
      y.set(b * T + t, static_cast<double>(text[s + 1]));
    }
}

// The fortune files both example 06 and bench/torch_minigpt.py train on (the pictures in
// `art`/`ascii-art` and the `songs-poems` example 07 fine-tunes on are left out).
inline const std::vector<std::string>& gpt_files() {
  static const std::vector<std::string> f{
      "computers", "cookie",      "definitions", "drugs",     "education",     "ethnic",     "food",
      "fortunes",  "goedel",      "humorists",   "kids",      "law",           "linux",      "linuxcookie",
      "literature", "love",       "magic",       "medicine",  "men-women",     "miscellaneous", "news",
      "people",    "pets",        "platitudes",  "politics",  "riddles",       "science",    "sports",
      "startrek",  "wisdom",      "work",        "zippy"};
  return f;
}

}  // namespace mg::examples
