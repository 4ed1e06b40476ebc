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
    sizes no entry admits (z3):
      f: s0 == 0 (L['x'].size(0)) compiles a new entry
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import guards
from symc.backends import lazy_compiles
from symc.call_mode import mode_text
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
    check_source: str = ""      # the generated guard check function (returns the failing index)
    call_source: str = ""       # the generated per-call path: guards, input reads, run
    grad_mode: str = ""         # the caller's grad mode it was compiled for (checked per call)


@dataclass
class BreakExplanation:
    function: str
    reason: str
    where: str | None
    line: str | None
    resumed_in: str | None = None   # the resume function(s) the split frame goes on in

    def __str__(self) -> str:
        text = f"{self.function}: {self.reason}" + (f" at {self.where}" if self.where else "")
        text += f" (resumed in {self.resumed_in})" if self.resumed_in else ""
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
    uncovered: list[str] = field(default_factory=list)   # sizes no entry admits (z3)
    overlaps: list[str] = field(default_factory=list)    # entries admitting common sizes (z3)
    eager_calls: list[str] = field(default_factory=list)  # calls run eagerly, and why

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
            lines.append(f"  guards:  (generated check: .entries[{i}].check_source, "
                         f"`symc explain --code`)")
            lines.append(f"    grad mode: {e.grad_mode}")
            lines += [f"    {g}" for g in e.guards]
            _section(lines, "  removed guards (implied by the others):", e.removed_guards)
            _section(lines, "  runtime asserts:", e.runtime_asserts)
            lines.append("  graph:")
            lines += [f"    {line}" for line in e.graph.strip().splitlines()]
            if i + 1 == len(self.entries) or self.entries[i + 1].function != e.function:
                lines += _split_lines(e.function, self.breaks)
        _section(lines, "graph breaks:", self.breaks)
        _section(lines, "recompile reasons:", self.recompile_reasons)
        _section(lines, "calls run eagerly:", self.eager_calls)
        _section(lines, "sizes no entry admits (z3):", self.uncovered)
        _section(lines, "overlapping entries (z3; the first one listed wins):", self.overlaps)
        return "\n".join(lines)

    def check_functions(self) -> str:
        """Every entry's generated check function, as Python source."""
        return "\n".join(f"# entry {i} of {e.function}\n{e.check_source}"
                         for i, e in enumerate(self.entries))

    def to_json(self) -> dict:
        return json.loads(json.dumps(asdict(self), default=str))


def _split_lines(function: str, breaks: list[BreakExplanation]) -> list[str]:
    """The breaks that split `function`'s frame, printed between its graphs and the next ones."""
    lines = []
    for b in breaks:
        if b.function == function and b.resumed_in:
            at = f" at {b.where}" if b.where else ""
            lines.append(f"-- graph break{at}: {b.reason}; resumed in {b.resumed_in}")
            lines += [f"     {b.line}"] if b.line else []
    return lines


def explain(compiled) -> Explanation:
    """The Explanation of everything `compiled` (from symc.compile) has done so far."""
    functions = compiled_functions(compiled)
    entries, breaks, reasons, eager = [], [], [], []
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
                entry.checker.source,
                entry.checker.guarded_source,
                mode_text(entry.grad_mode),
            ))
        breaks += [BreakExplanation(b.function, b.reason, b.where, b.line,
                                    getattr(b, "resumed_in", None)) for b in fn.breaks]
        reasons += [f"{fn.name}: {r}" for r in fn.recompile_reasons]
        eager += [f"{fn.name}: {n} call(s) {why}" for why, n in fn.eager_calls.items()]
    uncovered, overlapping = [], []
    for fn in functions:
        uncovered += coverage_gaps(fn)
        overlapping += entry_overlaps(fn)
    return Explanation(compiles, recompiles, len(breaks), entries, breaks, reasons,
                       functions[0].name, uncovered, overlapping, eager)


MAX_ANALYSED_ENTRIES = 8   # z3 questions grow with the square of the entries


def coverage_gaps(fn, n: int = 3) -> list[str]:
    """`s0 == 0 (L['x'].size(0)) compiles a new entry`: sizes that no entry of `fn` admits."""
    sets = [e.capture.guards for e in fn.entries[:MAX_ANALYSED_ENTRIES]]
    if not any(s.env.symbols for s in sets):
        return []
    names = {str(info.source): symbol.name for s in sets for symbol, info in s.env.symbols.items()}
    lines = []
    for example in guards.uncovered_examples(sets, n, min_size=0):
        sizes = ", ".join(f"{names.get(src, src)} == {v} ({src})" for src, v in example.items())
        lines.append(f"{fn.name}: {sizes} compiles a new entry")
    return lines


def entry_overlaps(fn) -> list[str]:
    """Pairs of entries that admit a common size, with one such size (z3)."""
    entries = fn.entries[:MAX_ANALYSED_ENTRIES]
    lines = []
    for i, a in enumerate(entries):
        for j in range(i + 1, len(entries)):
            example = guards.overlap_example(a.capture.guards, entries[j].capture.guards)
            if example is not None:
                sizes = ", ".join(f"{src} = {v}" for src, v in example.items()) or "any size"
                lines.append(f"{fn.name}: entries {i} and {j} both admit {sizes}")
    return lines


def _section(lines: list, title: str, items) -> None:
    """Append `title` and `items` indented two spaces deeper than the title, if any items."""
    if items:
        indent = " " * (len(title) - len(title.lstrip()) + 2)
        lines.append(title)
        lines += [f"{indent}{item}" for item in items]
