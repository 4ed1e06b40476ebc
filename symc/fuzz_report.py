"""What `symc.fuzz` found: the cases it ran, failures with a shrunk reproducer, skipped cases.

    >>> print(report)
    symc.fuzz f (backend inductor): 41 cases in 2.31s (17.7 cases/s), 2 entries, 1 failure, ...
      entry 0: 16 admitted, 5 outside (2 recompiled)   guards: 1 <= s0 <= 16; s1 >= 1
    failures:
      1. entry 0 admitted: L['x'] (9, 3)   [s0 = 9, s1 = 3]
         output[0]: max abs error 1 > 0.0001 + 0.001 * |eager| ...
         minimal reproducer (4 tries): L['x'] (1, 1)
           f(x=torch.randn(1, 1))
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

PRINTED_FAILURES = 6


@dataclass(frozen=True)
class FuzzCase:
    """Sizes for one run: an assignment of an entry's symbols and the input shapes it gives."""

    entry: int
    kind: str                    # "admitted", "int32 edge" or "outside"
    values: dict[str, int]       # symbol name -> size
    shapes: dict[str, tuple]     # input source text -> shape
    violated: str = ""           # for an outside case: the guard its sizes fail

    @property
    def size(self) -> int:
        return sum(self.values.values())

    def shapes_text(self) -> str:
        return ", ".join(f"{src} {tuple(shape)}" for src, shape in self.shapes.items())

    def __str__(self) -> str:
        symbols = ", ".join(f"{s} = {v}" for s, v in self.values.items())
        text = f"entry {self.entry} {self.kind}: {self.shapes_text()}   [{symbols}]"
        return text + (f"   (violates {self.violated})" if self.violated else "")


@dataclass(frozen=True)
class Reproducer:
    """The smallest failing sizes shrinking found, and a call that rebuilds them."""

    case: FuzzCase
    code: str
    problem: str
    tries: int


@dataclass(frozen=True)
class Failure:
    case: FuzzCase
    problem: str                 # what differed: `output[0]: max abs error ...`
    max_error: float | None
    reproducer: Reproducer | None = None

    def lines(self) -> list[str]:
        lines = [str(self.case), f"   {self.problem}"]
        if self.reproducer is not None:
            r = self.reproducer
            lines.append(f"   minimal reproducer ({r.tries} shrink tries): {r.case.shapes_text()}")
            lines.append(f"     {r.code}")
            if r.problem.split(":")[0] != self.problem.split(":")[0]:
                lines.append(f"     {r.problem}")
        return lines


@dataclass(frozen=True)
class Skipped:
    case: FuzzCase
    reason: str


@dataclass
class EntrySummary:
    """Cases run against one compiled entry."""

    index: int
    guards: list[str]
    admitted: int = 0
    outside: int = 0
    recompiled: int = 0          # outside cases that compiled a new entry

    def __str__(self) -> str:
        guards = "; ".join(self.guards) or "(no shape guards)"
        return (f"entry {self.index}: {self.admitted} admitted, {self.outside} outside "
                f"({self.recompiled} compiled a new entry)   guards: {guards}")


@dataclass
class FuzzReport:
    function: str
    backend: str
    cases_run: int = 0
    seconds: float = 0.0
    entries: list[EntrySummary] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def cases_per_second(self) -> float:
        return self.cases_run / self.seconds if self.seconds > 0 else 0.0

    def __str__(self) -> str:
        plural = "" if len(self.failures) == 1 else "s"
        lines = [f"symc.fuzz {self.function} (backend {self.backend}): {self.cases_run} cases in "
                 f"{self.seconds:.2f}s ({self.cases_per_second:.1f} cases/s), "
                 f"{len(self.entries)} entries, {len(self.failures)} failure{plural}, "
                 f"{len(self.skipped)} skipped"]
        lines += [f"  {e}" for e in self.entries]
        if self.failures:
            lines.append("failures:")
            for i, failure in enumerate(self.failures[:PRINTED_FAILURES], 1):
                first, *rest = failure.lines()
                lines.append(f"  {i}. {first}")
                lines += [f"     {line}" for line in rest]
            if len(self.failures) > PRINTED_FAILURES:
                lines.append(f"  ... and {len(self.failures) - PRINTED_FAILURES} more "
                             f"(report.failures lists them all)")
        if self.skipped:
            lines.append("skipped:")
            lines += [f"  {s.case}\n     {s.reason}" for s in self.skipped]
        if self.notes:
            lines.append("notes:")
            lines += [f"  {note}" for note in self.notes]
        return "\n".join(lines)

    def to_json(self) -> dict:
        data = json.loads(json.dumps(asdict(self), default=str))
        data["cases_per_second"] = self.cases_per_second
        return data
