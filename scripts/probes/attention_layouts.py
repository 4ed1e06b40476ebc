"""Where the step's copy kernels around attention come from, and cuDNN vs flash attention (GPU).

    source scripts/gpu_env.sh && python3 scripts/probes/attention_layouts.py > $OUT/attention_layouts.txt

A: torch's flash-attention forward/backward on q, k, v viewed out of one (B, T, 3, H, D) buffer,
   with grad_out and out in (B, T, H, D) memory or made contiguous: copy kernels per variant.
B: cuDNN attention vs flash attention, forward + backward, dropout 0.1, causal: GPU ms.
C: a 2-layer GPT-2-shaped symc step (bf16 autocast, dropout 0.1): every copy kernel, and every
   copy op the dispatcher sees with the line of symc that made it.
"""
import sys
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402
from torch.utils._python_dispatch import TorchDispatchMode  # noqa: E402

B, T, H, D = 8, 512, 12, 64
dev = "cuda"
aten = torch.ops.aten


def kernels(fn, reps=1):
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            fn()
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", 0) or getattr(e, "self_cuda_time_total", 0)
        if us > 0:
            rows.append((e.key[:90], e.count, us / 1e3 / reps))
    return rows


def part_a():
    qkv = torch.randn(B, T, 3, H, D, device=dev, dtype=torch.bfloat16)
    q, k, v = (qkv[:, :, i].permute(0, 2, 1, 3) for i in range(3))
    out, lse, _, _, _, _, state, unused, _ = aten._scaled_dot_product_flash_attention(
        q, k, v, 0.1, True, False)
    print("A: out strides", out.stride(), "q strides", q.stride())
    g_btHD = torch.randn(B, T, H, D, device=dev, dtype=torch.bfloat16).permute(0, 2, 1, 3)
    for gname, g in (("g (B,T,H,D) memory", g_btHD), ("g contiguous", g_btHD.contiguous())):
        for oname, o in (("out as returned", out), ("out contiguous", out.contiguous())):
            def bwd():
                return aten._scaled_dot_product_flash_attention_backward(
                    g, q, k, v, o, lse, None, None, T, T, 0.1, True, state, unused)
            dq, dk, dv = bwd()
            rows = kernels(bwd)
            copies = [r for r in rows if "flash" not in r[0].lower()]
            print(f"A: {gname}, {oname}: dq strides {dq.stride()}; non-flash kernels {copies}")


def part_b():
    q, k, v = (torch.randn(B, H, T, D, device=dev, dtype=torch.bfloat16, requires_grad=True)
               .detach().transpose(1, 2).contiguous().transpose(1, 2).requires_grad_()
               for _ in range(3))
    g = torch.randn(B, H, T, D, device=dev, dtype=torch.bfloat16)

    def flash():
        out, lse, _, _, _, _, st, un, _ = aten._scaled_dot_product_flash_attention(
            q, k, v, 0.1, True, False)
        aten._scaled_dot_product_flash_attention_backward(
            g, q, k, v, out, lse, None, None, T, T, 0.1, True, st, un)

    def cudnn():
        out, lse, cq, ck, mq, mk, seed, off, _ = aten._scaled_dot_product_cudnn_attention(
            q, k, v, None, True, 0.1, True, False)
        aten._scaled_dot_product_cudnn_attention_backward(
            g, q, k, v, out, lse, seed, off, torch.empty(0, device=dev), cq, ck, mq, mk, 0.1, True)
    for name, fn in (("flash", flash), ("cudnn", cudnn)):
        try:
            for _ in range(3):
                fn()
            rows = kernels(fn, reps=10)
            print(f"B: {name}: {sum(r[2] for r in rows):.3f} ms fwd+bwd per layer;",
                  [(r[0][:60], round(r[2], 4)) for r in rows])
        except Exception as e:  # noqa: BLE001
            print(f"B: {name}: failed: {type(e).__name__}: {str(e)[:300]}")


class CopyLog(TorchDispatchMode):
    OPS = ("clone", "copy_", "_to_copy", "contiguous", "as_strided_copy")

    def __init__(self):
        super().__init__()
        self.seen = {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func.__name__
        if any(name.startswith(o) for o in self.OPS):
            where = "?"
            for fr in reversed(traceback.extract_stack()[:-1]):
                if "/torch/" not in fr.filename and "attention_layouts" not in fr.filename:
                    where = f"{fr.filename.split('/')[-1]}:{fr.lineno} {fr.line}"
                    break
            key = (name, where)
            self.seen[key] = self.seen.get(key, 0) + 1
        return func(*args, **(kwargs or {}))


def part_c():
    import symc
    from bench.train_varlen import build_model, make_optimizer, model_config
    from tests.models.models import make_batch  # noqa: F401
    cfg = model_config("gpt", False, 1024)
    cfg.n_layer = 2
    model = build_model("gpt", cfg, dev, 0)
    opt = make_optimizer(model, 6e-4, dev)
    run = symc.compile(model, backend="inductor")
    idx = torch.randint(0, 50304, (B, T), device=dev)

    def step():
        model.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=torch.bfloat16):
            _, loss = run(idx, targets=idx)
        loss.backward()
        opt.step()
    for _ in range(2):
        step()
    rows = kernels(step)
    print("C: copy kernels:", [r for r in rows if any(s in r[0].lower() for s in
                                                     ("copy", "memcpy", "memset"))])
    log = CopyLog()
    with log:
        step()
    torch.cuda.synchronize()
    for (name, where), n in sorted(log.seen.items(), key=lambda kv: -kv[1]):
        print(f"C: {n:4d} x {name:12s} {where}")


if __name__ == "__main__":  # symc's compile workers re-import this module
    for part in (part_a, part_b, part_c):
        try:
            part()
        except Exception as e:  # noqa: BLE001
            traceback.print_exc()
            print(f"{part.__name__} failed: {e}")
