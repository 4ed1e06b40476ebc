"""On CUDA, attention with dropout runs torch's flash kernel (prims/fused_attention.py).

These run only where CUDA is (the GPU machine): the flash kernel has no CPU build. The CPU
reference of the same prims is tested in tests/prims and tests/autograd_aot.
"""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import symc
from prims import ops

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA (flash kernel)")


def _qkv(b, h, t, d, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    return [torch.randn(b, h, t, d, device="cuda", dtype=torch.bfloat16, generator=gen)
            for _ in range(3)]


@pytest.mark.parametrize("t, d", [(1, 64), (2, 64), (37, 64), (64, 64), (128, 64), (509, 64),
                                  (37, 128), (130, 128), (37, 32), (37, 80)])
@pytest.mark.parametrize("dropout_p", [0.0, 0.2])
def test_attention_prims_match_eager_with_the_same_kernel_and_generator_state(t, d, dropout_p):
    """The prims call the kernel prims/cuda_attention.py chooses (cuDNN on sm90, flash
    elsewhere and at one row): bit for bit what eager's SDPA computes with that kernel forced,
    after the same generator state, forward and backward."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    from prims import cuda_attention

    q, k, v = _qkv(2, 3, t, d, seed=t)
    g = torch.randn_like(q)
    kernel = cuda_attention.kernel_for(q, k, v)
    assert kernel == "flash" or (t > 1 and d in (64, 128))
    torch.manual_seed(7)
    out, lse, rng = ops.sdpa_dropout(q, k, v, dropout_p, True, None, None, 0)
    dq, dk, dv = ops.sdpa_dropout_backward(g, q, k, v, out, lse, rng, dropout_p, True, None)
    leaves = [x.clone().requires_grad_(True) for x in (q, k, v)]
    torch.manual_seed(7)
    backend = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[kernel]
    with sdpa_kernel(backend):
        want = F.scaled_dot_product_attention(*leaves, dropout_p=dropout_p, is_causal=True)
    grads = torch.autograd.grad(want, leaves, g)
    torch.testing.assert_close(out, want, rtol=0, atol=0)
    for got, exp in zip((dq, dk, dv), grads):
        torch.testing.assert_close(got, exp, rtol=0, atol=0)


def test_the_attention_kernel_is_cudnn_on_hopper_unless_turned_off(monkeypatch):
    from prims import cuda_attention

    q, k, v = _qkv(1, 2, 16, 64, seed=0)
    hopper = torch.cuda.get_device_capability() >= (9, 0)
    assert cuda_attention.kernel_for(q, k, v) == ("cudnn" if hopper else "flash")
    assert cuda_attention.kernel_for(q[:, :, :1], k[:, :, :1], v[:, :, :1]) == "flash"
    cuda_attention.cudnn_wanted.cache_clear()
    monkeypatch.setenv("SYMC_ATTENTION_KERNEL", "flash")
    try:
        assert cuda_attention.kernel_for(q, k, v) == "flash"
    finally:
        cuda_attention.cudnn_wanted.cache_clear()


@pytest.mark.parametrize("t", [1, 37, 128])
def test_attention_backward_is_the_same_for_every_layout_of_its_grad_and_output(t):
    """The backward graph hands attention its output's gradient as a (b, t, h, e) view of the
    output projection's gradient, and the saved output as the forward returned it or copied:
    every layout gives the gradients of a contiguous grad and the output as returned (flash
    reads the view in place; cuDNN's backward misreads it, so symc copies it there)."""
    q, k, v = _qkv(2, 3, t, 64, seed=t)
    g_view = torch.randn(2, t, 3, 64, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    assert t == 1 or not g_view.is_contiguous()  # one row: every layout is contiguous
    torch.manual_seed(3)
    out, lse, rng = ops.sdpa_dropout(q, k, v, 0.2, True, None, None, 0)
    want = ops.sdpa_dropout_backward(g_view.contiguous(), q, k, v, out, lse, rng, 0.2, True,
                                     None)
    for g, o in ((g_view, out), (g_view, out.contiguous()), (g_view.contiguous(), out.contiguous())):
        got = ops.sdpa_dropout_backward(g, q, k, v, o, lse, rng, 0.2, True, None)
        for a, b in zip(got, want):
            torch.testing.assert_close(a, b, rtol=0, atol=0)


class _Attention(torch.nn.Module):
    def __init__(self, d=128, heads=2, dropout_p=0.1):
        super().__init__()
        self.dropout_p = dropout_p
        self.heads, self.d = heads, d  # a static head dim (the input's last dim is dynamic)
        self.qkv = torch.nn.Linear(d, 3 * d)

    def forward(self, x):
        b, t, _ = x.shape
        d = self.d
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=self.dropout_p, is_causal=True)
        return y.transpose(1, 2).reshape(b, t, d)


def test_compiled_attention_uses_flash_once_for_every_length():
    model = _Attention().cuda()
    compiled = symc.compile(model, backend="inductor")
    for t in (64, 17, 1, 200):
        x = torch.randn(2, t, 128, device="cuda", requires_grad=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            y = compiled(x)
        y.float().square().mean().backward()
        assert y.shape == (2, t, 128) and torch.isfinite(y).all()
        assert torch.isfinite(x.grad).all()
        # dropout(0.1) keeps about 90% of the attention weights: outputs are not all zero
        assert y.abs().sum() > 0
    report = symc.explain(compiled)
    assert report.compiles == 1 and report.recompiles == 0
    code = "\n".join(src for e in report.entries for src in e.generated_code.values())
    assert "sdpa_dropout" in code and "sdpa_dropout_backward" in code
    assert "philox" not in code, "the dropout mask should be drawn inside the flash kernel"


def test_compiled_attention_without_dropout_matches_eager_and_keeps_its_log_sum_exp():
    """No dropout: the same kernel pair (its backward reads the saved log-sum-exp, no forward
    re-run), no seed drawn, and outputs and gradients of eager within bf16's tolerance."""
    model = _Attention(dropout_p=0.0).cuda()
    compiled = symc.compile(model, backend="inductor")
    for t in (64, 17, 1, 200):
        x = torch.randn(2, t, 128, device="cuda")
        grads = []
        for run in (compiled, model):
            leaf = x.clone().requires_grad_(True)
            model.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.bfloat16):
                y = run(leaf)
            y.float().square().mean().backward()
            grads.append((y.float(), leaf.grad, model.qkv.weight.grad))
        for got, want in zip(*grads):
            torch.testing.assert_close(got, want, rtol=2e-2, atol=2e-2)
    report = symc.explain(compiled)
    assert report.compiles == 1 and report.recompiles == 0
    code = "\n".join(src for e in report.entries for src in e.generated_code.values())
    assert "sdpa_dropout_backward" in code and "sdpa_backward(" not in code
