"""Run `symc demo` (the CPU defaults unless told otherwise) and keep its numbers as JSON, so the
README's demo figures point to a file:
`python bench/demo_results.py --out bench/results/demo_cpu.json`.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import json
import platform
from datetime import UTC, datetime
from pathlib import Path

import torch
from rich.console import Console

from symc.demo import DemoOptions, format_report, run_demo


def _timing(t) -> dict | None:
    if t is None:
        return None
    return {"name": t.name, "steps": len(t.step_seconds), "total_s": round(t.total, 3),
            "steady_tokens_per_s": round(t.steady_tokens_per_s, 1), "error": t.error,
            "compiles": t.compiles, "recompiles": t.recompiles}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--steps", type=int, default=None)
    parser.add_argument("--out", type=Path, default=Path("bench/results/demo_cpu.json"))
    args = parser.parse_args(argv)
    opts = DemoOptions.for_device(args.device, steps=args.steps, progress=False)
    report = run_demo(opts, console=Console(file=io.StringIO()))
    ratio = None
    if report.compiled and report.eager and report.eager.steady_tokens_per_s:
        ratio = report.compiled.steady_tokens_per_s / report.eager.steady_tokens_per_s
    data = {"benchmark": "symc demo", "date": datetime.now(UTC).strftime("%Y-%m-%d"),
            "torch": torch.__version__, "python": platform.python_version(),
            "cpu_count": torch.get_num_threads(), "options": dataclasses.asdict(opts),
            "distinct_lengths": len(set(report.seqlens)), "first_loss": report.losses[0],
            "last_loss": report.losses[-1], "compiles": report.compiles,
            "recompiles": report.recompiles, "graph_breaks": report.graph_breaks,
            "failure": report.failure, "symc": _timing(report.compiled),
            "eager": _timing(report.eager), "symc_vs_eager_steady": ratio}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(data, indent=1) + "\n")
    print(format_report(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
