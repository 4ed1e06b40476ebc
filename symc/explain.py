"""symc.explain(compiled) -> Explanation: entries, guards, graphs, breaks and recompile reasons.

    >>> print(symc.explain(f))
    f: 2 compiles, 1 recompile, 0 graph breaks
    entry 0 (captured in 0.012s)
      guards:
        L['x']: float32 cpu tensor of rank 2
        1 <= s0 <= 8            L['x'].size(0)
      graph: ...
    recompile reasons:
      entry 0: s0 <= 8 failed: s0 = 16 (L['x'].size(0), model.py:3)
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import guards
from symc.backends import lazy_compiles
from symc.compile import compiled_functions


@dataclass
class EntryExplanation:
    function: str
    guards: list[str]
    removed_guards: list[str]
    graph: str
    backend_graph: str | None
    capture_seconds: float
    compile_seconds: float
    runtime_asserts: list[str] = field(default_factory=list)
    hits: int = 0
    kernels: int = 0            # generated kernels over the graphs compiled so far (inductor)
    kernel_compile_seconds: float = 0.0   # forward/backward compiled lazily, on first use
    generated_code: dict[str, str] = field(default_factory=dict)   # graph name -> source


@dataclass
class BreakExplanation:
    function: str
    reason: str
    where: str | None
    line: str | None

    def __str__(self) -> str:
        text = f"{self.function}: {self.reason}" + (f" at {self.where}" if self.where else "")
        return text + (f"\n      {self.line}" if self.line else "")


@dataclass
class Explanation:
    compiles: int
    recompiles: int
    graph_breaks: int
    entries: list[EntryExplanation]
    breaks: list[BreakExplanation]
    recompile_reasons: list[str]
    name: str = ""

    def __str__(self) -> str:
        lines = [f"{self.name}: {self.compiles} compile(s), {self.recompiles} recompile(s), "
                 f"{self.graph_breaks} graph break(s)"]
        for i, e in enumerate(self.entries):
            lines.append(f"entry {i} of {e.function} (captured in {e.capture_seconds:.3f}s, "
                         f"compiled in {e.compile_seconds:.3f}s, {e.hits} call(s))")
            if e.kernels:
                lines.append(f"  kernels: {e.kernels} generated in {e.kernel_compile_seconds:.2f}s "
                             f"({', '.join(e.generated_code)}); symc.explain(f).entries[i]"
                             f".generated_code has the source")
            lines.append("  guards:")
            lines += [f"    {g}" for g in e.guards]
            if e.removed_guards:
                lines.append("  removed guards (implied by the others):")
                lines += [f"    {g}" for g in e.removed_guards]
            if e.runtime_asserts:
                lines.append("  runtime asserts:")
                lines += [f"    {a}" for a in e.runtime_asserts]
            lines.append("  graph:")
            lines += [f"    {line}" for line in e.graph.strip().splitlines()]
        if self.breaks:
            lines.append("graph breaks:")
            lines += [f"  {b}" for b in self.breaks]
        if self.recompile_reasons:
            lines.append("recompile reasons:")
            lines += [f"  {r}" for r in self.recompile_reasons]
        return "\n".join(lines)

    def to_json(self) -> dict:
        return json.loads(json.dumps(asdict(self), default=str))


def explain(compiled) -> Explanation:
    """The Explanation of everything `compiled` (from symc.compile) has done so far."""
    functions = compiled_functions(compiled)
    entries, breaks, reasons = [], [], []
    compiles = recompiles = 0
    for fn in functions:
        compiles += fn.compiles
        recompiles += max(0, fn.compiles - 1)
        for entry in fn.entries:
            report = guards.describe_guards(entry.capture.guards, entry.minimized)
            backend_graph = getattr(entry.run, "graph", None)
            compiled = {name: getattr(lazy.compiled, "inner", lazy.compiled)
                        for name, lazy in lazy_compiles(entry.run).items()
                        if lazy.compiled is not None}
            kernel_seconds = sum(lazy.seconds for lazy in lazy_compiles(entry.run).values())
            entries.append(EntryExplanation(
                fn.name,
                [str(g) for g in report.guards],
                [str(r) for r in report.removed],
                str(entry.capture.graph),
                None if backend_graph is None or backend_graph is entry.capture.graph
                else str(backend_graph),
                entry.capture.capture_seconds,
                entry.compile_seconds,
                [str(a) for a in entry.capture.env.asserts],
                entry.hits,
                sum(getattr(c, "kernels", 0) for c in compiled.values()),
                kernel_seconds,
                {name: c.source for name, c in compiled.items() if hasattr(c, "source")},
            ))
        breaks += [BreakExplanation(b.function, b.reason, b.where, b.line) for b in fn.breaks]
        reasons += [f"{fn.name}: {r}" for r in fn.recompile_reasons]
    return Explanation(compiles, recompiles, len(breaks), entries, breaks, reasons,
                       functions[0].name)
