"""Where a training step's time goes: eager, torch.compile(dynamic=True) and symc in one run.

    python bench/profile_step.py --quick --out $OUT     # T = 128, 512, 1024; ~4 min on an H100
    python bench/profile_step.py --small --device cpu   # smoke run of the script itself

One GPT-2-small-shaped model (batch 8, bf16 autocast, AdamW, dropout on), a fresh copy of the
same initial weights per mode. Per mode and length T: wall ms per step (synchronised), GPU
kernel ms and launches of one profiled step, split by category (matmul, attention, generated
pointwise, generated reduction, copies, other), peak memory over the timed steps, the first
step's time (the compile), and the ten slowest kernels. JSON out (`profile_step.json`).
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from torch.profiler import ProfilerActivity, profile  # noqa: E402

from bench.common import (  # noqa: E402
    environment, error_text, now, peak_memory_mb, print_table, reset_compilers,
    reset_peak_memory, wrap_mode, write_json)
from bench.train_varlen import build_model, make_optimizer, model_config  # noqa: E402
from tests.models.models import make_batch  # noqa: E402

MODES = ("eager", "symc", "torch_dynamic")
CATEGORIES = ("matmul", "attention", "generated_pointwise", "generated_reduction", "copies",
              "other")
# (category, substrings of a kernel name), first match wins; matched on the lower-cased name
_GENERATED = re.compile(r"^(k\d+_(?P<symc>pw|red)_|triton_(?P<torch>poi|per|red)_)")
_RULES = (
    ("copies", ("memcpy", "memset", "copy_kernel", "direct_copy", "catarraybatchedcopy",
                "copy_", "elementwise_kernel_with_index")),
    ("attention", ("flash", "sdpa", "fmha", "attention", "attn")),
    ("matmul", ("gemm", "nvjet", "cutlass", "xmma", "cublas", "splitk", "matmul", "wgmma",
                "sm90_", "sm80_", "ampere_", "hopper_")),
)


def category(name: str) -> str:
    """A kernel's category from its name (symc's kernels are `k<i>_pw_*` / `k<i>_red_*`)."""
    low = name.lower()
    generated = _GENERATED.match(low)
    if generated:
        kind = generated.group("symc") or generated.group("torch")
        return "generated_pointwise" if kind in ("pw", "poi") else "generated_reduction"
    for cat, keys in _RULES:
        if any(k in low for k in keys):
            return cat
    if low.startswith("triton_"):  # torch.compile's other generated kernels (templates)
        return "generated_pointwise"
    return "other"


def train_step(runner, model, opt, inputs, device: str) -> None:
    model.zero_grad(set_to_none=True)
    autocast = (torch.autocast("cuda", dtype=torch.bfloat16) if device.startswith("cuda")
                else torch.autocast("cpu", enabled=False))
    with autocast:
        _, loss = runner(**inputs)
    loss.backward()
    opt.step()


def _device_events(prof) -> list[dict]:
    """(name, ms, calls) of every device-side event of the profile (kernels, memcpy, memset)."""
    rows = []
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", None)
        if us is None:
            us = getattr(e, "self_cuda_time_total", 0)
        if us and us > 0:
            rows.append({"name": e.key, "gpu_ms": us / 1e3, "calls": e.count,
                         "category": category(e.key)})
    rows.sort(key=lambda r: -r["gpu_ms"])
    return rows


def count_syncs(runner, model, opt, inputs, device: str) -> int | None:
    """The host-device synchronizations of one step (`.item()`, a blocking copy), as torch's
    sync debug mode reports them; None off CUDA."""
    if not device.startswith("cuda"):
        return None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            train_step(runner, model, opt, inputs, device)
        finally:
            torch.cuda.set_sync_debug_mode(0)
    return sum("synchroniz" in str(w.message) for w in caught)


def summarize(rows: list[dict]) -> dict:
    split = {c: {"gpu_ms": 0.0, "launches": 0} for c in CATEGORIES}
    for r in rows:
        split[r["category"]]["gpu_ms"] += r["gpu_ms"]
        split[r["category"]]["launches"] += r["calls"]
    return {"gpu_kernel_ms": sum(r["gpu_ms"] for r in rows),
            "launches": sum(r["calls"] for r in rows), "split": split}


def measure_length(runner, model, opt, t: int, args, config) -> dict:
    device = args.device
    batch = make_batch("gpt", args.batch, t, seed=t, vocab_size=config.vocab_size, device=device)
    start = now(device)
    train_step(runner, model, opt, batch, device)
    first_ms = (now(device) - start) * 1e3
    for _ in range(args.warmup):
        train_step(runner, model, opt, batch, device)
    reset_peak_memory(device)
    start = now(device)
    for _ in range(args.steps):
        train_step(runner, model, opt, batch, device)
    wall_ms = (now(device) - start) * 1e3 / args.steps
    peak_mb, memory_kind = peak_memory_mb(device)
    syncs = count_syncs(runner, model, opt, batch, device)
    activities = [ProfilerActivity.CUDA] if device.startswith("cuda") else [ProfilerActivity.CPU]
    with profile(activities=activities) as prof:
        train_step(runner, model, opt, batch, device)
        now(device)
    rows = _device_events(prof) if device.startswith("cuda") else []
    out = {"T": t, "first_step_ms": first_ms, "wall_ms": wall_ms, "host_syncs": syncs,
           "peak_memory_mb": peak_mb,
           "memory_kind": memory_kind, **summarize(rows), "slowest": rows[:args.top]}
    out["wall_over_gpu"] = wall_ms / out["gpu_kernel_ms"] if out["gpu_kernel_ms"] else None
    return out


def symc_kernel_counts(runner) -> dict:
    """Distinct kernels of the compiled model and how many groups each serves (dedupe)."""
    try:
        from inductor.runtime.kernel_dedupe import STATS

        return dict(STATS)
    except ImportError:
        return {}


def run_mode(mode: str, args) -> dict:
    reset_compilers()
    config = model_config("gpt", args.small, 1024)
    model = build_model("gpt", config, args.device, 0)
    opt = make_optimizer(model, 1e-4, args.device)
    runner = wrap_mode(mode, model)
    start = time.perf_counter()
    result = {"mode": mode, "lengths": []}
    try:
        for t in args.lengths:
            result["lengths"].append(measure_length(runner, model, opt, t, args, config))
            row = result["lengths"][-1]
            print(f"== {mode} T={t}: wall {row['wall_ms']:.1f} ms, GPU {row['gpu_kernel_ms']:.1f} "
                  f"ms, {row['launches']} launches, {row['host_syncs']} host syncs, peak {row['peak_memory_mb']:.0f} MB, first "
                  f"step {row['first_step_ms'] / 1e3:.1f} s", flush=True)
    except Exception as exc:  # noqa: BLE001 - a failing mode is recorded, not fatal
        result["error"] = error_text(exc)
        print(f"== {mode}: FAILED {result['error']}", flush=True)
    result["mode_s"] = time.perf_counter() - start
    if mode == "symc":
        result["kernels"] = symc_kernel_counts(runner)
    del runner, model, opt
    return result


def print_tables(results: list[dict], top: int) -> None:
    rows = []
    for r in results:
        for row in r["lengths"]:
            rows.append({"mode": r["mode"], "T": row["T"], "wall": row["wall_ms"],
                         "gpu": row["gpu_kernel_ms"], "launches": row["launches"],
                         "syncs": row.get("host_syncs"),
                         "peak": row["peak_memory_mb"] / 1024,
                         **{c: row["split"][c]["gpu_ms"] for c in CATEGORIES}})
    print_table("training step (GPT-2 small, bf16, AdamW)", rows,
                [("mode", "mode", ""), ("T", "T", ""), ("wall", "wall ms", ".1f"),
                 ("gpu", "GPU ms", ".1f"), ("launches", "launches", ""), ("syncs", "syncs", ""),
                 ("peak", "peak GB", ".2f")] + [(c, c[:14], ".2f") for c in CATEGORIES])
    for r in results:
        if r["mode"] == "eager" or not r["lengths"]:
            continue
        row = r["lengths"][min(1, len(r["lengths"]) - 1)]
        print(f"-- {r['mode']} T={row['T']}: {top} slowest kernels")
        for k in row["slowest"][:top]:
            print(f"  {k['gpu_ms']:8.3f} ms {k['calls']:4d}x  {k['category'][:10]:10s} "
                  f"{k['name'][:100]}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--quick", action="store_true", help="fewer timed steps (~4 min on an H100)")
    p.add_argument("--lengths", default="128,512,1024")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--small", action="store_true", help="tiny GPT (CPU smoke runs)")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=None, help="timed steps per length")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args()
    args.lengths = [int(t) for t in args.lengths.split(",")]
    args.steps = args.steps or (3 if args.quick else 10)
    args.warmup = 1 if args.quick else 3
    results = []
    for mode in args.modes.split(","):  # JSON after every mode: a cut-off run keeps its data
        results.append(run_mode(mode, args))
        write_json(Path(args.out) / "profile_step.json",
                   {"benchmark": "profile_step", "quick": args.quick, "batch": args.batch,
                    "small": args.small, "device": args.device, "steps": args.steps,
                    "environment": environment(), "results": results})
    print_tables(results, args.top)
    return 0


if __name__ == "__main__":
    sys.exit(main())
