# Produces tests/nn/data/attention_golden.safetensors with PyTorch (float64), the oracle of
# tests/nn/test_attention.cpp. Run: /usr/bin/python3 tests/nn/attention_golden.py
# (Debian python3-torch 1.13). The suite needs no torch: the file is committed.
#
# Per case "<case>.": the module's state_dict as torch saves it ("<case>.param.<name>"),
# the inputs ("<case>.in.<name>"), the outputs ("<case>.out.output", "<case>.out.weights"),
# the gradients of loss = sum(output * r_out) + sum(weights * r_w) with respect to inputs
# and parameters ("<case>.grad.<name>"), and for cases with "<case>.gg.*": the gradient of
# sum(dloss/dquery ** 2) (a grad of grad, create_graph=True).
import json
import os
import struct

import torch

torch.manual_seed(0)
torch.set_default_dtype(torch.float64)
tensors = {}


def put(name, t):
    tensors[name] = t.detach().contiguous()


def mha_case(case, E, H, N, L, S, batch_first=False, kdim=None, vdim=None, bias=True, self_attn=False,
             attn_mask=None, key_padding_mask=None, average=True, unbatched=False, double=False, causal=False):
    m = torch.nn.MultiheadAttention(E, H, bias=bias, kdim=kdim, vdim=vdim, batch_first=batch_first)
    with torch.no_grad():  # non-zero biases, so a bias mix-up shows
        for n, p in m.named_parameters():
            if "bias" in n:
                p.uniform_(-0.5, 0.5)
    for n, p in m.state_dict().items():
        put(f"{case}.param.{n}", p)

    def shape(len_, feat):
        if unbatched:
            return (len_, feat)
        return (N, len_, feat) if batch_first else (len_, N, feat)

    q = torch.randn(shape(L, E), requires_grad=True)
    if self_attn:
        k = v = q
    else:
        k = torch.randn(shape(S, kdim or E), requires_grad=True)
        v = torch.randn(shape(S, vdim or E), requires_grad=True)
    ins = {"query": q} if self_attn else {"query": q, "key": k, "value": v}
    for n, t in ins.items():
        put(f"{case}.in.{n}", t)
    mask = attn_mask
    if causal:  # ours: is_causal=True; torch 1.13's MHA takes the mask
        mask = torch.ones(L, S, dtype=torch.bool).triu(1)
    if attn_mask is not None:
        put(f"{case}.in.attn_mask", attn_mask)
    if key_padding_mask is not None:
        put(f"{case}.in.key_padding_mask", key_padding_mask)
    out, w = m(q, k, v, key_padding_mask=key_padding_mask, need_weights=True, attn_mask=mask,
               average_attn_weights=average)
    put(f"{case}.out.output", out)
    put(f"{case}.out.weights", w)
    r_out, r_w = torch.randn(out.shape), torch.randn(w.shape)
    put(f"{case}.in.r_out", r_out)
    put(f"{case}.in.r_w", r_w)
    loss = (out * r_out).sum() + (w * r_w).sum()
    wrt = list(ins.values()) + list(m.parameters())
    names = list(ins.keys()) + [n for n, _ in m.named_parameters()]
    grads = torch.autograd.grad(loss, wrt, create_graph=double)
    for n, g in zip(names, grads):
        put(f"{case}.grad.{n}", g)
    if double:
        loss2 = (grads[0] ** 2).sum()
        gg = torch.autograd.grad(loss2, wrt, allow_unused=True)
        for n, g, x in zip(names, gg, wrt):
            put(f"{case}.gg.{n}", g if g is not None else torch.zeros_like(x))


E = 8
mha_case("self_bf", E, 2, N=2, L=5, S=5, batch_first=True, self_attn=True, double=True)
mha_case("cross_kdim", E, 4, N=2, L=3, S=4, kdim=6, vdim=5, average=False,
         attn_mask=torch.randn(3, 4), key_padding_mask=torch.tensor([[False, False, True, False],
                                                                       [False, True, True, False]]))
mha_case("packed_bool", E, 2, N=2, L=4, S=4, batch_first=True,
         attn_mask=torch.rand(2 * 2, 4, 4) < 0.3, key_padding_mask=torch.tensor([[False] * 3 + [True], [False] * 4]),
         double=True)
mha_case("causal", E, 2, N=3, L=4, S=4, self_attn=True, causal=True)
mha_case("unbatched_nobias", E, 2, N=1, L=3, S=5, bias=False, unbatched=True, average=False)


# The functional form: PyTorch 2's documented reference computation of
# scaled_dot_product_attention (torch 1.13 has no public one).
def sdpa_case(case, shape_q, shape_k, shape_v, mask=None, causal=False, scale=None):
    q = torch.randn(shape_q, requires_grad=True)
    k = torch.randn(shape_k, requires_grad=True)
    v = torch.randn(shape_v, requires_grad=True)
    L, S = q.size(-2), k.size(-2)
    s = scale if scale is not None else 1 / q.size(-1) ** 0.5
    bias = torch.zeros(L, S)
    if causal:
        bias.masked_fill_(torch.ones(L, S, dtype=torch.bool).tril().logical_not(), float("-inf"))
    if mask is not None:
        put(f"{case}.in.attn_mask", mask)
        if mask.dtype == torch.bool:
            bias = bias.masked_fill(mask.logical_not(), float("-inf"))
        else:
            bias = bias + mask
    w = torch.softmax(q @ k.transpose(-2, -1) * s + bias, dim=-1)
    out = w @ v
    for n, t in (("query", q), ("key", k), ("value", v)):
        put(f"{case}.in.{n}", t)
    put(f"{case}.out.output", out)
    put(f"{case}.out.weights", w)
    r_out, r_w = torch.randn(out.shape), torch.randn(w.shape)
    put(f"{case}.in.r_out", r_out)
    put(f"{case}.in.r_w", r_w)
    loss = (out * r_out).sum() + (w * r_w).sum()
    for n, g in zip(("query", "key", "value"), torch.autograd.grad(loss, (q, k, v))):
        put(f"{case}.grad.{n}", g)


keep = torch.rand(4, 6) < 0.6
keep[:, 0] = True  # every query keeps a key
sdpa_case("sdpa_bool", (2, 3, 4, 5), (2, 3, 6, 5), (2, 3, 6, 7), mask=keep, scale=0.3)
sdpa_case("sdpa_causal_float", (3, 5, 4), (3, 5, 4), (3, 5, 2), mask=torch.randn(5, 5), causal=True)

# SafeTensors by hand (8-byte little-endian header size, JSON header, raw data).
dtypes = {torch.float64: "F64", torch.bool: "BOOL"}
header, blobs, offset = {"__metadata__": {"generator": "tests/nn/attention_golden.py", "torch": torch.__version__}}, [], 0
for name in sorted(tensors):
    t = tensors[name]
    data = t.numpy().tobytes()
    header[name] = {"dtype": dtypes[t.dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(data)]}
    blobs.append(data)
    offset += len(data)
hdr = json.dumps(header, separators=(",", ":")).encode()
hdr += b" " * (-len(hdr) % 8)
path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "attention_golden.safetensors")
os.makedirs(os.path.dirname(path), exist_ok=True)
with open(path, "wb") as f:
    f.write(struct.pack("<Q", len(hdr)) + hdr + b"".join(blobs))
print(f"wrote {len(tensors)} tensors to {path}")
