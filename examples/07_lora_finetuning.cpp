// Example 07: parameter-efficient fine-tuning with LoRA. Pre-trains example 06's
// character-level GPT on the general fortune cookies, then adapts it to a different text
// (the `songs-poems` cookies, never seen in pre-training) two ways:
//   - LoRA (nn::LoRA around each block's MLP linears and MultiheadAttention::add_lora on
//     its attention's in_proj and out_proj, rank r, alpha, dropout; B starts at zero,
//     everything else frozen): the training step differentiates only the adapters and
//     keeps AdamW state only for them;
//   - full fine-tuning of every parameter, for comparison.
// Prints the trainable fraction, the validation loss on the target before/after, and the
// training step's memory (planned peak bytes of its intermediates, plus its persistent
// state: parameters and optimizer moments) for both. Finally merges the adapters into the
// base weights: the merged model is a plain GPT (same names and shapes as example 06's)
// and computes the same loss. Exits 1 if fine-tuning did not help or the merge changed it.
//   07_lora_finetuning [--pretrain-steps N] [--finetune-steps N] [--rank R] [--alpha A] ...
#include <cmath>
#include <cstdio>
#include <map>
#include <random>

#include "examples/main_guard.hpp"
#include "examples/minigpt.hpp"
#include "examples/progress.hpp"

namespace {

using namespace mg;
constexpr double kLn2 = 0.69314718055994530942;
constexpr std::int64_t kB = 16;

// Bits per character over every window of `text` (as example 06's final number).
template <class M>
double evaluate(M& model, const std::vector<std::int64_t>& text, std::int64_t max_batches) {
  const std::int64_t T = model.cfg.ctx;
  Graph g;
  nn::bind(model, g);
  Tensor x = g.input("x", i64, {kB, T}), y = g.input("y", i64, {kB, T});
  Executable exe = nn::compile_with_parameters(g, {model.loss(x, y)}, model);
  Array X = Array::zeros(Type{i64, {kB, T}}), Y = X.clone();
  const std::int64_t n = std::min(max_batches, examples::full_batches(text, kB, T));
  double sum = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    examples::window_batch(text, i, kB, T, X, Y);
    sum += exe.run({{"x", X}, {"y", Y}})[0].at(0);
  }
  return sum / static_cast<double>(n) / kLn2;
}

struct Trained {
  std::size_t peak_bytes = 0, state_bytes = 0;
};

template <class M>
Trained train(M& model, const std::vector<std::int64_t>& text, std::int64_t steps, double lr, const char* title,
              std::uint64_t seed) {
  const std::int64_t T = model.cfg.ctx;
  Graph g;
  nn::bind(model, g, seed);
  Tensor x = g.input("x", i64, {kB, T}), y = g.input("y", i64, {kB, T});
  auto step = nn::compile_train(g, model.loss(x, y), model, nn::AdamW{.lr = lr, .beta2 = 0.99, .weight_decay = 0.01},
                                {.clip_grad_norm = 1.0, .schedule = nn::warmup_cosine_lr(steps / 10, steps, lr / 10)});
  Trained t{step.executable().peak_bytes(), 0};
  for (const auto& [name, value] : step.state_dict()) t.state_bytes += static_cast<std::size_t>(value.nbytes());
  std::mt19937_64 rng(seed + 1);
  Array X = Array::zeros(Type{i64, {kB, T}}), Y = X.clone();
  examples::Progress bar(title, steps, kB * T);
  for (std::int64_t s = 0; s < steps; ++s) {
    examples::sample_batch(text, kB, T, rng, X, Y);
    bar.tick(step.run({{"x", X}, {"y", Y}}) / kLn2);
  }
  bar.done();
  return t;
}

template <class M>
std::map<std::string, Array> values(M& model) {
  std::map<std::string, Array> out;
  for (auto& [name, p] : nn::named_parameters(model)) out[name] = p->value().clone();
  return out;
}

double mib(std::size_t b) { return static_cast<double>(b) / (1024.0 * 1024.0); }

}  // namespace

