"""Per-call overhead of a compiled callable (guards + dispatch), next to torch.compile's.

    python bench/guard_overhead.py [--suffix _h100] [--device cpu|cuda] [--calls 2000]

Two workloads: `x + 1` on an 8-element tensor, and the forward of a 12-layer GPT (d=16, a (1, 8)
batch), under no_grad, one intra-op thread. For every compiled mode:
  per_call_us   compiled(*args), steady state
  direct_us     the same compiled work called without guards or dispatch: symc's backend callable
                on the already-read inputs; torch.compile's graph callable (the backend's output,
                recorded by a wrapping backend) on the inputs Dynamo passed it
  overhead_us   per_call_us - direct_us (the issue's goal: < 5 us tiny, < 30 us GPT)
For symc the overhead is split: bind_us (arguments -> L), guards_us (the generated guarded call
with a no-op run: every guard check plus the input reads), dispatch_us (the rest: entry call,
output rebuild). `overhead_vs_eager_us` is per_call_us - eager's. JSON to
bench/results/guard_overhead<suffix>.json (or --out). Runs on CPU-only and CUDA machines.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from bench.common import (  # noqa: E402
    RESULTS,
    environment,
    error_text,
    print_table,
    reset_compilers,
    symc_counts,
    write_json,
)
from tests.models.models import GPT, GPTConfig  # noqa: E402

MODES = ["eager", "symc_eager", "symc_inductor", "torch_eager", "torch_inductor"]


def add_one(x):
    return x + 1


def gpt_forward_workload(layers: int, device: str = "cpu"):
    torch.manual_seed(0)
    config = GPTConfig(vocab_size=64, block_size=32, n_layer=layers, n_head=2, n_embd=16)
    model = GPT(config).eval().to(device)
    idx = torch.randint(0, 64, (1, 8), device=device)
    return model, (idx,)


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def time_calls(fn, args, calls: int, repeats: int, device: str) -> float:
    """Best over `repeats` of the mean microseconds per call over `calls` calls (the least
    disturbed run: overheads are differences of these, and noise only adds)."""
    samples = []
    for _ in range(repeats):
        _sync(device)
        t0 = time.perf_counter()
        for _ in range(calls):
            fn(*args)
        _sync(device)
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return min(samples)


class TorchRecorder:
    """A torch.compile backend around eager or inductor that keeps the compiled graph callable
    and the arguments Dynamo last passed it, so the graph can be timed without Dynamo."""

    def __init__(self, inner: str):
        self.inner, self.compiled, self.args = inner, None, None

    def __call__(self, gm, example_inputs):
        if self.inner == "inductor":
            from torch._inductor.compile_fx import compile_fx

            compiled = compile_fx(gm, example_inputs)
        else:
            compiled = gm.forward
        self.compiled = compiled

        def run(*args):  # Dynamo calls a backend's result with the graph's inputs spread out
            self.args = args
            return compiled(*args)

        return run

    def direct(self):
        return lambda: self.compiled(*self.args)


def make_callable(mode: str, fn):
    if mode == "eager":
        return fn, None
    if mode.startswith("symc_"):
        import symc

        return symc.compile(fn, backend=mode.removeprefix("symc_")), None
    if mode.startswith("torch_"):
        recorder = TorchRecorder(mode.removeprefix("torch_"))
        return torch.compile(fn, backend=recorder, dynamic=None), recorder
    raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")


def symc_split(compiled, args, calls, repeats, device) -> dict:
    """Time symc's per-call pieces on its (single) entry."""
    import guards
    import symc

    function = symc.compile(compiled)
    function = getattr(function, "_compiled_forward", function)
    if len(function.entries) != 1:
        return {"split_error": f"{len(function.entries)} entries"}
    entry = function.entries[0]
    L, G = function._bind(*args), function._globals
    inputs = entry.read_inputs(L, G)
    guarded_noop = entry.checker.guarded(lambda L, G, *inputs: None)
    assert entry.checker.check(L, G) == -1 and guarded_noop(L, G) is not guards.MISS
    run = entry.run
    return {
        "direct_us": time_calls(lambda: run(*inputs), (), calls, repeats, device),
        "bind_us": time_calls(function._bind, args, calls, repeats, "cpu"),
        "guards_us": time_calls(guarded_noop, (L, G), calls, repeats, "cpu"),
        "guard_checks": len(entry.checker.items),
        "graph_inputs": len(inputs),
    }


