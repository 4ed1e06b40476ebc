"""Extern prims: ops a backend hands to a vendor library (matmul, attention, sort, topk).

    mm(f32[s0, 64], f32[64, 32]) -> f32[s0, 32]
    sdpa(q f32[b, h, L, e], k f32[b, h, S, e], v f32[b, h, S, ev], ...) -> f32[b, h, L, ev]

sdpa's dropout draws its mask with philox_rand(seed, offset, (…, L, S)) and keeps elements
whose value is >= dropout_p, scaling kept ones by 1 / (1 - dropout_p); sdpa_backward redraws the
same mask from the same (seed, offset), so nothing is saved for it.
"""

from __future__ import annotations

import math

import torch

from prims import cpu_attention
from prims.core import PrimError, PrimKind, register_prim
from prims.random import philox_rand
from prims.sizes import check_dims, concrete, require_same_shape, require_same_size
from symbolic import TensorMeta


def _same_dtype(name, *tensors):
    dtypes = {t.dtype for t in tensors}
    if len(dtypes) != 1:
        raise PrimError(f"{name}: expected operands of one dtype, found {sorted(map(str, dtypes))}")


def _mm_meta(a, b):
    if a.ndim != 2 or b.ndim != 2:
        raise PrimError(f"mm: expected 2-d operands, found {a} and {b}")
    _same_dtype("mm", a, b)
    require_same_size(a.shape[1], b.shape[0], f"mm: inner dims of {a} @ {b}")
    return TensorMeta.contiguous((a.shape[0], b.shape[1]), a.dtype, a.device)


def _bmm_meta(a, b):
    if a.ndim != 3 or b.ndim != 3:
        raise PrimError(f"bmm: expected 3-d operands, found {a} and {b}")
    _same_dtype("bmm", a, b)
    require_same_size(a.shape[0], b.shape[0], f"bmm: batch dims of {a} @ {b}")
    require_same_size(a.shape[2], b.shape[1], f"bmm: inner dims of {a} @ {b}")
    return TensorMeta.contiguous((a.shape[0], a.shape[1], b.shape[2]), a.dtype, a.device)


def _sdpa_check(q, k, v):
    if not q.ndim == k.ndim == v.ndim or q.ndim < 2:
        raise PrimError(f"sdpa: expected q, k, v of one rank >= 2, found {q}, {k}, {v}")
    _same_dtype("sdpa", q, k, v)
    require_same_shape(q.shape[:-2], k.shape[:-2], "sdpa: batch dims of q and k")
    require_same_shape(k.shape[:-1], v.shape[:-1], "sdpa: k and v")
    require_same_size(q.shape[-1], k.shape[-1], "sdpa: head dims of q and k")


def _sdpa_meta(q, k, v, attn_mask, dropout_p, is_causal, scale, seed, offset):
    _sdpa_check(q, k, v)
    if dropout_p and seed is None:
        raise PrimError("sdpa: expected a seed tensor when dropout_p > 0, found None")
    return TensorMeta.contiguous((*q.shape[:-1], v.shape[-1]), q.dtype, q.device)


