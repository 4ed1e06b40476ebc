"""GPU check: attention on q, k, v read as views of the [B, T, 3C] projection (inductor/strided.py).

    source scripts/gpu_env.sh && python3 scripts/probes/qkv_views.py > $OUT/qkv_views.txt

A: the CUDA attention kernels (cuDNN and flash, forward and backward) called on q, k, v that are
   strided views of one (B, T, 3C) bf16 buffer, against a float32 reference on contiguous
   copies; dq/dk/dv strides and whether they share one storage (could d(qkv) skip its join?).
B: GPT-2's attention block compiled by symc (bf16 and f32, q/k/v laid out three ways, T = 7, 1,
   13, 64, 512 in one compile): outputs and gradients against eager. Asserts.
C: one GPT-2-shaped training step (bf16 autocast, no dropout): every generated copy kernel
   (bench/kernel_census.py's rule), the attention externs' operands, and the CUDA kernels the
   profiler sees that only copy memory, with their counts per step.
Exits non-zero when an assert fails (a wrong answer); prints "ALL CHECKS PASSED" at the end.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

import inductor  # noqa: E402
import symc  # noqa: E402
from bench.kernel_census import copy_reason  # noqa: E402
from inductor.ir import ExternNode, StridedBuffer  # noqa: E402
from prims import cuda_attention  # noqa: E402
from symc.demo_model import GPT, GPTConfig  # noqa: E402
from tests.models.models import QKVAttention  # noqa: E402

dev = "cuda"
aten = torch.ops.aten


def _close(got, want, ref, name):
    """got within 2x of the error eager's own result has, plus a few units in the last place
    of got's dtype at the largest value (a wrong layout is off by far more)."""
    err = (got.float() - ref.float()).abs().max().item()
    base = (want.float() - ref.float()).abs().max().item()
    scale = ref.float().abs().max().item() + 1e-6
    ulps = 2 ** -6 if got.dtype in (torch.bfloat16, torch.float16) else 1e-5
    ok = err <= 2 * base + ulps * scale
    print(f"    {name}: max err {err:.3e} (eager's {base:.3e}, |ref| {scale:.2e})"
          + ("" if ok else "  <-- MISMATCH"))
    assert ok, name


def part_a():
    print("== A: attention kernels on strided q, k, v views of one (B, T, 3C) buffer")
    B, T, H, D = 4, 257, 12, 64
    C = H * D
    torch.manual_seed(0)
    qkv = torch.randn(B, T, 3 * C, device=dev, dtype=torch.bfloat16)
    q, k, v = (qkv[:, :, i * C:(i + 1) * C].view(B, T, H, D).transpose(1, 2) for i in range(3))
    g = torch.randn(B, T, C, device=dev, dtype=torch.bfloat16).view(B, T, H, D).transpose(1, 2)
    leaves = [t.detach().float().contiguous().requires_grad_(True) for t in (q, k, v)]
    ref = F.scaled_dot_product_attention(*leaves, is_causal=True)
    ref_grads = torch.autograd.grad(ref, leaves, g.float())
    eager_leaves = [t.detach().contiguous().requires_grad_(True) for t in (q, k, v)]
    eager = F.scaled_dot_product_attention(*eager_leaves, is_causal=True)
    eager_grads = torch.autograd.grad(eager, eager_leaves, g)

    def symc_kernel(kernel):
        """prims/cuda_attention.py's calls, the kernel forced (its choice is cached)."""
        def run():
            os.environ["SYMC_ATTENTION_KERNEL"] = kernel
            cuda_attention.cudnn_wanted.cache_clear()
            assert cuda_attention.kernel_for(q, k, v) == kernel or kernel == "flash"
            out, lse, rng = cuda_attention.forward(q, k, v, 0.0, True, None)
            return out, cuda_attention.backward(g, q, k, v, out, lse, rng, 0.0, True, None)
        return run

    def efficient():
        out, lse, seed, offset = aten._scaled_dot_product_efficient_attention(
            q, k, v, None, True, 0.0, True)
        grads = aten._scaled_dot_product_efficient_attention_backward(
            g, q, k, v, None, out, lse, seed, offset, 0.0, (True, True, True, False), True)
        return out, grads[:3]

    for name, fn, checked in (("flash", symc_kernel("flash"), True),
                              ("cudnn", symc_kernel("cudnn"), True),
                              ("efficient (not used by symc)", efficient, False)):
        try:
            out, grads = fn()
        except Exception as e:  # a kernel this torch/GPU lacks: reported, not a failure
            print(f"  {name}: not run ({type(e).__name__}: {str(e)[:160]})")
            continue
        print(f"  {name}: out strides {tuple(out.stride())}; dq/dk/dv strides "
              f"{[tuple(x.stride()) for x in grads]}; one storage for dq/dk/dv: "
              f"{len({x.untyped_storage().data_ptr() for x in grads}) == 1}")
        for got, w, r, n in zip((out, *grads), (eager, *eager_grads), (ref, *ref_grads),
                                ("out", "dq", "dk", "dv")):
            if checked:
                _close(got, w, r, f"{name} {n}")
    os.environ.pop("SYMC_ATTENTION_KERNEL", None)
    cuda_attention.cudnn_wanted.cache_clear()