def measure(workload: str, mode: str, fn, args, calls: int, repeats: int, device: str) -> dict:
    row = {"workload": workload, "mode": mode, "error": None}
    reset_compilers()
    try:
        with torch.no_grad():
            compiled, recorder = make_callable(mode, fn)
            t0 = time.perf_counter()
            compiled(*args)  # compiles
            _sync(device)
            row["first_call_s"] = time.perf_counter() - t0
            for _ in range(20):  # warm up caches and any lazy second compile
                compiled(*args)
            row["per_call_us"] = time_calls(compiled, args, calls, repeats, device)
            if mode.startswith("symc_"):
                counts = symc_counts(compiled)
                row.update({k: counts[k] for k in ("compiles", "recompiles", "graph_breaks")})
                row.update(symc_split(compiled, args, calls, repeats, device))
                if "direct_us" in row:
                    row["dispatch_us"] = (row["per_call_us"] - row["direct_us"]
                                          - row["bind_us"] - row["guards_us"])
            elif recorder is not None and recorder.compiled is not None:
                row["direct_us"] = time_calls(recorder.direct(), (), calls, repeats, device)
            if "direct_us" in row:
                row["overhead_us"] = row["per_call_us"] - row["direct_us"]
    except Exception as exc:  # noqa: BLE001 - a failing mode is recorded, not fatal
        row["error"] = error_text(exc)
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--calls", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--layers", type=int, default=12)
    p.add_argument("--modes", default=",".join(MODES))
    p.add_argument("--device", default="cpu", choices=["cpu", "cuda"],
                   help="where the tensors live (default cpu: the host-side overhead alone)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch intra-op threads (default 1: steadier overhead numbers)")
    p.add_argument("--suffix", default="",
                   help="appended to the result file name: --suffix _h100 writes "
                        "bench/results/guard_overhead_h100.json")
    p.add_argument("--out", default=None, help="result path (overrides --suffix)")
    args = p.parse_args(argv)
    out = args.out or str(RESULTS / f"guard_overhead{args.suffix}.json")
    modes = [m for m in args.modes.split(",") if m]
    torch.set_num_threads(args.threads)
    model, model_args = gpt_forward_workload(args.layers, args.device)
    workloads = {
        "x + 1 (8 floats)": (add_one, (torch.randn(8, device=args.device),), args.calls),
        f"GPT forward ({args.layers} layers, d=16, T=8)": (model, model_args,
                                                             max(args.calls // 20, 20)),
    }
    rows = []
    for workload, (fn, fn_args, calls) in workloads.items():
        base = None
        for mode in modes:
            print(f"-- {workload}: {mode}", flush=True)
            row = measure(workload, mode, fn, fn_args, calls, args.repeats, args.device)
            if mode == "eager" and row.get("per_call_us") is not None:
                base = row["per_call_us"]
            if base is not None and row.get("per_call_us") is not None:
                row["overhead_vs_eager_us"] = row["per_call_us"] - base
            rows.append(row)
    print_table(f"per-call overhead ({args.device} tensors, no_grad, us per call)", rows, [
        ("workload", "workload", ""), ("mode", "mode", ""), ("first_call_s", "first call s", ".2f"),
        ("per_call_us", "per call", ",.1f"), ("direct_us", "direct", ",.1f"),
        ("overhead_us", "overhead", ",.1f"), ("bind_us", "bind", ".1f"),
        ("guards_us", "guards+reads", ".1f"), ("dispatch_us", "dispatch", ".1f"),
        ("overhead_vs_eager_us", "minus eager", ",.1f"), ("graph_breaks", "breaks", ""),
        ("error", "error", "")])
    write_json(out, {"benchmark": "guard_overhead", "environment": environment(),
                     "device": args.device, "calls": args.calls, "repeats": args.repeats,
                     "threads": args.threads, "results": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
