"""Which CUDA kernel runs `sdpa_dropout` (cuDNN or flash attention), and the calls to each.

    out, lse, rng = forward(q, k, v, dropout_p, is_causal, scale)        # CUDA tensors
    dq, dk, dv = backward(g, q, k, v, out, lse, rng, dropout_p, is_causal, scale)

Both kernels take q, k, v in any layout whose last dim is contiguous, draw their dropout mask
inside the kernel from torch's CUDA generator and return what their backward needs to redraw
it. `rng` is int64[2] either way: flash's generator state, or cuDNN's (seed, offset).

The kernel is a pure function of what both sides see the same: the process-wide choice
(`cudnn_wanted`, read once per device, so a flag changed between a forward and its backward
cannot split them) and the sequence lengths (cuDNN refuses a length of 1, flash serves it).
On Hopper (sm90) torch's own SDPA prefers cuDNN, and it measures faster than flash there
(`scripts/probes/cudnn_attention.py`). `SYMC_ATTENTION_KERNEL=flash` keeps flash everywhere.
"""

from __future__ import annotations

import functools
import os

import torch

from prims.sizes import scale_arg

CUDNN_DTYPES = (torch.float16, torch.bfloat16)
# head sizes cuDNN runs here as tested on the H200 (GPT-2's 64, Llama's 128); flash serves others
CUDNN_HEAD_DIMS = (64, 128)


@functools.lru_cache(maxsize=None)
def cudnn_wanted(device_index: int) -> bool:
    """cuDNN attention for this device: sm90 or newer, torch's cuDNN SDPA enabled and present,
    and not turned off by SYMC_ATTENTION_KERNEL=flash. Read once per process and device."""
    if os.environ.get("SYMC_ATTENTION_KERNEL", "").lower() == "flash":
        return False
    if not hasattr(torch.ops.aten, "_scaled_dot_product_cudnn_attention_backward"):
        return False
    if not torch.backends.cuda.cudnn_sdp_enabled():
        return False
    return torch.cuda.get_device_capability(device_index) >= (9, 0)


def kernel_for(q, k, v) -> str:
    """"cudnn" or "flash" for these CUDA tensors (the same answer in forward and backward)."""
    head = q.shape[-1]
    if (q.dtype in CUDNN_DTYPES and head in CUDNN_HEAD_DIMS and head == v.shape[-1]
            and q.shape[-2] > 1 and k.shape[-2] > 1 and cudnn_wanted(q.device.index or 0)):
        return "cudnn"
    return "flash"


def forward(q, k, v, dropout_p, is_causal, scale):
    aten = torch.ops.aten
    if kernel_for(q, k, v) == "cudnn":
        out, lse, _, _, _, _, seed, offset, _ = aten._scaled_dot_product_cudnn_attention(
            q, k, v, None, True, float(dropout_p), bool(is_causal), False, scale=scale_arg(scale))
        rng = torch.cat([seed.reshape(1), offset.reshape(1)]).to(torch.int64)
        return out, lse.reshape(q.shape[:-1]), rng
    out, lse, _, _, _, _, state, _, _ = aten._scaled_dot_product_flash_attention(
        q, k, v, float(dropout_p), bool(is_causal), False, scale=scale_arg(scale))
    return out, lse, state.view(torch.int64)


def backward(g, q, k, v, out, lse, rng, dropout_p, is_causal, scale):
    aten = torch.ops.aten
    t_q, t_k = q.shape[-2], k.shape[-2]
    if kernel_for(q, k, v) == "cudnn":
        # cuDNN's backward (torch 2.11) reads a (b, L, h, e)-ordered g wrongly: measured on an
        # H200 (tests/inductor/test_cuda_attention.py), so g goes contiguous, as torch's own
        # autograd formula for this kernel hands it
        return tuple(aten._scaled_dot_product_cudnn_attention_backward(
            g.contiguous(), q, k, v, out, lse.unsqueeze(-1), rng[0:1], rng[1:2], None, None, None, t_q, t_k,
            float(dropout_p), bool(is_causal), scale=scale_arg(scale)))
    # g as it comes (a (b, L, h, e) view of the projection's gradient): flash reads it in that
    # memory order, and a contiguous copy here costs two copy kernels (this one and flash's own
    # copy back); the GPU probe scripts/probes/attention_layouts.py counts them
    g = g if g.stride(-1) == 1 else g.contiguous()
    state = rng.view(torch.uint64)
    unused = torch.empty((), dtype=torch.uint64, device=q.device)
    return tuple(aten._scaled_dot_product_flash_attention_backward(
        g, q, k, v, out, lse, None, None, t_q, t_k, float(dropout_p), bool(is_causal), state,
        unused, scale=scale_arg(scale)))