def _step(model, fn, x):
    model.zero_grad(set_to_none=True)
    x = x.detach().clone().requires_grad_(True)
    y = fn(x)
    y.float().square().sum().backward()
    return [y.detach(), x.grad] + [p.grad for p in model.parameters()]


def part_b():
    print("== B: symc's attention block against eager (values and gradients)")
    for dtype in (torch.bfloat16, torch.float32):
        for layout in ("gpt2", "interleaved", "timm"):
            torch.manual_seed(0)
            model = QKVAttention(768, 12, layout).to(dev, dtype)
            ref_model = QKVAttention(768, 12, layout).to(dev, torch.float32)
            ref_model.load_state_dict({k: v.float() for k, v in model.state_dict().items()})
            compiled = symc.compile(model, backend="inductor")
            for t in (7, 1, 13, 64, 512):  # first call at 7: a first size 1 is specialised
                x = torch.randn(2, t, 768, device=dev, dtype=dtype)
                got, want = _step(model, compiled, x), _step(model, model, x)
                ref = _step(ref_model, ref_model, x.float())
                print(f"  {str(dtype)[6:]} {layout} T={t}")
                for i, (a, b, r) in enumerate(zip(got, want, ref)):
                    _close(a, b, r, ["out", "dx", "dWqkv", "dbqkv", "dWproj", "dbproj"][i])
            report = symc.explain(compiled)
            code = "\n".join(s for e in report.entries for s in e.generated_code.values())
            print(f"  {str(dtype)[6:]} {layout}: compiles {report.compiles}, as_strided "
                  f"operands in the generated code: {code.count('.as_strided(')}")
            assert report.compiles == 1


def part_c(layers=12):
    print(f"== C: copy kernels of one GPT-2-shaped step ({layers} layers, B=8, T=512, bf16)")
    graphs = []
    original = inductor.compile_graph

    def recording(graph, env=None, **kw):
        cg = original(graph, env, **kw)
        graphs.append(cg)
        return cg
    inductor.compile_graph = recording
    try:
        torch.manual_seed(0)
        config = GPTConfig(vocab_size=50257, block_size=1024, n_layer=layers, n_head=12,
                           n_embd=768, dropout=0.0)
        model = GPT(config).to(dev).train()
        step = symc.compile(model, backend="inductor")
        idx = torch.randint(0, 50257, (8, 512), device=dev)

        def run():
            with torch.autocast("cuda", dtype=torch.bfloat16):
                _, loss = step(idx, idx)
            loss.backward()
            model.zero_grad(set_to_none=True)
        for _ in range(3):
            run()
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            run()
            torch.cuda.synchronize()
    finally:
        inductor.compile_graph = original
    copies, views, kernels = Counter(), Counter(), 0
    for cg in graphs:
        if not hasattr(cg, "steps"):
            continue
        for s in cg.steps:
            if isinstance(s, ExternNode):
                views[s.prim.name] += sum(isinstance(a, StridedBuffer) for a in s.args)
            else:
                kernels += 1
                reason = copy_reason(s, cg.buffers)
                if reason:
                    copies[f"{s.name} [{reason}]"] += 1
    print(f"  generated kernels {kernels}; copy kernels {sum(copies.values())}: {dict(copies)}")
    print(f"  strided-view operands per extern kind: {dict(views)}")
    rows = Counter()
    for e in prof.key_averages():
        name = e.key.lower()
        if "copy" in name or "memcpy" in name or "cat" in name.split("_"):
            rows[e.key[:100]] += e.count
    print(f"  copy-like CUDA kernels in the step: {sum(rows.values())}")
    for name, n in rows.most_common():
        print(f"    {n:4d} x {name}")


if __name__ == "__main__":
    assert torch.cuda.is_available(), "a GPU check: needs CUDA"
    part_a()
    part_b()
    part_c(int(sys.argv[1]) if len(sys.argv) > 1 else 12)
    print("ALL CHECKS PASSED")