int main(int argc, char** argv) try {
  examples::Args args(argc, argv,
                      {{"pretrain-steps", "600"}, {"finetune-steps", "300"}, {"rank", "8"}, {"alpha", "16"},
                       {"lora-dropout", "0.05"}, {"lr", "0.002"}, {"lora-lr", "0.004"}, {"seed", "0"}, {"eval-batches", "60"},
                       {"data", "/usr/share/games/fortunes"}});
  examples::GptConfig cfg;
  cfg.lora = {.rank = args.integer("rank"), .alpha = std::stod(args.str("alpha")),
              .dropout = std::stod(args.str("lora-dropout"))};
  const auto seed = static_cast<std::uint64_t>(args.integer("seed"));
  const std::int64_t eval_batches = args.integer("eval-batches");  // windows of 16 held-out texts each
  examples::Corpus source = examples::load_fortunes(args.str("data"), examples::gpt_files());
  examples::Corpus target = examples::load_fortunes(args.str("data"), {"songs-poems"});
  std::printf("pre-training text: %zu characters; fine-tuning target (songs-poems): %zu train, %zu validation\n",
              source.train.size(), target.train.size(), target.val.size());

  // 1. Pre-train on the general cookies.
  examples::Gpt base(cfg);
  train(base, source.train, args.integer("pretrain-steps"), std::stod(args.str("lr")), "pre-train", seed);
  const auto pretrained = values(base);
  const double before = evaluate(base, target.val, eval_batches);
  std::printf("pre-trained model: %.3f bits/char on the source's held-out text, %.3f on the target's\n\n",
              evaluate(base, source.val, eval_batches), before);

  // 2. LoRA: the pre-trained weights (loaded by name; A and B are new), only adapters train.
  examples::GptT<nn::LoRA> lora(cfg);
  // The attention's adapters without dropout: a dropped copy of each projection's input
  // would hold more activation memory than freezing the base weights saves.
  for (auto& block : lora.h) block.attn.add_lora({.rank = cfg.lora.rank, .alpha = cfg.lora.alpha});
  {
    Graph g;
    nn::bind(lora, g, seed + 5);  // draws A (and zero B) before the pre-trained values load
  }
  nn::LoadReport rep = nn::load_parameters(nn::named_parameters(lora), pretrained, {.strict = false}, "pre-trained");
  std::int64_t total = 0, trainable = 0;
  for (auto& [name, p] : nn::named_parameters(lora)) {
    if (!is_float(p->dtype)) continue;  // a Dropout's stream counter
    const bool adapter = name.find(".lora_") != std::string::npos;
    p->trainable = adapter;  // everything else frozen, as peft does
    total += numel(p->shape);
    if (adapter) trainable += numel(p->shape);
  }
  std::printf("LoRA rank %lld, alpha %g, dropout %g on every block's c_fc and c_proj, undropped on its attention's in_proj and out_proj (%zu new keys: A, B, dropout streams); "
              "%lld of %lld parameters trainable (%.2f%%)\n",
              static_cast<long long>(cfg.lora.rank), cfg.lora.alpha, cfg.lora.dropout, rep.missing.size(),
              static_cast<long long>(trainable), static_cast<long long>(total),
              100.0 * static_cast<double>(trainable) / static_cast<double>(total));
  nn::eval(lora);
  const double lora_start = evaluate(lora, target.val, eval_batches);
  nn::train(lora);
  const std::int64_t ft_steps = args.integer("finetune-steps");
  Trained lt = train(lora, target.train, ft_steps, std::stod(args.str("lora-lr")), "LoRA", seed + 2);
  nn::eval(lora);
  const double lora_after = evaluate(lora, target.val, eval_batches);

  // 3. Full fine-tuning of a copy of the pre-trained model, same steps and recipe.
  examples::Gpt full(cfg);
  {
    Graph g;
    nn::bind(full, g);
  }
  nn::load_parameters(nn::named_parameters(full), pretrained, {}, "pre-trained");
  Trained ft = train(full, target.train, ft_steps, std::stod(args.str("lr")), "full", seed + 2);
  const double full_after = evaluate(full, target.val, eval_batches);

  std::printf("\n%-22s %12s %14s %16s %18s\n", "target (songs-poems)", "val before", "val after",
              "step peak (MiB)", "state (MiB)");
  std::printf("%-22s %12.3f %14.3f %16.2f %18.2f\n", "LoRA", lora_start, lora_after, mib(lt.peak_bytes),
              mib(lt.state_bytes));
  std::printf("%-22s %12.3f %14.3f %16.2f %18.2f\n", "full fine-tuning", before, full_after, mib(ft.peak_bytes),
              mib(ft.state_bytes));
  std::printf("(bits/char on the target's held-out cookies; peak: the memory plan's intermediates of one training "
              "step; state: parameters + AdamW moments)\n");

  // 4. Merge for export: a plain GPT with the adapters folded in.
  for (std::size_t i = 0; i < lora.h.size(); ++i) {
    lora.h[i].c_fc.merge();
    lora.h[i].c_proj.merge();
    lora.h[i].attn.merge_lora();
  }
  examples::Gpt merged(cfg);
  {
    Graph g;
    nn::bind(merged, g);
  }
  nn::load_parameters(nn::named_parameters(merged), values(lora), {}, "merged LoRA");  // strict: same names
  const double merged_val = evaluate(merged, target.val, eval_batches);
  std::printf("merged into a plain GPT (example 06's type, exports to C99 like it): %.4f bits/char (LoRA: %.4f)\n",
              merged_val, lora_after);

  const bool helped = lora_after < lora_start - 0.05, same = std::abs(merged_val - lora_after) < 1e-3,
             zero_start = std::abs(lora_start - before) < 1e-4;
  std::printf("LoRA starts at the pre-trained loss: %s; fine-tuning helped: %s; merge kept the loss: %s\n",
              zero_start ? "yes" : "NO", helped ? "yes" : "NO", same ? "yes" : "NO");
  return helped && same && zero_start ? 0 : 1;
} MG_EXAMPLE_CATCH
