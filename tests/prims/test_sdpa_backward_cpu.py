"""sdpa_backward on the CPU through torch's flash-attention kernels called directly (no autograd
graph per call): the grads eager's backward gives, and the general path where they do not apply."""

from __future__ import annotations

import pytest
import torch

from prims.externs import _cpu_flash_backward, _sdpa_backward_ref

F = torch.nn.functional


def eager_grads(g, q, k, v, mask=None, causal=False, scale=None):
    leaves = [t.detach().requires_grad_(True) for t in (q, k, v)]
    out = F.scaled_dot_product_attention(*leaves, attn_mask=mask, is_causal=causal, scale=scale)
    return torch.autograd.grad(out, leaves, g)


def qkv(b, h, L, S, e, ev, dtype, transposed):
    def make(n, d):
        if transposed:  # (b, n, h, d) memory read as (b, h, n, d): attention's usual operands
            return torch.randn(b, n, h, d, dtype=dtype).transpose(1, 2)
        return torch.randn(b, h, n, d, dtype=dtype)
    return make(L, e), make(S, e), make(S, ev), torch.randn(b, h, L, ev, dtype=dtype)


@pytest.mark.parametrize("dtype,tol", [(torch.float32, 1e-5), (torch.float64, 1e-10),
                                       (torch.bfloat16, 2e-2)])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("shape", [(2, 4, 9, 9, 16, 16), (1, 2, 5, 12, 8, 8),
                                   (2, 3, 33, 17, 24, 24)])
@pytest.mark.parametrize("transposed", [True, False])
def test_direct_grads_match_eager(dtype, tol, causal, shape, transposed):
    torch.manual_seed(0)
    q, k, v, g = qkv(*shape, dtype, transposed)
    for scale in (None, 0.3):
        direct = _cpu_flash_backward(g, q, k, v, None, 0.0, causal, scale)
        assert direct is not None
        for got, want in zip(direct, eager_grads(g, q, k, v, causal=causal, scale=scale)):
            assert got.shape == want.shape and got.dtype == want.dtype
            torch.testing.assert_close(got.float(), want.float(), atol=tol, rtol=tol)


def test_general_path_where_the_kernels_do_not_apply():
    torch.manual_seed(0)
    q, k, v, g = qkv(2, 2, 6, 6, 8, 8, torch.float32, False)
    mask = torch.rand(6, 6) > 0.3
    mask[:, 0] = True  # no fully masked row
    assert _cpu_flash_backward(g, q, k, v, mask, 0.0, False, None) is None  # a mask
    assert _cpu_flash_backward(g, q[0], k[0], v[0], None, 0.0, False, None) is None  # 3-d
    assert _cpu_flash_backward(g.double(), q, k, v, None, 0.0, False, None) is None  # dtypes
    wide_v, wide_g = torch.randn(2, 2, 6, 16), torch.randn(2, 2, 6, 16)  # head sizes 8, 16
    assert _cpu_flash_backward(wide_g, q, k, wide_v, None, 0.0, False, None) is None
    got = _sdpa_backward_ref(wide_g, q, k, wide_v, None, 0.0, True, None, None, 0)
    for a, b in zip(got, eager_grads(wide_g, q, k, wide_v, causal=True)):
        torch.testing.assert_close(a, b)
    got = _sdpa_backward_ref(g, q, k, v, mask, 0.0, False, None, None, 0)
    for a, b in zip(got, eager_grads(g, q, k, v, mask=mask)):
        torch.testing.assert_close(a, b)
    got = _sdpa_backward_ref(g[0], q[0], k[0], v[0], None, 0.0, True, None, None, 0)
    for a, b in zip(got, eager_grads(g[0], q[0], k[0], v[0], causal=True)):
        torch.testing.assert_close(a, b)


def test_ref_takes_the_direct_path_on_the_cpu(monkeypatch):
    """The prim's reference (what the C++ backend's extern calls) runs the kernels directly:
    no autograd.grad call."""
    q, k, v, g = qkv(1, 2, 7, 7, 8, 8, torch.float32, True)

    def refuse(*args, **kwargs):
        raise AssertionError("autograd.grad called")
    monkeypatch.setattr(torch.autograd, "grad", refuse)
    got = _sdpa_backward_ref(g, q, k, v, None, 0.0, True, None, None, 0)
    monkeypatch.undo()
    for a, b in zip(got, eager_grads(g, q, k, v, causal=True)):
        torch.testing.assert_close(a, b)
