#!/usr/bin/env python3
"""functorch's per-sample gradients (vmap(grad(loss)) over a batch), the peer of
bench/per_sample_bench.cpp: the same two models (examples 04 and 05), batch 64, f32.
Prints the median milliseconds of one call (all per-sample gradients of the batch).

    functorch_per_sample.py --model mlp|cnn --threads N [--iters N] [--warmup N]
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from functorch import grad, make_functional, vmap


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(784, 128), nn.Linear(128, 10)

    def forward(self, x):
        return self.fc2(F.relu(self.fc1(x)))


class Cnn(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, padding=1)
        self.fc = nn.Linear(784, 10)

    def forward(self, x):
        h = F.max_pool2d(F.relu(self.conv1(x)), 2)
        h = F.max_pool2d(F.relu(self.conv2(h)), 2)
        return self.fc(h.flatten(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", choices=["mlp", "cnn"], required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--iters", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--batch", type=int, default=64)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = Mlp() if a.model == "mlp" else Cnn()
    shape = (784,) if a.model == "mlp" else (1, 28, 28)
    fmodel, params = make_functional(model)
    x = torch.randn(a.batch, *shape)
    y = torch.randint(0, 10, (a.batch,))

    def loss(p, xi, yi):  # one example
        return F.cross_entropy(fmodel(p, xi.unsqueeze(0)), yi.unsqueeze(0))

    per_sample = vmap(grad(loss), in_dims=(None, 0, 0))
    times = []
    for i in range(a.warmup + a.iters):
        t0 = time.perf_counter()
        g = per_sample(params, x, y)
        s = float(g[0].sum())  # force the result
        if i >= a.warmup:
            times.append((time.perf_counter() - t0) * 1e3)
    assert s == s
    times.sort()
    print(f"{times[len(times) // 2]:.4f}")


if __name__ == "__main__":
    main()
