"""Column sums on the CPU (a training step's bias and layer-norm weight gradients): symc's C++
kernels against eager, over rows x cols.

    python bench/cpu_column_sums.py [--threads N] [--rows 64,1024] [--cols 768,3072] [--reps N]

Ops: `bias` = g.sum(0); `ln_wb` = ((x - mean) * rstd * g).sum(0) and g.sum(0) (a layer norm's
weight and bias gradients: one kernel in symc, three aten calls in eager). One symc compilation
per op serves every size (the sizes are symbolic from the second call on). Reports the minimum
microseconds per call over `--reps` (a shared machine: the minimum is the least noisy), symc over
eager (< 1: symc is faster) and the max error against a float64 sum. JSON: $OUT or
bench/results/cpu_column_sums.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import RESULTS, environment, print_table, write_json  # noqa: E402


def _bias(g):
    return g.sum(0)


def _ln_wb(x, mean, rstd, g):
    return ((x - mean) * rstd * g).sum(0), g.sum(0)


OPS = {"bias": _bias, "ln_wb": _ln_wb}


def make_inputs(op: str, rows: int, cols: int, seed: int = 0) -> tuple:
    gen = torch.Generator().manual_seed(seed)
    g = torch.randn(rows, cols, generator=gen)
    if op == "bias":
        return (g,)
    x = torch.randn(rows, cols, generator=gen)
    return (x, x.mean(1, keepdim=True), torch.rand(rows, 1, generator=gen) + 0.5, g)


def min_us(fn, args, reps: int) -> float:
    best = float("inf")
    for _ in range(reps):
        start = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - start)
    return best * 1e6


def run(rows_list, cols_list, reps: int) -> list[dict]:
    import symc

    out = []
    for op, fn in OPS.items():
        compiled = symc.compile(fn)
        for cols in cols_list:
            for rows in rows_list:
                args = make_inputs(op, rows, cols)
                got = compiled(*args)
                exact = fn(*(a.double() for a in args))
                got, exact = (got, exact) if isinstance(got, tuple) else ((got,), (exact,))
                err = max((a.double() - b).abs().max().item() for a, b in zip(got, exact))
                compiled(*args)
                symc_us = min_us(compiled, args, reps)
                eager_us = min_us(fn, args, reps)
                out.append({"op": op, "rows": rows, "cols": cols, "eager_us": round(eager_us, 1),
                            "symc_us": round(symc_us, 1),
                            "symc_vs_eager": round(symc_us / eager_us, 3), "max_err": err})
        out.append({"op": op, "compilations": len(compiled.entries)})
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=None)
    p.add_argument("--rows", default="64,257,1024,4099,16384")
    p.add_argument("--cols", default="64,256,768,3072")
    p.add_argument("--reps", type=int, default=30)
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", RESULTS)) /
                   "cpu_column_sums.json")
    args = p.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    rows = [int(r) for r in args.rows.split(",")]
    cols = [int(c) for c in args.cols.split(",")]
    results = run(rows, cols, args.reps)
    print_table(f"column sums, {torch.get_num_threads()} thread(s), min us",
                [r for r in results if "rows" in r],
                [("op", "op", ""), ("rows", "rows", ""), ("cols", "cols", ""),
                 ("eager_us", "eager", ".1f"), ("symc_us", "symc", ".1f"),
                 ("symc_vs_eager", "symc/eager", ".3f"), ("max_err", "err", ".1e")])
    print([r for r in results if "compilations" in r])
    write_json(args.out, {"benchmark": "cpu_column_sums", "threads": torch.get_num_threads(),
                          "reps": args.reps, "environment": environment(), "results": results,
                          "loadavg": os.getloadavg()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
