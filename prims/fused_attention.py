"""Attention with dropout whose kernel draws its own mask: `sdpa_dropout` and its backward.

    sdpa_dropout(q bf16[b, h, L, e], k, v, dropout_p, is_causal, scale, seed, offset)
        (seed None and offset 0 without dropout)
        -> (out bf16[b, h, L, e], lse f32[b, h, L], rng i64[2])
    sdpa_dropout_backward(g, q, k, v, out, lse, rng, dropout_p, is_causal, scale) -> (dq, dk, dv)

`sdpa` with dropout is spelled out in prims (its mask is philox_rand(seed, offset), reproducible
on every backend) and costs B*H*L*S memory traffic several times over. On CUDA, the
decomposition uses this pair instead: the forward runs torch's cuDNN or flash-attention kernel
(prims/cuda_attention.py chooses), which draws the dropout mask inside the kernel from torch's
CUDA generator and returns the generator state it used (`rng`); the backward hands `rng` back to
the same kernel's backward, which redraws the same mask. Nothing of size L*S is ever stored.

So the mask is a function of `rng`, not of (seed, offset), on CUDA: forward and backward agree
with each other, and the reference and inductor backends agree with each other (both call the
same kernel), but the mask differs from the spelled-out `sdpa`'s. On the CPU, the reference is
the spelled-out math with the philox mask of (seed, offset), and `rng` holds (seed, offset);
without dropout (seed None) the CPU runs torch's CPU flash-attention pair on the saved
log-sum-exp instead (prims/cpu_attention.py), and `rng` is zeros.
"""

from __future__ import annotations

import torch

from prims import cpu_attention, cuda_attention
from prims.core import PrimKind, register_prim
from prims.externs import _sdpa_backward_ref, _sdpa_check, _sdpa_math, sdpa_scores
from symbolic import TensorMeta

FLASH_DTYPES = (torch.float16, torch.bfloat16)
MAX_FLASH_HEAD_DIM = 256


def _meta(q, k, v, dropout_p, is_causal, scale, seed, offset):
    _sdpa_check(q, k, v)
    return (TensorMeta.contiguous((*q.shape[:-1], v.shape[-1]), q.dtype, q.device),
            TensorMeta.contiguous(q.shape[:-1], torch.float32, q.device),
            TensorMeta.contiguous((2,), torch.int64, q.device))


def _ref(q, k, v, dropout_p, is_causal, scale, seed, offset):
    if q.is_cuda:
        return cuda_attention.forward(q, k, v, dropout_p, is_causal, scale)
    if seed is None and not dropout_p and cpu_attention.applies(q, k, v):
        out, lse = cpu_attention.forward(q, k, v, is_causal, scale)
        return out, lse, torch.zeros(2, dtype=torch.int64)
    out = _sdpa_math(q, k, v, None, dropout_p, is_causal, scale, seed, offset)
    lse = torch.logsumexp(sdpa_scores(q, k, None, is_causal, scale), -1)
    if seed is None:  # no dropout: no generator state
        return out, lse, torch.zeros(2, dtype=torch.int64, device=q.device)
    rng = torch.stack([seed.reshape(()).to(torch.int64),
                       torch.tensor(int(offset), dtype=torch.int64, device=seed.device)])
    return out, lse, rng.to(q.device)


def _backward_meta(g, q, k, v, out, lse, rng, dropout_p, is_causal, scale):
    _sdpa_check(q, k, v)
    return tuple(TensorMeta.contiguous(t.shape, t.dtype, t.device) for t in (q, k, v))


def _backward_ref(g, q, k, v, out, lse, rng, dropout_p, is_causal, scale):
    if q.is_cuda:
        return cuda_attention.backward(g, q, k, v, out, lse, rng, dropout_p, is_causal, scale)
    if not dropout_p and cpu_attention.applies(q, k, v, g, out):
        # lse is the forward's (flash's own, or the spelled-out path's: the same values)
        return cpu_attention.backward(g, q, k, v, out, lse, is_causal, scale)
    seed, offset = rng[0], int(rng[1])
    return _sdpa_backward_ref(g, q, k, v, None, dropout_p, is_causal, scale, seed, offset)


def can_use_flash(q, k, v) -> bool:
    """Whether `sdpa_dropout` may run q, k, v (metas): 4-d, CUDA, f16/bf16, static head dim."""
    if q.ndim != 4 or not str(q.device).startswith("cuda") or q.dtype not in FLASH_DTYPES:
        return False
    dims = (q.shape[-1], k.shape[-1], v.shape[-1])
    if not all(getattr(d, "is_Integer", isinstance(d, int)) for d in dims):
        return False  # a symbolic head dim: the spelled-out math serves every size
    return len({int(d) for d in dims}) == 1 and int(dims[0]) % 8 == 0 \
        and int(dims[0]) <= MAX_FLASH_HEAD_DIM


register_prim("sdpa_dropout", PrimKind.EXTERN, _meta, _ref,
              doc="(out, lse, rng) of attention whose kernel draws its dropout mask")
register_prim("sdpa_dropout_backward", PrimKind.EXTERN, _backward_meta, _backward_ref,
              doc="(dq, dk, dv) of sdpa_dropout, redrawing its mask from rng")
