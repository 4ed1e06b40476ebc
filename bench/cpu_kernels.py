"""CPU kernel benchmark: symc's C++/OpenMP kernels vs eager vs torch.compile (default, dynamic).

    python bench/cpu_kernels.py [--quick] [--modes eager,symc,compile_default,compile_dynamic]
                                [--threads N] [--reps N] [--rows 64,257] [--name out.json]

Ops over [rows, 768] (gelu, softmax, layer norm, cross-entropy, fused dropout + residual +
layer norm) for row counts 1 to 16384 (odd ones included):
  - eager:            the torch functions;
  - symc:             symc.compile (rows symbolic from the second size on: one recompile);
  - compile_default:  torch.compile() (recompiles once, then dynamic);
  - compile_dynamic:  torch.compile(dynamic=True).
Reports median and minimum microseconds per call and max error against eager; the first call of each
(mode, size) is not timed but its wall time is recorded (compile cost). JSON goes to
$OUT/cpu_kernels.json if $OUT is set, else bench/results/cpu_kernels.json, with the load
average (`os.getloadavg`) before and after the run and, per (op, rows), symc's minimum time
over eager's and over each torch.compile's (`summary`; < 1: symc is faster). `--threads N`
runs every mode on N threads (torch's pool, which symc's kernels share): on a loaded machine a
two-thread region waits on a descheduled thread, so one thread compares the kernels' work.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import environment, error_text, print_table, write_json  # noqa: E402

COLS = 768
ROWS = (1, 7, 64, 257, 1000, 4099, 16384)
QUICK_ROWS = (7, 257, 4099)


def _dropout_residual_ln(x, res, w, b):
    return F.layer_norm(F.dropout(x, 0.1, training=True) + res, (COLS,), w, b, 1e-5)


OPS = {  # name -> (function, deterministic: max error against eager is meaningful)
    "gelu": (lambda x: F.gelu(x), True),
    "softmax": (lambda x: torch.softmax(x, -1), True),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (COLS,), w, b, 1e-5), True),
    "cross_entropy": (lambda x, t: F.cross_entropy(x, t), True),
    "dropout_residual_ln": (_dropout_residual_ln, False),
}


def make_inputs(op: str, rows: int, seed: int = 0):
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(rows, COLS, generator=gen)
    if op == "layer_norm":
        return (x, torch.randn(COLS, generator=gen), torch.randn(COLS, generator=gen))
    if op == "cross_entropy":
        return (x, torch.randint(0, COLS, (rows,), generator=gen))
    if op == "dropout_residual_ln":
        return (x, torch.randn(rows, COLS, generator=gen), torch.randn(COLS, generator=gen),
                torch.randn(COLS, generator=gen))
    return (x,)


def symc_compile(op: str):
    """symc.compile of the op (dynamic: rows become a symbol at the first new size)."""
    import symc

    return symc.compile(OPS[op][0])


def time_us(fn, args, reps: int) -> tuple[float, float]:
    """(median, minimum) microseconds per call: on a shared machine the minimum is the less
    noisy of the two."""
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        fn(*args)
        samples.append((time.perf_counter() - start) * 1e6)
    return statistics.median(samples), min(samples)


def build(mode: str, op: str):
    eager = OPS[op][0]
    if mode == "eager":
        return eager, {}
    if mode == "symc":
        start = time.perf_counter()
        fn = symc_compile(op)
        return fn, {"build_s": time.perf_counter() - start}
    if mode == "compile_default":
        return torch.compile(eager), {}
    if mode == "compile_dynamic":
        return torch.compile(eager, dynamic=True), {}
    raise ValueError(mode)


def run(modes, ops, rows_list, reps: int) -> list[dict]:
    rows_out = []
    for op in ops:
        for mode in modes:
            if mode.startswith("compile"):
                torch._dynamo.reset()
            try:
                fn, info = build(mode, op)
            except Exception as e:  # noqa: BLE001 - a failing mode is recorded, not raised
                rows_out.append({"op": op, "mode": mode, "error": error_text(e)})
                continue
            for rows in rows_list:
                args = make_inputs(op, rows)
                row = {"op": op, "mode": mode, "rows": rows, **info}
                try:
                    start = time.perf_counter()
                    out = fn(*args)
                    row["first_call_s"] = time.perf_counter() - start
                    if OPS[op][1]:
                        row["max_err"] = (out - OPS[op][0](*args)).abs().max().item()
                    fn(*args)  # a second call: warm caches (and any lazy work) untimed
                    row["us"], row["min_us"] = time_us(fn, args, reps)
                except Exception as e:  # noqa: BLE001
                    row["error"] = error_text(e)
                rows_out.append(row)
    return rows_out


def summarize(results: list[dict]) -> list[dict]:
    """Per (op, rows): symc's minimum time over each other mode's (< 1: symc is faster)."""
    best = {(r["op"], r["rows"], r["mode"]): r["min_us"] for r in results if "min_us" in r}
    out = []
    for (op, rows, mode), us in sorted(best.items()):
        if mode != "symc":
            continue
        row = {"op": op, "rows": rows, "symc_min_us": us}
        for other in ("eager", "compile_default", "compile_dynamic"):
            if (op, rows, other) in best:
                row[f"vs_{other}"] = round(us / best[(op, rows, other)], 3)
        out.append(row)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 sizes, few repetitions")
    parser.add_argument("--modes", default="eager,symc,compile_default,compile_dynamic")
    parser.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "results"))
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("--name", default="cpu_kernels.json", help="the JSON file's name")
    parser.add_argument("--rows", default="", help="comma-separated row counts")
    parser.add_argument("--threads", type=int, default=0, help="torch.set_num_threads (0: keep)")
    parser.add_argument("--reps", type=int, default=0, help="timed calls per size (0: 30, 5 quick)")
    args = parser.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    load_before = os.getloadavg()
    rows_list = QUICK_ROWS if args.quick else ROWS
    if args.rows:
        rows_list = tuple(int(r) for r in args.rows.split(","))
    results = run(args.modes.split(","), args.ops.split(","), rows_list,
                  args.reps or (5 if args.quick else 30))
    summary = summarize(results)
    print_table("CPU kernels (median us per call)", results,
                [("op", "op", ""), ("mode", "mode", ""), ("rows", "rows", ""), ("us", "us", ".1f"),
                 ("min_us", "min us", ".1f"),
                 ("first_call_s", "first call s", ".3f"), ("max_err", "max err", ".2e")])
    print_table("symc min / other min (< 1: symc faster)", summary,
                [("op", "op", ""), ("rows", "rows", ""), ("symc_min_us", "symc min us", ".1f"),
                 ("vs_eager", "/ eager", ".2f"), ("vs_compile_default", "/ compile", ".2f"),
                 ("vs_compile_dynamic", "/ dynamic", ".2f")])
    write_json(Path(args.out) / args.name,
               {"environment": environment(), "cols": COLS, "threads": torch.get_num_threads(),
                "reps": args.reps or (5 if args.quick else 30),
                "loadavg_before": load_before, "loadavg_after": os.getloadavg(),
                "command": " ".join(["python", "bench/cpu_kernels.py", *(argv or sys.argv[1:])]),
                "results": results, "summary": summary})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
