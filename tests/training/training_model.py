"""A tiny causal transformer and the helpers the training-loop tests share.

    model = TinyTransformer()                 # float features (B, T, 6) -> logits (B, T, 5)
    x, y = batch(step)                        # sizes vary with the step
    runs = twin(model, backend)               # (eager model, compiled copy) with equal weights
"""

from __future__ import annotations

import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import symc

D_IN, D, HEADS, CLASSES = 6, 16, 2, 5


class Attention(nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(D, 3 * D)
        self.proj = nn.Linear(D, D)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = self.qkv(x).split(D, dim=2)
        q, k, v = (z.view(b, t, HEADS, D // HEADS).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(D // HEADS)
        mask = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
        out = scores.softmax(dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(b, t, D))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln1 = nn.LayerNorm(D)
        self.attn = Attention()
        self.ln2 = nn.LayerNorm(D)
        self.mlp = nn.Sequential(nn.Linear(D, 2 * D), nn.GELU(), nn.Linear(2 * D, D))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        h = self.mlp(self.ln2(x))
        if self.training:          # a deterministic train/eval difference (no dropout RNG)
            h = h * 0.75
        return x + h


class TinyTransformer(nn.Module):
    def __init__(self, layers: int = 1, checkpointed: bool = False):
        super().__init__()
        self.embed = nn.Linear(D_IN, D)
        self.blocks = nn.ModuleList(Block() for _ in range(layers))
        self.ln_f = nn.LayerNorm(D)
        self.head = nn.Linear(D, CLASSES)
        self.checkpointed = checkpointed

    def forward(self, x):
        h = self.embed(x)
        for block in self.blocks:
            if self.checkpointed:
                h = torch.utils.checkpoint.checkpoint(block, h, use_reentrant=False)
            else:
                h = block(h)
        return self.head(self.ln_f(h))


def loss_fn(logits, y):
    return F.cross_entropy(logits.reshape(-1, CLASSES), y.reshape(-1))


# Sizes per step: batch and sequence length change, incl. 1, 2, primes, and lengths above the
# first call's.
SHAPES = [(2, 5), (3, 7), (2, 11), (1, 2), (3, 13), (1, 1)]


def batch(step: int, offset: int = 0):
    b, t = SHAPES[(step + offset) % len(SHAPES)]
    g = torch.Generator().manual_seed(1000 + 17 * step + offset)
    x = torch.randn(b, t, D_IN, generator=g)
    y = torch.randint(0, CLASSES, (b, t), generator=g)
    return x, y


def twin(model: nn.Module, backend: str):
    """(eager model, its deep copy compiled with `backend`): equal weights, separate state."""
    other = copy.deepcopy(model)
    return model, symc.compile(other, backend=backend), other


def sgd(model: nn.Module):
    # Weight decay and momentum move a parameter whose grad is zero, but not one whose grad is
    # None, as eager leaves it: a zero-instead-of-None grad shows up in the final weights.
    return torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=0.05)


def assert_same_training(losses_eager, losses_compiled, eager, inner, *, tol=2e-4):
    torch.testing.assert_close(torch.stack(losses_compiled), torch.stack(losses_eager),
                               rtol=tol, atol=tol)
    for (name, p), (_, q) in zip(eager.named_parameters(), inner.named_parameters(),
                                 strict=True):
        torch.testing.assert_close(q, p, rtol=tol, atol=tol, msg=lambda m, n=name: f"{n}: {m}")
        assert (p.grad is None) == (q.grad is None), f"{name}: grad None in one run only"
