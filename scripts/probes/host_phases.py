"""Where a GPU training step's host time goes, per phase, for eager, torch.compile(dynamic=True)
and symc (GPT-2 small, batch 8, bf16 autocast, AdamW, T=512 by default).

    source scripts/gpu_env.sh && python3 scripts/probes/host_phases.py --out $OUT

Per mode: host ms of zero_grad, forward, loss.backward() and opt.step() (perf_counter around
each, no synchronisation inside the step: while the host is the bottleneck the GPU queue stays
short, so host time is what each phase costs), the synchronised wall ms per step, and for symc a
cProfile of the same steps (top functions by own time and by cumulative time) in
$OUT/host_phases_symc.prof.txt. JSON in $OUT/host_phases.json.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import torch  # noqa: E402

from bench.common import environment, reset_compilers, wrap_mode  # noqa: E402
from bench.train_varlen import build_model, make_optimizer, model_config  # noqa: E402
from tests.models.models import make_batch  # noqa: E402

PHASES = ("zero_grad", "forward", "backward", "optimizer")


def step_phases(runner, model, opt, batch) -> dict:
    t0 = time.perf_counter()
    model.zero_grad(set_to_none=True)
    t1 = time.perf_counter()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        _, loss = runner(**batch)
    t2 = time.perf_counter()
    loss.backward()
    t3 = time.perf_counter()
    opt.step()
    t4 = time.perf_counter()
    return dict(zip(PHASES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3)))


def run_mode(mode: str, t: int, steps: int, out: Path) -> dict:
    reset_compilers()
    config = model_config("gpt", False, 1024)
    model = build_model("gpt", config, "cuda", 0)
    opt = make_optimizer(model, 1e-4, "cuda")
    runner = wrap_mode(mode, model)
    batch = make_batch("gpt", 8, t, seed=t, vocab_size=config.vocab_size, device="cuda")
    for _ in range(3):
        step_phases(runner, model, opt, batch)
    torch.cuda.synchronize()
    sums = dict.fromkeys(PHASES, 0.0)
    start = time.perf_counter()
    for _ in range(steps):
        for k, v in step_phases(runner, model, opt, batch).items():
            sums[k] += v
    torch.cuda.synchronize()
    wall = (time.perf_counter() - start) / steps * 1e3
    row = {"mode": mode, "T": t, "wall_ms": wall,
           **{f"{k}_host_ms": v / steps * 1e3 for k, v in sums.items()}}
    row["host_total_ms"] = sum(row[f"{k}_host_ms"] for k in PHASES)
    if mode == "symc":
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(steps):
            step_phases(runner, model, opt, batch)
        torch.cuda.synchronize()
        prof.disable()
        text = io.StringIO()
        stats = pstats.Stats(prof, stream=text)
        text.write(f"== {steps} steps, by own time\n")
        stats.sort_stats("tottime").print_stats(45)
        text.write(f"== {steps} steps, by cumulative time\n")
        stats.sort_stats("cumulative").print_stats(45)
        (out / "host_phases_symc.prof.txt").write_text(text.getvalue())
    print(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()),
          flush=True)
    return row


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--modes", default="symc,torch_dynamic,eager")
    p.add_argument("--T", type=int, default=512)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--out", default=".")
    args = p.parse_args()
    out = Path(args.out)
    rows = []
    for mode in args.modes.split(","):
        try:
            rows.append(run_mode(mode, args.T, args.steps, out))
        except Exception as exc:  # noqa: BLE001 - a failing mode is recorded
            rows.append({"mode": mode, "error": f"{type(exc).__name__}: {exc}"[:500]})
            print(rows[-1], flush=True)
    (out / "host_phases.json").write_text(json.dumps(
        {"benchmark": "host_phases", "environment": environment(), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
