"""`symc bench NAME [ARGS...]`: run one of the repository's benchmark scripts in bench/."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

from symc.cli import subcommand

BENCHMARKS = {
    "train_varlen": "variable-length training: eager vs torch.compile vs symc",
    "gpu_kernels": "generated Triton kernels against torch on the GPU",
    "cpu_kernels": "generated C++ kernels against torch on the CPU",
    "guard_overhead": "per-call overhead of guards and dispatch",
}


def bench_dir() -> Path:
    """bench/ next to the symc package (a source checkout; wheels do not ship benchmarks)."""
    return Path(__file__).resolve().parents[1] / "bench"


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument("name", nargs="?", help="one of: " + ", ".join(BENCHMARKS))
    p.add_argument("args", nargs=argparse.REMAINDER, help="passed on to the benchmark script")


@subcommand("bench", "run a benchmark from bench/ (train_varlen, kernels, guard_overhead)")
def _bench(args: argparse.Namespace) -> int:
    if not args.name:
        for name, text in BENCHMARKS.items():
            print(f"  {name:<16} {text}")
        return 0
    script = bench_dir() / f"{args.name}.py"
    if args.name not in BENCHMARKS and not script.exists():
        print(f"symc bench: unknown benchmark {args.name!r}; expected one of "
              f"{', '.join(BENCHMARKS)}", file=sys.stderr)
        return 2
    if not script.exists():
        print(f"symc bench: {script} not found (benchmarks live in a source checkout of symc)",
              file=sys.stderr)
        return 2
    return subprocess.run([sys.executable, str(script), *args.args], check=False).returncode


_bench.configure = _configure
