"""Sizes for shape fuzzing, asked of z3: at the edges of an entry's guards, and just outside.

    guards: 2 <= s0 <= 512, s0 % 8 == 0, s1 == 2*s0          (max_value=64 caps the search)
    edge_assignments(env, guards, n=8)  ->  [{s0: 8, s1: 16}, {s0: 64, s1: 128}, ...]
    outside_assignments(env, guards)    ->  [OutsideCase({s0: 1, s1: 2}, "s0 >= 2"), ...]
    nearest_assignment(env, guards, {s0: 3, s1: 5})  ->  {s0: 8, s1: 16}

Edges: each symbol's smallest and largest admitted value, each guard's boundary (`s0 = 512` for
`s0 <= 512`, one past and one before), divisibility edges, sizes 1 and 2 where admitted, then
random points moved to the nearest admitted sizes. `max_value` caps every symbol (raised to a
symbol's lower bound when that is higher) so test tensors stay small. Results are deterministic
for a given seed. `sizes_strategy` is a Hypothesis strategy drawing admitted assignments.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

import sympy
import z3

from guards.constraints import guard_formula, holds, shape_guards_of, sorted_symbols
from guards.model import GuardError
from guards.render import render_expr
from symbolic import ValueRange, to_z3, z3_locked

Z3_TIMEOUT_MS = 1000


@dataclass(frozen=True, slots=True)
class OutsideCase:
    """Sizes that fail `violated`; `exactly_one` when every other guard still holds."""

    values: dict
    violated: str
    exactly_one: bool = True

    def __str__(self) -> str:
        sizes = ", ".join(f"{s} = {v}" for s, v in self.values.items())
        only = "" if self.exactly_one else ", and others"
        return f"{sizes}  (violates {self.violated}{only})"


class _Problem:
    """The admitted region of one entry: symbols, their capped ranges, and guard formulas."""

    def __init__(self, env, guards, max_value: int) -> None:
        self.symbols = [s for s, _ in sorted_symbols(env)]
        self.ranges = {s: info.range for s, info in sorted_symbols(env)}
        self.guards = shape_guards_of(env if guards is None else guards)
        self.caps = {s: _cap(r, max_value) for s, r in self.ranges.items()}
        self.vars = {s: to_z3(s) for s in self.symbols}
        self.guard_formulas = [guard_formula(g.expr) for g in self.guards]
        self.nonlinear = any(_is_nonlinear(g.expr) for g in self.guards)
        # Admitted min and max of each symbol (filled by edge_assignments); searches stay inside.
        self.span = {s: (_lower(self.ranges[s]), int(self.caps[s])) for s in self.symbols}

    def range_formulas(self, capped: bool = True) -> list:
        out = []
        for s, v in self.vars.items():
            lo, hi = self.ranges[s].lo, (self.caps[s] if capped else self.ranges[s].hi)
            out.append(v >= (0 if math.isinf(lo) else int(lo)))
            if not math.isinf(hi):
                out.append(v <= int(hi))
        return out

    def admitted(self) -> list:
        return self.range_formulas() + self.guard_formulas

    def is_admitted(self, values: dict) -> bool:
        in_ranges = all(self.ranges[s].lo <= values[s] <= self.caps[s] for s in self.symbols)
        return in_ranges and all(holds(g.expr, values) for g in self.guards)


def _is_nonlinear(expr: sympy.Basic) -> bool:
    """A product of two symbolic factors, or a symbol raised to a power."""
    products = any(sum(1 for f in m.args if f.free_symbols) > 1 for m in expr.atoms(sympy.Mul))
    powers = any(p.base.free_symbols for p in expr.atoms(sympy.Pow))
    return products or powers


def _lower(value_range: ValueRange) -> int:
    return 0 if math.isinf(value_range.lo) else int(value_range.lo)


def _cap(value_range: ValueRange, max_value: int) -> float:
    floor = value_range.lo if not math.isinf(value_range.lo) else 0
    return min(value_range.hi, max(max_value, floor))


@z3_locked
def edge_assignments(env, guards=None, n: int = 32, seed: int = 0, max_value: int = 64) -> list:
    """Up to `n` distinct admitted assignments {symbol: int}, edges first, then random ones."""
    return _edges(_Problem(env, guards, max_value), n, seed)


def _edges(problem: _Problem, n: int, seed: int) -> list:
    if not problem.symbols:
        return []
    found: list[dict] = []
    seen: set = set()

    def add(values: dict | None) -> None:
        key = tuple(values[s] for s in problem.symbols) if values else None
        if key is not None and key not in seen:
            assert problem.is_admitted(values), f"z3 gave {values}, which the guards reject"
            seen.add(key)
            found.append(values)

    base = problem.admitted()
    _require_satisfiable(problem, base)
    for s, v in problem.vars.items():
        smallest = _optimum(problem, base, v, minimize=True)
        largest = _optimum(problem, base, v, minimize=False)
        if smallest is not None and largest is not None:
            problem.span[s] = (smallest[s], largest[s])
        add(smallest)
        add(largest)
    for extra in _boundary_targets(problem):
        add(_solve(problem, base + extra))
    for v in problem.vars.values():
        for size in (1, 2):
            add(_solve(problem, [*base, v == size]))
    _add_random(problem, base, found, add, n, seed)
    return found[:n]


def _require_satisfiable(problem: _Problem, base: list) -> None:
    if _solve(problem, base) is None:
        listing = ", ".join(render_expr(g.expr) for g in problem.guards)
        raise GuardError(f"no sizes up to the cap satisfy the guards: {listing or '(none)'}")


def _boundary_targets(problem: _Problem) -> list[list]:
    """For each relation inside a guard: lhs == rhs, one past, one before; mod edges."""
    targets = []
    for guard in problem.guards:
        for rel in sorted(guard.expr.atoms(sympy.core.relational.Relational), key=str):
            lhs, rhs = to_z3(rel.lhs), to_z3(rel.rhs)
            targets += [[lhs == rhs], [lhs == rhs + 1], [lhs == rhs - 1]]
        for mod in sorted(guard.expr.atoms(sympy.Mod), key=str):
            dividend, divisor = to_z3(mod.args[0]), to_z3(mod.args[1])
            targets += [[dividend == divisor], [dividend == 2 * divisor]]
            targets += [[dividend == divisor + 1], [dividend == divisor - 1]]
    return targets


def _solve(
    problem: _Problem, formulas: list, near: dict | None = None, *, bounded: bool = True
) -> dict | None:
    """Admitted sizes nearest to `near` (default: each symbol's lower end), or None.

    Symbols are fixed one at a time to the closest value z3 still finds satisfiable. Only
    sat/unsat answers are used, never an arbitrary model, so the same guards and seed always
    give the same sizes. `bounded=False` searches past the cap (for sizes outside the guards).
    """
    solver = z3.Solver()
    solver.set("timeout", Z3_TIMEOUT_MS)
    solver.add(*formulas)
    if solver.check() != z3.sat:
        return None
    values = {}
    for s, v in problem.vars.items():
        lo, hi = problem.span[s] if bounded else (0, 1 << 62)
        target = near[s] if near is not None else lo
        value = _closest(solver, v, target, lo, hi)
        if value is None:
            return None  # z3 gave up (time-out): better no case than a wrong one
        solver.add(v == value)
        values[s] = value
    return values


def _closest(solver: z3.Solver, var, target: int, lo: int, hi: int, radius: int = 24):
    """The admitted value of `var` nearest `target` (the smaller on a tie), given `solver`."""
    for distance in range(radius + 1):
        for value in (target - distance, target + distance) if distance else (target,):
            if lo <= value <= hi and _sat_with(solver, var == value):
                return value
    above = _extreme(solver, var, var > target + radius, minimize=True)
    below = _extreme(solver, var, var < target - radius, minimize=False)
    options = [x for x in (above, below) if x is not None]
    return min(options, key=lambda x: (abs(x - target), x)) if options else None


def _sat_with(solver: z3.Solver, extra) -> bool:
    solver.push()
    solver.add(extra)
    result = solver.check()
    solver.pop()
    return result == z3.sat


def _extreme(solver: z3.Solver, var, extra, *, minimize: bool) -> int | None:
    return _best_value([*solver.assertions(), extra], var, minimize=minimize)


def _best_value(formulas: list, objective, *, minimize: bool, nonlinear: bool = False):
    """The smallest (largest) value of `objective`, or None when unsat or z3 gives up.

    z3's Optimize answers `unknown` on products of symbols (`s0*s1 == s2*s3`, an nll_loss
    assert), which a plain solver settles quickly: those are bisected with sat checks.
    """
    if not nonlinear:
        optimizer = z3.Optimize()
        optimizer.set("timeout", Z3_TIMEOUT_MS)
        optimizer.add(*formulas)
        (optimizer.minimize if minimize else optimizer.maximize)(objective)
        result = optimizer.check()
        if result == z3.sat:
            return optimizer.model().eval(objective, model_completion=True).as_long()
        if result == z3.unsat:
            return None
    return _bisect(formulas, objective, minimize=minimize)


def _bisect(formulas: list, objective, *, minimize: bool) -> int | None:
    solver = z3.Solver()
    solver.set("timeout", Z3_TIMEOUT_MS)
    solver.add(*formulas)
    if solver.check() != z3.sat:
        return None
    best = solver.model().eval(objective, model_completion=True).as_long()
    better = (lambda v: objective <= v) if minimize else (lambda v: objective >= v)
    step = 1
    while True:  # gallop to a bound on the far side, then bisect
        probe = best - step if minimize else best + step
        verdict = _check_with(solver, better(probe))
        if verdict is None:
            return None
        if not verdict or abs(probe) > 1 << 62:
            break
        best, step = probe, step * 2
    lo, hi = sorted((best, probe))
    while hi - lo > 1:
        mid = (lo + hi) // 2
        verdict = _check_with(solver, better(mid))
        if verdict is None:
            return None
        if verdict:
            lo, hi = (lo, mid) if minimize else (mid, hi)
        else:
            lo, hi = (mid, hi) if minimize else (lo, mid)
    return hi if minimize else lo


def _check_with(solver: z3.Solver, extra) -> bool | None:
    solver.push()
    solver.add(extra)
    result = solver.check()
    solver.pop()
    return None if result == z3.unknown else result == z3.sat


def _optimum(
    problem: _Problem, formulas: list, objective, *, minimize: bool, bounded: bool = True
) -> dict | None:
    """Sizes where `objective` is smallest (largest); ties broken by `_solve`, so deterministic."""
    best = _best_value(formulas, objective, minimize=minimize, nonlinear=problem.nonlinear)
    if best is None:
        return None
    return _solve(problem, [*formulas, objective == best], bounded=bounded)


def _add_random(problem: _Problem, base: list, found: list, add, n: int, seed: int) -> None:
    """Random points: kept when admitted, else replaced by the nearest admitted sizes (z3)."""
    rng = random.Random(seed)
    for _ in range(4 * n):
        if len(found) >= n:
            return
        near = {s: rng.randint(*problem.span[s]) for s in problem.symbols}
        add(near if problem.is_admitted(near) else _solve(problem, base, near))


@z3_locked
def nearest_assignment(env, guards=None, targets=None, max_value: int = 64) -> dict | None:
    """The admitted sizes nearest `targets` ({symbol: int}), or None when none is found.

    Symbols are fixed in creation order, each to the admitted value nearest its target, so
    `targets={s0: 1, s1: 40}` keeps s1 near 40 only where the guards allow s0 = 1. Shrinking a
    failing case and aiming at large sizes (raise `max_value`) both use it.
    """
    problem = _Problem(env, guards, max_value)
    if not problem.symbols:
        return {}
    targets = {s: int((targets or {}).get(s, problem.span[s][0])) for s in problem.symbols}
    if problem.is_admitted(targets):
        return targets
    return _solve(problem, problem.admitted(), targets)


@z3_locked
def outside_assignments(env, guards=None, max_value: int = 64) -> list[OutsideCase]:
    """For each guard and range end: smallest sizes failing it while the others hold."""
    problem = _Problem(env, guards, max_value)
    checks = []
    for s, value_range in problem.ranges.items():
        v = problem.vars[s]
        if not math.isinf(value_range.lo):
            checks.append((f"{s} >= {int(value_range.lo)}", v >= int(value_range.lo)))
        if not math.isinf(value_range.hi):
            checks.append((f"{s} <= {int(value_range.hi)}", v <= int(value_range.hi)))
    checks += [
        (render_expr(g.expr), f)
        for g, f in zip(problem.guards, problem.guard_formulas, strict=True)
    ]
    nonnegative = [v >= 0 for v in problem.vars.values()]
    total = z3.Sum(*problem.vars.values()) if problem.vars else z3.IntVal(0)
    cases = []
    for index, (text, formula) in enumerate(checks):
        others = [f for k, (_, f) in enumerate(checks) if k != index]
        violated = [*nonnegative, *others, z3.Not(formula)]
        values = _optimum(problem, violated, total, minimize=True, bounded=False)
        exactly_one = values is not None
        if values is None:
            alone = [*nonnegative, z3.Not(formula)]
            values = _optimum(problem, alone, total, minimize=True, bounded=False)
        if values is not None:
            cases.append(OutsideCase(values, text, exactly_one))
    return cases


@z3_locked
def sizes_strategy(env, guards=None, max_value: int = 64):
    """A Hypothesis strategy of admitted {symbol: int} assignments (edges and near-random).

    Draws either one of the edge assignments or a random point moved to the nearest admitted
    sizes; shrinking moves the point towards each symbol's smallest admitted value.
    """
    from hypothesis import strategies as st

    problem = _Problem(env, guards, max_value)
    pool = _edges(problem, 32, 0)
    if not pool:
        return st.just({})
    base = problem.admitted()
    cache: dict = {}

    @z3_locked
    def nearest(targets: dict) -> dict:
        key = tuple(targets[s] for s in problem.symbols)
        if key not in cache:
            admitted = problem.is_admitted(targets)
            cache[key] = dict(targets) if admitted else _solve(problem, base, targets)
        return cache[key] or pool[0]

    targets = st.fixed_dictionaries({s: st.integers(*problem.span[s]) for s in problem.symbols})
    return st.one_of(st.sampled_from(pool), targets.map(nearest))
