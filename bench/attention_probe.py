"""What torch's fused attention kernels return and cost, for symc's sdpa lowering on CUDA.

    python bench/attention_probe.py --out $OUT      # -> attention_probe.json

Checks, for flash and memory-efficient attention with dropout: the types and devices of the RNG
state they return, whether the backward ops accept what the forward returned (undefined tensors
come back as None), that the backward from the saved RNG state equals torch.autograd's gradients
of F.scaled_dot_product_attention under the same generator seed, and times forward + backward of
each against the attention written out (bmm, masked softmax, dropout, bmm) at GPT-2 sizes.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

import torch
import torch.nn.functional as F

aten = torch.ops.aten


def describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return f"Tensor({value.dtype}, {tuple(value.shape)}, {value.device})"
    return f"{type(value).__name__}({value!r})"


def flash(q, k, v, p, causal):
    out = aten._scaled_dot_product_flash_attention(q, k, v, p, causal, False)
    return out


def flash_backward(g, q, k, v, fwd, p, causal):
    out, lse, cq, ck, mq, mk, seed, offset, _ = fwd
    return aten._scaled_dot_product_flash_attention_backward(
        g, q, k, v, out, lse, cq, ck, mq, mk, p, causal, seed, offset)


def efficient(q, k, v, p, causal, bias=None):
    return aten._scaled_dot_product_efficient_attention(q, k, v, bias, True, p, causal)


def efficient_backward(g, q, k, v, fwd, p, causal, bias=None):
    out, lse, seed, offset = fwd
    return aten._scaled_dot_product_efficient_attention_backward(
        g, q, k, v, bias, out, lse, seed, offset, p, [True, True, True, bias is not None], causal)


def written_out(q, k, v, p, causal):
    scores = (q @ k.transpose(-2, -1)).float() / math.sqrt(q.shape[-1])
    T = q.shape[-2]
    keep = torch.ones(T, T, dtype=torch.bool, device=q.device).tril()
    scores = scores.masked_fill(~keep, float("-inf"))
    probs = F.dropout(torch.softmax(scores, -1), p)
    return probs.to(q.dtype) @ v


def time_ms(fn, reps=20) -> float:
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(reps):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / reps


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args()
    report: dict = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    B, H, T, D, drop = 8, 12, 512, 64, 0.1
    q, k, v = (torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16, requires_grad=True)
               for _ in range(3))
    g = torch.randn(B, H, T, D, device="cuda", dtype=torch.bfloat16)
    for name, fwd_fn, bwd_fn in (("flash", flash, flash_backward),
                                 ("efficient", efficient, efficient_backward)):
        entry: dict = {}
        try:
            torch.manual_seed(1)
            fwd = fwd_fn(q.detach(), k.detach(), v.detach(), drop, True)
            entry["outputs"] = [describe(x) for x in fwd]
            grads = bwd_fn(g, q.detach(), k.detach(), v.detach(), fwd, drop, True)
            torch.manual_seed(1)
            ref = F.scaled_dot_product_attention(q, k, v, dropout_p=drop, is_causal=True)
            ref_grads = torch.autograd.grad(ref, (q, k, v), g)
            entry["out_max_diff_vs_sdpa"] = (fwd[0].float() - ref.float()).abs().max().item()
            entry["grad_max_diff_vs_autograd"] = max(
                (a.float() - b.float()).abs().max().item() for a, b in zip(grads, ref_grads))
            entry["fwd_bwd_ms"] = time_ms(lambda: bwd_fn(
                g, q.detach(), k.detach(), v.detach(),
                fwd_fn(q.detach(), k.detach(), v.detach(), drop, True), drop, True))
        except Exception as exc:  # noqa: BLE001 - a probe records what failed
            entry["error"] = f"{type(exc).__name__}: {exc}"[:800]
        report[name] = entry

    def sdpa_step():
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=drop, is_causal=True)
        torch.autograd.grad(out, (q, k, v), g)

    def math_step():
        out = written_out(q, k, v, drop, True)
        torch.autograd.grad(out, (q, k, v), g)

    report["F.sdpa_fwd_bwd_ms"] = time_ms(sdpa_step)
    report["written_out_fwd_bwd_ms"] = time_ms(math_step)
    print(json.dumps(report, indent=1))
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "attention_probe.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
