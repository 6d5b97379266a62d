# Reference: example 06's miniGPT recipe in PyTorch (Debian python3-torch), to compare the
# validation loss reached in the same wall time with ./build/examples/06_transformer_minigpt.
# Same model (torch.nn.Embedding, MultiheadAttention, LayerNorm, Linear, GELU with torch's
# default initialisation, as ours), same text and split (every tenth fortune cookie held
# out), same recipe (AdamW lr 2e-3 betas (0.9, 0.99) wd 0.1, 100 warm-up steps, cosine to
# lr/10, clipping at 1.0, batch 16, context 64), same final metric (bits per character over
# every window of the held-out text).
# Run: /usr/bin/python3 bench/torch_minigpt.py [--steps N | --seconds S] [--threads T] [--seed S]
import argparse
import math
import os
import time

import torch

p = argparse.ArgumentParser()
p.add_argument("--steps", type=int, default=1500)
p.add_argument("--seconds", type=float, default=0)
p.add_argument("--threads", type=int, default=2)
p.add_argument("--seed", type=int, default=0)
p.add_argument("--batch", type=int, default=16)
p.add_argument("--lr", type=float, default=2e-3)
p.add_argument("--warmup", type=int, default=100)
p.add_argument("--eval-every", type=int, default=250)
p.add_argument("--data", default="/usr/share/games/fortunes")
a = p.parse_args()
torch.set_num_threads(a.threads)
torch.manual_seed(a.seed)

FILES = ["computers", "cookie", "definitions", "drugs", "education", "ethnic", "food", "fortunes", "goedel",
         "humorists", "kids", "law", "linux", "linuxcookie", "literature", "love", "magic", "medicine", "men-women",
         "miscellaneous", "news", "people", "pets", "platitudes", "politics", "riddles", "science", "sports",
         "startrek", "wisdom", "work", "zippy"]


def encode(ch):  # examples/minigpt.hpp: '\n' -> 0, printable ASCII -> 1..95, tab -> space
    c = ord(ch)
    if c == 10:
        return 0
    if c == 9:
        c = 32
    return c - 31 if 32 <= c <= 126 else -1


def load():
    cookies = []
    for f in FILES:
        cur = ""
        with open(os.path.join(a.data, f), "rb") as fh:
            lines = fh.read().split(b"\n")
        if lines and lines[-1] == b"":  # as std::getline: no empty line after the last newline
            lines.pop()
        for raw in lines:
            line = raw.decode("latin-1")
            if line == "%":
                if cur:
                    cookies.append(cur)
                cur = ""
            else:
                cur += line + "\n"
        if cur:
            cookies.append(cur)
    train, val = [], []
    for i, c in enumerate(cookies):
        out = val if i % 10 == 9 else train
        out.extend(t for t in map(encode, c) if t >= 0)
        out.append(0)
    return torch.tensor(train), torch.tensor(val)


V, T, L, H, D, B = 96, 64, 4, 4, 128, a.batch


class Block(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1, self.ln_2 = torch.nn.LayerNorm(D), torch.nn.LayerNorm(D)
        self.attn = torch.nn.MultiheadAttention(D, H, batch_first=True)
        self.c_fc, self.c_proj = torch.nn.Linear(D, 4 * D), torch.nn.Linear(4 * D, D)
        self.register_buffer("mask", torch.ones(T, T, dtype=torch.bool).triu(1))

    def forward(self, x):
        h = self.ln_1(x)
        n = x.size(1)
        x = x + self.attn(h, h, h, need_weights=False, attn_mask=self.mask[:n, :n])[0]
        return x + self.c_proj(torch.nn.functional.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class Gpt(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.wte, self.wpe = torch.nn.Embedding(V, D), torch.nn.Embedding(T, D)
        self.h = torch.nn.ModuleList(Block() for _ in range(L))
        self.ln_f, self.lm_head = torch.nn.LayerNorm(D), torch.nn.Linear(D, V)

    def forward(self, idx, y):
        x = self.wte(idx) + self.wpe(torch.arange(idx.size(1)))
        for b in self.h:
            x = b(x)
        logits = self.lm_head(self.ln_f(x))
        return torch.nn.functional.cross_entropy(logits.reshape(-1, V), y.reshape(-1))


train, val = load()
print(f"fortunes: {len(train)} training and {len(val)} validation characters")
model = Gpt()
print(f"parameters: {sum(p.numel() for p in model.parameters())}")
opt = torch.optim.AdamW(model.parameters(), lr=a.lr, betas=(0.9, 0.99), weight_decay=0.1)
total = a.steps


def lr_at(s):  # nanoGPT's get_lr, as nn::warmup_cosine_lr
    if s < a.warmup:
        return a.lr * (s + 1) / a.warmup
    if s >= total:
        return a.lr / 10
    return a.lr / 10 + 0.5 * (1 + math.cos(math.pi * (s - a.warmup) / max(1, total - a.warmup))) * (a.lr - a.lr / 10)


def batch(data):
    s = torch.randint(0, len(data) - T - 1, (B,))
    return torch.stack([data[i:i + T] for i in s]), torch.stack([data[i + 1:i + T + 1] for i in s])


def step(s):
    for g in opt.param_groups:
        g["lr"] = lr_at(s)
    x, y = batch(train)
    loss = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss.item()


@torch.no_grad()
def full_val():
    n = (len(val) - 1) // T // B
    tot = 0.0
    for i in range(n):
        s = torch.arange(i * B, (i + 1) * B) * T
        x = torch.stack([val[j:j + T] for j in s])
        y = torch.stack([val[j + 1:j + T + 1] for j in s])
        tot += model(x, y).item()
    return tot / n / math.log(2)


t0 = time.time()
eval_s = 0.0
done = 0


def elapsed():
    return time.time() - t0 - eval_s


# --seconds: train until the training time reaches the budget, the cosine schedule's length
# re-estimated from the speed so far at every step (as example 06 does).
while (elapsed() < a.seconds) if a.seconds > 0 else (done < total):
    if a.seconds > 0 and done >= 10:
        total = max(done + 1, int(done * a.seconds / elapsed()))
    loss = step(done)
    done += 1
    if done % a.eval_every == 0:
        el = elapsed()
        print(f"step {done:5d}  train(batch) {loss / math.log(2):.3f} bits/char  ({el:.0f} s, {done * B * T / el:.0f} tokens/s)",
              flush=True)
train_s = elapsed()
print(f"torch final validation loss over the whole held-out text: {full_val():.4f} bits/char after {done} steps, "
      f"{train_s:.1f} s of training ({a.threads} threads)")
