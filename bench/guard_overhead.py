"""Per-call overhead of a compiled callable: guard checks + dispatch, next to torch.compile's.

    python bench/guard_overhead.py [--calls 2000] [--layers 12]

Two workloads: `x + 1` on an 8-element tensor, and the forward of a 12-layer GPT with d=16 on
a (1, 8) batch (compute is tiny, so time per call is mostly overhead). Modes: eager; symc with
its "eager" backend (the graph runs the same torch ops, so compiled - eager ~ symc's overhead)
and with "inductor"; torch.compile with backend="eager" and with inductor. Under no_grad.
Every mode is in try/except; failures are recorded. JSON to bench/results/.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench.common import (  # noqa: E402
    RESULTS, environment, error_text, print_table, reset_compilers, write_json)
from tests.models.models import GPT, GPTConfig  # noqa: E402

MODES = ["eager", "symc_eager", "symc_inductor", "torch_eager", "torch_inductor"]


def add_one(x):
    return x + 1


def gpt_forward_workload(layers: int):
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=64, block_size=32, n_layer=layers, n_head=2, n_embd=16)).eval()
    idx = torch.randint(0, 64, (1, 8))
    return model, (idx,)


def make_callable(mode: str, fn):
    if mode == "eager":
        return fn
    if mode.startswith("symc_"):
        import symc

        return symc.compile(fn, backend=mode.removeprefix("symc_"))
    if mode.startswith("torch_"):
        return torch.compile(fn, backend=mode.removeprefix("torch_"), dynamic=None)
    raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")


def time_calls(fn, args, calls: int, repeats: int) -> float:
    """Median over `repeats` of the mean seconds per call over `calls` calls."""
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        samples.append((time.perf_counter() - t0) / calls)
    return statistics.median(samples)


def measure(workload: str, mode: str, fn, args, calls: int, repeats: int) -> dict:
    row = {"workload": workload, "mode": mode, "error": None}
    reset_compilers()
    try:
        with torch.no_grad():
            compiled = make_callable(mode, fn)
            t0 = time.perf_counter()
            compiled(*args)  # compiles
            row["first_call_s"] = time.perf_counter() - t0
            for _ in range(20):  # warm up caches and any lazy second compile
                compiled(*args)
            row["per_call_us"] = time_calls(compiled, args, calls, repeats) * 1e6
            if mode.startswith("symc_"):
                from bench.common import symc_counts

                counts = symc_counts(compiled)
                row.update({k: counts[k] for k in ("compiles", "recompiles", "graph_breaks")})
    except Exception as exc:  # noqa: BLE001 - a failing mode is recorded, not fatal
        row["error"] = error_text(exc)
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--threads", type=int, default=1,
                   help="torch intra-op threads (default 1: steadier overhead numbers)")
    p.add_argument("--out", default=str(RESULTS / "guard_overhead.json"))
    args = p.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    torch.set_num_threads(args.threads)
    model, model_args = gpt_forward_workload(args.layers)
    workloads = {
        "x + 1 (8 floats)": (add_one, (torch.randn(8),), args.calls),
        f"GPT forward ({args.layers} layers, d=16, T=8)": (model, model_args,
                                                             max(args.calls // 20, 20)),
    }
    rows = []
    for workload, (fn, fn_args, calls) in workloads.items():
        base = None
        for mode in modes:
            print(f"-- {workload}: {mode}", flush=True)
            row = measure(workload, mode, fn, fn_args, calls, args.repeats)
            if mode == "eager" and row.get("per_call_us") is not None:
                base = row["per_call_us"]
            if base is not None and row.get("per_call_us") is not None:
                row["overhead_vs_eager_us"] = row["per_call_us"] - base
            rows.append(row)
    print_table("per-call overhead (CPU wall time, no_grad)", rows, [
        ("workload", "workload", ""), ("mode", "mode", ""), ("first_call_s", "first call s", ".3f"),
        ("per_call_us", "per call us", ",.1f"), ("overhead_vs_eager_us", "minus eager us", ",.1f"),
        ("graph_breaks", "symc breaks", ""),
        ("error", "error", "")])
    write_json(args.out, {"benchmark": "guard_overhead", "environment": environment(),
                          "calls": args.calls, "repeats": args.repeats, "threads": args.threads,
                          "results": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
