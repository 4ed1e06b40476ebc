"""CPU attention without dropout saves its log-sum-exp and its backward reads it
(prims/cpu_attention.py): the forward kernel runs once per step, never again in the backward.

The pair's reference (the prim's own `ref`) against eager's values and gradients, over dtypes,
causal or not, q/k/v laid out (b, t, h, e) or contiguous, sequence lengths 1, 7 and 13; a
training step through symc that counts the kernel calls; and the cases that keep the old paths:
dropout (the CPU kernels draw no mask) and float64 (its log-sum-exp is float64).
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import symc
from prims import cpu_attention
from prims.core import PRIMS


def _eager(g, q, k, v, causal, scale):
    leaves = [t.detach().requires_grad_(True) for t in (q, k, v)]
    out = F.scaled_dot_product_attention(*leaves, is_causal=causal, scale=scale)
    return (out.detach(), *torch.autograd.grad(out, leaves, g))


def _operands(b, h, L, S, e, dtype, transposed):
    def make(n):
        if transposed:  # (b, n, h, e) memory read as (b, h, n, e): attention's usual operands
            return torch.randn(b, n, h, e, dtype=dtype).transpose(1, 2)
        return torch.randn(b, h, n, e, dtype=dtype)
    return make(L), make(S), make(S), torch.randn(b, h, L, e, dtype=dtype)


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.bfloat16, 2e-2)])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("L,S", [(1, 1), (7, 7), (13, 13), (5, 9)])
@pytest.mark.parametrize("transposed", [True, False])
def test_forward_lse_and_backward_match_eager(dtype, tol, causal, L, S, transposed):
    torch.manual_seed(0)
    q, k, v, g = _operands(2, 3, L, S, 8, dtype, transposed)
    forward, backward = PRIMS["sdpa_dropout"].ref, PRIMS["sdpa_dropout_backward"].ref
    for scale in (None, 0.3):
        out, lse, rng = forward(q, k, v, 0.0, causal, scale, None, 0)
        want = _eager(g, q, k, v, causal, scale)
        torch.testing.assert_close(out.float(), want[0].float(), atol=tol, rtol=tol)
        scores = (q.float() @ k.float().transpose(-2, -1)) * (scale or 8 ** -0.5)
        if causal:
            scores = scores.masked_fill(~torch.ones(L, S, dtype=torch.bool).tril(), -torch.inf)
        torch.testing.assert_close(lse, torch.logsumexp(scores, -1), atol=1e-4, rtol=1e-4)
        assert lse.dtype == torch.float32 and rng.tolist() == [0, 0]
        grads = backward(g, q, k, v, out, lse, rng, 0.0, causal, scale)
        for got, w in zip(grads, want[1:]):
            assert got.shape == w.shape and got.dtype == w.dtype
            torch.testing.assert_close(got.float(), w.float(), atol=tol, rtol=tol)


def test_backward_reads_the_lse_it_is_given():
    """The backward does not recompute the forward: a wrong lse gives wrong gradients."""
    torch.manual_seed(0)
    q, k, v, g = _operands(1, 2, 6, 6, 8, torch.float32, True)
    out, lse, rng = PRIMS["sdpa_dropout"].ref(q, k, v, 0.0, True, None, None, 0)
    backward = PRIMS["sdpa_dropout_backward"].ref
    right = backward(g, q, k, v, out, lse, rng, 0.0, True, None)
    wrong = backward(g, q, k, v, out, lse + 1.0, rng, 0.0, True, None)
    assert not torch.allclose(right[0], wrong[0])


class Block(torch.nn.Module):
    def __init__(self, d=32, heads=4, dropout=0.0):
        super().__init__()
        self.d, self.heads, self.dropout = d, heads, dropout
        self.qkv = torch.nn.Linear(d, 3 * d)

    def forward(self, x):
        b, t, _ = x.shape
        q, k, v = (y.view(b, t, self.heads, self.d // self.heads).transpose(1, 2)
                   for y in self.qkv(x).split(self.d, dim=2))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.dropout)
        return y.transpose(1, 2).reshape(b, t, self.d)


def _code(compiled) -> str:
    report = symc.explain(compiled)
    return "\n".join(src for e in report.entries for src in e.generated_code.values())


def test_training_step_runs_the_forward_kernel_once(monkeypatch):
    calls = []
    forward, backward = cpu_attention.forward, cpu_attention.backward
    monkeypatch.setattr(cpu_attention, "forward", lambda *a: calls.append("f") or forward(*a))
    monkeypatch.setattr(cpu_attention, "backward", lambda *a: calls.append("b") or backward(*a))
    torch.manual_seed(0)
    model = Block()
    compiled = symc.compile(model, backend="inductor")
    for t in (5, 1, 7, 13):
        x = torch.randn(2, t, 32)
        got, want = [], []
        for fn, grads in ((compiled, got), (model, want)):
            model.zero_grad(set_to_none=True)
            xi = x.clone().requires_grad_(True)
            y = fn(xi)
            y.square().sum().backward()
            grads += [y.detach(), xi.grad, *[p.grad for p in model.parameters()]]
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5, msg=f"t={t}")
    # before: the backward (sdpa_backward) ran the forward kernel again for its lse
    assert calls == ["f", "b"] * 4, calls
    assert "sdpa_dropout_backward" in _code(compiled)


def test_dropout_and_float64_keep_their_paths():
    """Dropout stays spelled out in prims (the CPU kernels draw no mask: symc's philox mask,
    the same in forward and backward); float64 keeps the sdpa prim."""
    torch.manual_seed(0)
    model = Block(dropout=0.5).train()
    compiled = symc.compile(model, backend="inductor")
    x = torch.randn(2, 6, 32, requires_grad=True)
    compiled(x).sum().backward()
    assert "sdpa" not in _code(compiled)
    model64 = Block().double()
    compiled64 = symc.compile(model64, backend="inductor")
    x64 = torch.randn(2, 6, 32, dtype=torch.float64, requires_grad=True)
    compiled64(x64).sum().backward()
    want = x64.grad.clone()
    x64.grad = None
    model64(x64).sum().backward()
    torch.testing.assert_close(want, x64.grad)
    code = _code(compiled64)
    assert "sdpa_backward" in code and "sdpa_dropout" not in code
