"""Why a varying-length pass costs more per step than a fixed-length one (GPU, symc).

    source scripts/gpu_env.sh && python3 scripts/probes/varlen_steps.py --modes symc,torch_dynamic

GPT-2 small, batch 8, bf16, AdamW (bench/train_varlen.py's model). Per mode: 12 lengths in
[32, 1024] stepped twice (the second pass is the "steady" one), then the same number of steps
at one length; per-step synchronised wall ms of the steady pass and of the fixed pass, host
syncs per step in the steady pass (torch's sync debug mode), and, for symc, Python function
calls per step fixed vs varying (cProfile's counts: deterministic, unlike times) with the
functions whose counts differ.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
import torch  # noqa: E402

from bench.common import draw_lengths, reset_compilers, wrap_mode  # noqa: E402
from bench.profile_step import train_step  # noqa: E402
from bench.train_varlen import build_model, make_optimizer, model_config  # noqa: E402
from tests.models.models import make_batch  # noqa: E402


def step(runner, model, opt, batch):
    train_step(runner, model, opt, batch, "cuda")


def timed_pass(runner, model, opt, batches):
    times = []
    for b in batches:
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        step(runner, model, opt, b)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def call_counts(runner, model, opt, batches):
    prof = cProfile.Profile()
    prof.enable()
    for b in batches:
        step(runner, model, opt, b)
    torch.cuda.synchronize()
    prof.disable()
    stats = pstats.Stats(prof).stats
    return {f"{k[0].split('/')[-1]}:{k[1]}({k[2]})": v[0] / len(batches) for k, v in stats.items()}


def run(mode, lengths):
    reset_compilers()
    config = model_config("gpt", False, 1024)
    model = build_model("gpt", config, "cuda", 0)
    opt = make_optimizer(model, 1e-4, "cuda")
    runner = wrap_mode(mode, model)
    batches = [make_batch("gpt", 8, t, seed=i, vocab_size=config.vocab_size, device="cuda")
               for i, t in enumerate(lengths)]
    fixed = [batches[len(batches) // 2]] * len(batches)
    timed_pass(runner, model, opt, batches)  # pass 1: compiles, first calls per size
    steady = timed_pass(runner, model, opt, batches)
    fixed_t = timed_pass(runner, model, opt, fixed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        torch.cuda.set_sync_debug_mode("warn")
        try:
            for b in batches:
                step(runner, model, opt, b)
        finally:
            torch.cuda.set_sync_debug_mode(0)
    syncs = [str(w.message)[:160] for w in caught if "synchroniz" in str(w.message)]
    print(f"== {mode}: steady pass {sum(steady) / len(steady):.1f} ms/step (lengths {lengths}); "
          f"fixed T={fixed[0]['idx'].shape[1]} {sum(fixed_t) / len(fixed_t):.1f} ms/step; "
          f"host syncs in a varying pass: {len(syncs)}", flush=True)
    print("   steady per step:", [f"{t}:{ms:.1f}" for t, ms in zip(lengths, steady)])
    print("   fixed per step:", [f"{ms:.1f}" for ms in fixed_t])
    for s in syncs[:5]:
        print("   sync:", s)
    if mode == "symc":
        varying = call_counts(runner, model, opt, batches)
        same = call_counts(runner, model, opt, fixed)
        print(f"   python calls/step: varying {sum(varying.values()):.0f}, fixed "
              f"{sum(same.values()):.0f}")
        diff = sorted(((varying.get(k, 0) - same.get(k, 0), k) for k in set(varying) | set(same)),
                      reverse=True)
        for d, k in diff[:25]:
            if d > 0.05:
                print(f"   +{d:.2f}/step {k}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--modes", default="symc,torch_dynamic")
    args = p.parse_args()
    lengths = draw_lengths(12, 32, 1024, seed=0)
    for mode in args.modes.split(","):
        run(mode, lengths)


if __name__ == "__main__":
    main()
