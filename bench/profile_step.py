"""Where a training step's time goes: torch.profiler over a few GPT steps, eager vs symc.

    python bench/profile_step.py --seqlen 512 --out $OUT     # -> profile_step.json + tables

Prints, per mode, the step time, the summed GPU kernel time and the top kernels by GPU time, so
a slow generated kernel (or host overhead: step time far above kernel time) shows at once.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from bench.common import now  # noqa: E402
from bench.train_varlen import build_model, model_config  # noqa: E402
from tests.models.models import make_batch  # noqa: E402


def step(runner, model, inputs):
    model.zero_grad(set_to_none=True)
    with torch.autocast("cuda", dtype=torch.bfloat16):
        _, loss = runner(**inputs)
    loss.backward()


def profile_mode(mode: str, args) -> dict:
    import symc

    config = model_config("gpt", args.small, 1024)
    model = build_model("gpt", config, "cuda", 0)
    runner = symc.compile(model, backend="inductor") if mode == "symc" else model
    batches = [make_batch("gpt", args.batch, t, seed=t, vocab_size=config.vocab_size,
                          device="cuda") for t in (args.seqlen, args.seqlen - 7, args.seqlen)]
    for inputs in batches:
        step(runner, model, inputs)
    start = now("cuda")
    for _ in range(3):
        step(runner, model, batches[-1])
    step_s = (now("cuda") - start) / 3
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        step(runner, model, batches[-1])
        torch.cuda.synchronize()
    if args.cprofile:
        import cProfile
        import io
        import pstats

        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(3):
            step(runner, model, batches[-1])
        torch.cuda.synchronize()
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(args.top)
        pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(args.top)
        print(f"== {mode}: host profile of 3 steps (by own, then cumulative time)\n"
              f"{text.getvalue()[:12000]}")
    rows = []
    for e in prof.key_averages():
        gpu_us = getattr(e, "device_time_total", None) or getattr(e, "cuda_time_total", 0)
        if gpu_us:
            rows.append({"name": e.key[:90], "gpu_ms": gpu_us / 1e3, "calls": e.count})
    rows.sort(key=lambda r: -r["gpu_ms"])
    total = sum(r["gpu_ms"] for r in rows)
    print(f"== {mode}: step {step_s * 1e3:.1f} ms, GPU kernels {total:.1f} ms, "
          f"{sum(r['calls'] for r in rows)} launches")
    for r in rows[:args.top]:
        print(f"  {r['gpu_ms']:8.2f} ms  {r['calls']:4d}x  {r['name']}")
    return {"mode": mode, "step_ms": step_s * 1e3, "gpu_kernel_ms": total, "top": rows[:60]}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--seqlen", type=int, default=512)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--small", action="store_true")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--modes", default="eager,symc")
    p.add_argument("--cprofile", action="store_true", help="also a cProfile of 3 steps' host time")
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args()
    results = [profile_mode(m, args) for m in args.modes.split(",")]
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "profile_step.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