def sdpa_scores(q, k, attn_mask, is_causal, scale):
    """q @ k^T * scale in f32 with the causal and given masks applied (-inf where masked)."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else concrete(scale)
    scores = (q.float() @ k.float().transpose(-2, -1)) * scale
    L, S = q.shape[-2], k.shape[-2]
    if is_causal:
        keep = torch.ones(L, S, dtype=torch.bool, device=q.device).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    if attn_mask is not None:
        if attn_mask.dtype == torch.bool:
            scores = scores.masked_fill(~attn_mask, float("-inf"))
        else:
            scores = scores + attn_mask.float()
    return scores


def _sdpa_math(q, k, v, attn_mask, dropout_p, is_causal, scale, seed, offset):
    """Attention written out, with the philox dropout mask (the ref when dropout_p > 0)."""
    probs = torch.softmax(sdpa_scores(q, k, attn_mask, is_causal, scale), dim=-1)
    if dropout_p:
        u = philox_rand.ref(seed, offset, probs.shape, torch.float32, q.device)
        probs = torch.where(u >= dropout_p, probs / (1 - dropout_p), 0.0)
    return (probs @ v.float()).to(q.dtype)


def _sdpa_ref(q, k, v, attn_mask, dropout_p, is_causal, scale, seed, offset):
    if dropout_p:
        return _sdpa_math(q, k, v, attn_mask, dropout_p, is_causal, scale, seed, offset)
    return torch.nn.functional.scaled_dot_product_attention(
        q, k, v, attn_mask=attn_mask, dropout_p=0.0, is_causal=bool(is_causal),
        scale=None if scale is None else concrete(scale))


def _sdpa_backward_meta(grad_out, q, k, v, attn_mask, dropout_p, is_causal, scale, seed, offset):
    _sdpa_check(q, k, v)
    require_same_shape(grad_out.shape, (*q.shape[:-1], v.shape[-1]), "sdpa_backward: grad_out")
    return tuple(TensorMeta.contiguous(t.shape, t.dtype, t.device) for t in (q, k, v))


def _cpu_flash_backward(grad_out, q, k, v, attn_mask, dropout_p, is_causal, scale):
    """(dq, dk, dv) from torch's CPU flash-attention kernels called directly, or None where
    they do not apply (`cpu_attention.applies`, dropout, a mask). The forward runs again for
    its (out, logsumexp), then its backward: the kernels eager's backward runs on the same
    (out, logsumexp), without an autograd graph and engine pass per call. (`sdpa_dropout`
    without dropout saves the logsumexp instead: prims/cpu_attention.py.)"""
    if dropout_p or attn_mask is not None or not cpu_attention.applies(
            q, k, v, grad_out, dtypes=(*cpu_attention.DTYPES, torch.float64)):
        return None
    out, lse = cpu_attention.forward(q, k, v, is_causal, scale)
    return cpu_attention.backward(grad_out, q, k, v, out, lse, is_causal, scale)


def _sdpa_backward_ref(grad_out, q, k, v, attn_mask, dropout_p, is_causal, scale, seed, offset):
    direct = _cpu_flash_backward(grad_out, q, k, v, attn_mask, dropout_p, is_causal, scale)
    if direct is not None:
        return direct
    with torch.enable_grad():
        leaves = [t.detach().requires_grad_(True) for t in (q, k, v)]
        out = _sdpa_ref(*leaves, attn_mask, dropout_p, is_causal, scale, seed, offset)
        grads = torch.autograd.grad(out, leaves, grad_out)
    return tuple(grads)


def _sort_meta(a, dim, descending):
    check_dims((dim,), a.ndim, "sort")
    return (TensorMeta.contiguous(a.shape, a.dtype, a.device),
            TensorMeta.contiguous(a.shape, torch.int64, a.device))


def _sort_ref(a, dim, descending):
    values, indices = torch.sort(a, dim=dim, descending=bool(descending), stable=True)
    return values, indices


def _topk_meta(a, k, dim, largest):
    check_dims((dim,), a.ndim, "topk")
    shape = list(a.shape)
    if a.ndim:
        shape[dim] = k
    return (TensorMeta.contiguous(shape, a.dtype, a.device),
            TensorMeta.contiguous(shape, torch.int64, a.device))


def _topk_ref(a, k, dim, largest):
    values, indices = torch.topk(a, concrete(k), dim=dim, largest=bool(largest), sorted=True)
    return values, indices


# mm and bmm run as torch's own functions (no Python frame of ours per call; inductor's
# wrapper calls them on its own lines, inductor/wrapper.py SINGLE_TENSOR_OPS)
for _name, _meta, _ref, _doc in (
    ("mm", _mm_meta, torch.mm, "matrix product of 2-d tensors"),
    ("bmm", _bmm_meta, torch.bmm, "batched matrix product of 3-d tensors"),
    ("sdpa", _sdpa_meta, _sdpa_ref, "scaled dot-product attention forward"),
    ("sdpa_backward", _sdpa_backward_meta, _sdpa_backward_ref, "(dq, dk, dv) of sdpa"),
    ("sort", _sort_meta, _sort_ref, "(values, indices) sorted along dim, stable"),
    ("topk", _topk_meta, _topk_ref, "(values, indices) of the k largest/smallest along dim"),
):
    register_prim(_name, PrimKind.EXTERN, _meta, _ref, doc=_doc)
