"""torch's CPU flash-attention kernels, called directly: the pair eager's sdpa runs on the CPU.

    out, lse = forward(q, k, v, is_causal, scale)                    # CPU tensors, no dropout
    dq, dk, dv = backward(g, q, k, v, out, lse, is_causal, scale)    # reads the forward's lse

Without dropout the decomposition runs attention on the CPU as `sdpa_dropout` (seed None,
prims/fused_attention.py) when `can_use` says these kernels serve every size of its operands:
the forward returns the log-sum-exp, the backward reads it, so the backward never runs the
forward again. The kernels draw no dropout mask; attention with dropout on the CPU stays
spelled out in prims (its philox mask), as before.
"""

from __future__ import annotations

import torch

from prims.sizes import scale_arg

# f64's log-sum-exp is f64 (sdpa_dropout's meta says f32): f64 keeps the general path
DTYPES = (torch.float32, torch.bfloat16, torch.float16)


def _ops():
    aten = torch.ops.aten
    if not hasattr(aten, "_scaled_dot_product_flash_attention_for_cpu_backward"):
        return None
    return (aten._scaled_dot_product_flash_attention_for_cpu,
            aten._scaled_dot_product_flash_attention_for_cpu_backward)


def can_use(q, k, v) -> bool:
    """Whether `sdpa_dropout` without dropout runs these kernels for q, k, v (metas): 4-d,
    CPU, one of DTYPES, one static head dim for q, k and v."""
    if _ops() is None or q.ndim != 4 or str(q.device) != "cpu" or q.dtype not in DTYPES:
        return False
    dims = (q.shape[-1], k.shape[-1], v.shape[-1])
    if not all(getattr(d, "is_Integer", isinstance(d, int)) for d in dims):
        return False
    return len({int(d) for d in dims}) == 1


def applies(q, k, v, *others, dtypes=DTYPES) -> bool:
    """Whether the kernels take these tensors as they are (eager's choice of them): 4-d, on the
    CPU, one dtype of `dtypes`, one head size, no empty sequence, q, k, v's last dim
    contiguous."""
    tensors = (q, k, v, *others)
    return (_ops() is not None and q.ndim == 4
            and all(t.device.type == "cpu" for t in tensors)
            and len({t.dtype for t in tensors}) == 1 and q.dtype in dtypes
            and len({t.shape[-1] for t in tensors}) == 1 and 0 not in (q.shape[-2], k.shape[-2])
            and all(t.stride(-1) == 1 for t in (q, k, v)))


def forward(q, k, v, is_causal, scale):
    out, lse = _ops()[0](q, k, v, 0.0, bool(is_causal), scale=scale_arg(scale))[:2]
    return out, lse


def backward(g, q, k, v, out, lse, is_causal, scale):
    return tuple(_ops()[1](g, q, k, v, out, lse, 0.0, bool(is_causal), scale=scale_arg(scale)))
