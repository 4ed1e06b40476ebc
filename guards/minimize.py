"""Minimise an entry's shape guards with z3: drop each one the others (and ranges) imply.

    s0 <= 100, s0 <= 50, s0 % 8 == 0, s0 >= 1     (declared range of s0: [1, inf))
    -> kept: s0 <= 50, s0 % 8 == 0;  ranges: 1 <= s0 <= 50
       removed: s0 <= 100 (implied by s0 <= 50)

Greedy, in recording order: a guard goes when the declared ranges and the guards still kept prove
it; the unsat core names the guards that imply it. An unsatisfiable set raises GuardError (a
compiler bug: no input could ever pass). A z3 time-out keeps the guard (costs time, never
soundness).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
import z3

from guards.constraints import (
    declared_ranges,
    guard_formula,
    range_facts,
    shape_guards_of,
    sorted_symbols,
)
from guards.model import GuardError
from guards.render import bound_of, render_expr, render_range
from symbolic import ShapeGuard, Source, ValueRange, z3_locked

Z3_TIMEOUT_MS = 1000


@dataclass(frozen=True, slots=True)
class RemovedGuard:
    """A shape guard proved redundant, with the facts that imply it."""

    guard: ShapeGuard
    implied_by: tuple[str, ...]

    def __str__(self) -> str:
        return f"{render_expr(self.guard.expr)}  (implied by {', '.join(self.implied_by)})"


@dataclass(frozen=True, slots=True)
class SymbolRange:
    """A symbol's merged range (declared range and kept bound guards), where it is read from."""

    symbol: sympy.Symbol
    range: ValueRange
    source: Source
    wheres: tuple[str, ...] = ()

    def __str__(self) -> str:
        return render_range(self.symbol, self.range)


@dataclass(frozen=True, slots=True)
class MinimizedGuards:
    """The result: guards kept (all of them hold iff the original set holds), and removed ones.

    `ranges` has one entry per symbol (every symbol's range is checked); `predicates` are the
    kept guards that are not plain bounds on one symbol (`s1 == 2*s0`, `s0 % 8 == 0`).
    """

    kept: tuple[ShapeGuard, ...]
    removed: tuple[RemovedGuard, ...]
    ranges: tuple[SymbolRange, ...]

    @property
    def predicates(self) -> tuple[ShapeGuard, ...]:
        return tuple(g for g in self.kept if bound_of(g.expr) is None)

    @property
    def lines(self) -> list[str]:
        """The kept guards as read by a person: ranges merged, then the other predicates."""
        return [str(r) for r in self.ranges] + [render_expr(g.expr) for g in self.predicates]

    def __str__(self) -> str:
        text = "\n".join(self.lines)
        if self.removed:
            text += "\nremoved:\n" + "\n".join(f"  {r}" for r in self.removed)
        return text


@z3_locked
def minimize(guard_set) -> MinimizedGuards:
    """Drop every shape guard of `guard_set` implied by the others and the declared ranges."""
    env = guard_set.env
    guards = shape_guards_of(guard_set)
    facts = range_facts(env)
    formulas = [_formula_or_none(g.expr) for g in guards]
    _check_satisfiable(facts, formulas, guards)

    kept = list(range(len(guards)))
    removed = []
    for index in range(len(guards)):
        if formulas[index] is None:
            continue  # z3 cannot read it: keep it, checked as written
        others = [i for i in kept if i != index]
        core = _implied_by(facts, formulas, others, formulas[index])
        if core is None:
            continue
        kept.remove(index)
        names = [render_expr(guards[i].expr) for i in others if f"g{i}" in core]
        names += [text for k, (text, _) in enumerate(facts) if f"r{k}" in core]
        removed.append(RemovedGuard(guards[index], tuple(names) or ("the symbol ranges",)))
    kept_guards = tuple(guards[i] for i in kept)
    return MinimizedGuards(kept_guards, tuple(removed), _merged_ranges(env, kept_guards))


def _formula_or_none(expr):
    try:
        return guard_formula(expr)
    except GuardError:
        return None


def _check_satisfiable(facts, formulas, guards) -> None:
    solver = z3.Solver()
    solver.set("timeout", Z3_TIMEOUT_MS)
    solver.add(*(f for _, f in facts), *(f for f in formulas if f is not None))
    if solver.check() == z3.unsat:
        listing = "\n".join(f"  {render_expr(g.expr)}" for g in guards)
        ranges = ", ".join(text for text, _ in facts)
        raise GuardError(
            f"shape guards are unsatisfiable (no input can pass; a compiler bug):\n{listing}\n"
            f"with ranges {ranges}"
        )


def _implied_by(facts, formulas, others, target) -> set[str] | None:
    """Names (g<i>, r<k>) of an unsat core proving `target`, or None if not proved."""
    solver = z3.Solver()
    solver.set("timeout", Z3_TIMEOUT_MS)
    solver.set("core.minimize", True)
    for k, (_, formula) in enumerate(facts):
        solver.assert_and_track(formula, f"r{k}")
    for i in others:
        if formulas[i] is None:
            continue
        solver.assert_and_track(formulas[i], f"g{i}")
    solver.add(z3.Not(target))
    if solver.check() != z3.unsat:
        return None
    return {str(name) for name in solver.unsat_core()}


def _merged_ranges(env, kept: tuple[ShapeGuard, ...]) -> tuple[SymbolRange, ...]:
    declared = declared_ranges(env)
    merged = dict(declared)
    wheres: dict = {s: [] for s in declared}
    for guard in kept:
        bound = bound_of(guard.expr)
        if bound is None or bound[0] not in merged:
            continue
        symbol, value_range = bound
        merged[symbol] = merged[symbol].intersect(value_range)
        if guard.where:
            wheres[symbol].append(guard.where)
    return tuple(
        SymbolRange(symbol, merged[symbol], info.source, tuple(wheres[symbol]))
        for symbol, info in sorted_symbols(env)
    )
