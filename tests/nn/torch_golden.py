# Produces the golden values embedded in tests/nn/test_optim.cpp with PyTorch (float64).
# Run: /usr/bin/python3 tests/nn/torch_golden.py   (Debian python3-torch)
import torch

torch.set_default_dtype(torch.float64)
c = torch.tensor([1.0, 3.0, 0.5])
d = torch.tensor([0.2, -0.4, 1.0])

def run(make, steps=5, sched=None, clip=None):
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    opt = make([w])
    s = sched(opt) if sched else None
    for _ in range(steps):
        opt.zero_grad()
        loss = (w * w * c).sum() + (w * d).sum()
        loss.backward()
        if clip is not None:
            torch.nn.utils.clip_grad_norm_([w], clip)
        opt.step()
        if s: s.step()
    return w.detach().tolist()

cases = {
    "sgd": run(lambda p: torch.optim.SGD(p, lr=0.1)),
    "sgd_momentum_dampening_wd": run(lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    "sgd_nesterov": run(lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True)),
    "adam": run(lambda p: torch.optim.Adam(p, lr=0.1)),
    "adam_wd": run(lambda p: torch.optim.Adam(p, lr=0.05, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    "adamw": run(lambda p: torch.optim.AdamW(p, lr=0.05, weight_decay=0.1)),
    "rmsprop": run(lambda p: torch.optim.RMSprop(p, lr=0.01)),
    "rmsprop_centered_momentum": run(lambda p: torch.optim.RMSprop(p, lr=0.01, alpha=0.9, momentum=0.5, centered=True, weight_decay=0.01)),
    "adam_steplr": run(lambda p: torch.optim.Adam(p, lr=0.1), sched=lambda o: torch.optim.lr_scheduler.StepLR(o, 2, 0.5)),
    "sgd_cosine": run(lambda p: torch.optim.SGD(p, lr=0.1), sched=lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, 4, 0.01)),
    "sgd_clip": run(lambda p: torch.optim.SGD(p, lr=0.1), clip=0.5),
}
for k, v in cases.items():
    print('  {"%s", {%s}},' % (k, ", ".join("%.17g" % x for x in v)))
