"""Explain data for one entry's guards: kept guards (readable), removed ones and why.

    describe_guards(guard_set, minimized) prints
        L['x'].dtype == torch.float32, device.type == 'cpu', dim() == 2, requires_grad == False
        2 <= s0 <= 1024                      L['x'].size(0)
        s1 == 2*s0                           model.py:40
        removed (implied by the others):
        s0 <= 2048                           implied by s0 <= 1024

Plain frozen dataclasses with `__str__` and `to_json()`; the top-level `symc.explain` embeds them.
"""

from __future__ import annotations

from dataclasses import dataclass

from guards.minimize import MinimizedGuards, minimize
from guards.model import (
    DictKeysGuard,
    IdentityGuard,
    LengthGuard,
    TensorMatchGuard,
    TypeGuard,
    ValueGuard,
)
from guards.render import render_expr

GUARD_KINDS = {
    TensorMatchGuard: "tensor",
    TypeGuard: "type",
    LengthGuard: "length",
    DictKeysGuard: "keys",
    IdentityGuard: "identity",
    ValueGuard: "value",
}


@dataclass(frozen=True, slots=True)
class GuardLine:
    """One kept guard: its readable text, its kind, and the user line that needed it."""

    text: str
    kind: str
    where: str | None = None
    source: str | None = None  # where the symbol is read, for a range line

    def __str__(self) -> str:
        notes = ", ".join(n for n in (self.source, self.where) if n)
        return f"{self.text:<36} {notes}".rstrip() if notes else self.text

    def to_json(self) -> dict:
        return {"text": self.text, "kind": self.kind, "where": self.where, "source": self.source}


@dataclass(frozen=True, slots=True)
class RemovedLine:
    """A shape guard z3 proved redundant, and the kept guards or ranges that imply it."""

    text: str
    implied_by: tuple[str, ...]
    where: str | None = None

    def __str__(self) -> str:
        return f"{self.text:<36} implied by {', '.join(self.implied_by)}"

    def to_json(self) -> dict:
        return {"text": self.text, "implied_by": list(self.implied_by), "where": self.where}


@dataclass(frozen=True, slots=True)
class GuardReport:
    guards: tuple[GuardLine, ...]
    removed: tuple[RemovedLine, ...] = ()

    def __str__(self) -> str:
        lines = [str(g) for g in self.guards]
        if self.removed:
            lines.append("removed (implied by the others):")
            lines += [f"  {r}" for r in self.removed]
        return "\n".join(lines)

    def to_json(self) -> dict:
        return {
            "guards": [g.to_json() for g in self.guards],
            "removed": [r.to_json() for r in self.removed],
        }


def describe_guards(guard_set, minimized: MinimizedGuards | None = None) -> GuardReport:
    """The report of `guard_set`'s guards (minimising its shape guards if not given)."""
    if minimized is None:
        minimized = minimize(guard_set)
    lines = [
        GuardLine(str(g), GUARD_KINDS.get(type(g), "other"), g.where)
        for g in guard_set.other_guards
    ]
    removed: tuple[RemovedLine, ...] = ()
    if minimized is not None:
        for symbol_range in minimized.ranges:
            where = ", ".join(dict.fromkeys(symbol_range.wheres)) or None
            lines.append(GuardLine(str(symbol_range), "shape", where, str(symbol_range.source)))
        for guard in minimized.predicates:
            lines.append(GuardLine(render_expr(guard.expr), "shape", guard.where))
        removed = tuple(
            RemovedLine(render_expr(r.guard.expr), r.implied_by, r.guard.where)
            for r in minimized.removed
        )
    return GuardReport(tuple(lines), removed)
