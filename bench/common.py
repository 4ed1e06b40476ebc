"""Shared helpers for the benchmarks: timing, compile counters, memory, tables and JSON.

    lengths = draw_lengths(40, 32, 1024, seed=0)     # same seeded lengths for every mode
    with torch_counts() as counts: ...; counts.compiles, counts.recompiles
    print_table(rows, ["mode", "compiles", "tok/s"]); write_json(path, payload)
"""

from __future__ import annotations

import json
import os
import platform
import random
import resource
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
if str(ROOT) not in sys.path:  # so benchmarks can import tests.models and the repo's packages
    sys.path.insert(0, str(ROOT))


def default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def sync(device: str) -> None:
    if str(device).startswith("cuda"):
        torch.cuda.synchronize()


def now(device: str) -> float:
    """perf_counter after the device has finished its queued work."""
    sync(device)
    return time.perf_counter()


def draw_lengths(n: int, lo: int, hi: int, seed: int = 0) -> list[int]:
    rng = random.Random(seed)
    return [rng.randint(lo, hi) for _ in range(n)]


def reset_peak_memory(device: str) -> None:
    if str(device).startswith("cuda"):
        torch.cuda.reset_peak_memory_stats()


def allocated_mb(device: str) -> float:
    """CUDA memory allocated now (the base a mode's peak is counted above); 0 off CUDA, where
    the peak is the process's RSS peak and has no base to take off."""
    if str(device).startswith("cuda"):
        return torch.cuda.memory_allocated() / 2**20
    return 0.0


def peak_memory_mb(device: str) -> tuple[float, str]:
    """(megabytes, what was measured): CUDA max allocated since the last reset, else process RSS
    peak (Linux ru_maxrss; it never resets, so later modes inherit earlier modes' peaks)."""
    if str(device).startswith("cuda"):
        return torch.cuda.max_memory_allocated() / 2**20, "cuda_max_allocated"
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024, "process_rss_peak"


class TorchCounts:
    """torch.compile's compile counts from torch._dynamo.utils.counters (reset on entry).

    compiles = frames compiled (counters['frames']['ok']); recompiles = frames compiled after the
    first training step (call mark_first_step() after it); graph breaks = sum of the
    'graph_break' counter; unique graphs = counters['stats']['unique_graphs']."""

    def __enter__(self) -> TorchCounts:
        import torch._dynamo
        from torch._dynamo.utils import counters

        torch._dynamo.reset()
        counters.clear()
        self._counters = counters
        self._after_first = None
        return self

    def __exit__(self, *exc) -> None:
        return None

    def mark_first_step(self) -> None:
        self._after_first = self.compiles

    @property
    def compiles(self) -> int:
        return int(self._counters["frames"]["ok"])

    @property
    def recompiles(self) -> int:
        return self.compiles - (self._after_first if self._after_first is not None else 0)

    @property
    def graph_breaks(self) -> int:
        return int(sum(self._counters["graph_break"].values()))

    @property
    def unique_graphs(self) -> int:
        return int(self._counters["stats"]["unique_graphs"])

    def as_dict(self) -> dict:
        return {"compiles": self.compiles, "recompiles": self.recompiles,
                "graph_breaks": self.graph_breaks, "unique_graphs": self.unique_graphs}


def symc_counts(compiled) -> dict:
    """compiles / recompiles / graph breaks / kernels / guards from symc.explain (defensively)."""
    import symc

    exp = symc.explain(compiled)
    entries = list(getattr(exp, "entries", []) or [])
    kernels = None
    for entry in entries:
        k = getattr(entry, "kernels", None)
        if k is not None:
            kernels = (kernels or 0) + (k if isinstance(k, int) else len(k))
    return {"compiles": getattr(exp, "compiles", None),
            "recompiles": getattr(exp, "recompiles", None),
            "graph_breaks": getattr(exp, "graph_breaks", None), "kernels": kernels,
            "guards": [str(g) for g in getattr(entries[0], "guards", [])] if entries else []}


def reset_compilers() -> None:
    """Forget every torch.compile and symc compilation, so modes do not share caches in memory."""
    try:
        import torch._dynamo

        torch._dynamo.reset()
    except Exception:  # noqa: BLE001
        pass
    try:
        import symc

        symc.reset()
    except Exception:  # noqa: BLE001
        pass


def environment() -> dict:
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    return {"python": sys.version.split()[0], "torch": torch.__version__, "gpu": gpu,
            "platform": platform.platform(), "cpu_count": os.cpu_count(),
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def fmt(value, spec: str = "") -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return format(value, spec or ".3g")
    return str(value)


def print_table(title: str, rows: list[dict], columns: list[tuple[str, str, str]]) -> None:
    """rows: dicts; columns: (key, header, format spec). Uses rich if present, else plain text."""
    try:
        from rich.console import Console
        from rich.table import Table

        table = Table(title=title)
        for _, header, _ in columns:
            table.add_column(header, justify="right")
        for row in rows:
            table.add_row(*[fmt(row.get(k), spec) for k, _, spec in columns])
        Console(width=max(160, len(columns) * 16)).print(table)
    except ImportError:
        print(title)
        print("  ".join(h for _, h, _ in columns))
        for row in rows:
            print("  ".join(fmt(row.get(k), spec) for k, _, spec in columns))


def write_json(path: str | Path, payload: dict) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, default=str) + "\n")
    print(f"wrote {path}")
    return path


def error_text(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0] if lines else ''}"[:500]


def record_wrapper_inputs(graphs, step) -> dict:
    """id(graph) -> the inputs each CompiledGraph's wrapper got in one call of `step()` (its
    run or its boxed run), the graphs restored after."""
    inputs, saved = {}, [(g, g.run, g.boxed_run) for g in graphs]
    for graph, run, boxed in saved:
        def noting(*args, graph=graph, run=run):
            inputs[id(graph)] = args
            return run(*args)

        def noting_boxed(args, graph=graph, boxed=boxed):
            inputs[id(graph)] = tuple(args)
            return boxed(args)
        graph.run = noting
        graph.boxed_run = noting_boxed if boxed is not None else None
    try:
        step()
    finally:
        for graph, run, boxed in saved:
            graph.run, graph.boxed_run = run, boxed
    return inputs


def wrap_mode(mode: str, model):
    """The model as a benchmark mode runs it: "torch_dynamic" (torch.compile(dynamic=True)),
    "symc" (symc.compile, inductor backend), anything else eager."""
    if mode == "torch_dynamic":
        return torch.compile(model, dynamic=True)
    if mode == "symc":
        import symc

        return symc.compile(model, backend="inductor")
    return model
