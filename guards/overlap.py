"""Do two compiled entries admit a common input? Which sizes does no entry admit?

    entry A: 2 <= L['x'].size(0) <= 64     entry B: L['x'].size(0) >= 32
    overlaps(A, B) -> True              overlap_example(A, B) -> {"L['x'].size(0)": 32}
    uncovered_examples([A, B], min_size=1)  ->  [{"L['x'].size(0)": 1}]

Entries' symbols are matched by their sources (`s0` of one entry need not be `s0` of another),
and sizes an entry specialised (a TensorMatchGuard's static sizes) constrain the same variables.
Besides sizes, entries that need a different dtype, device, rank or requires_grad for the same
source, or a different Python value, type, length or identity for the same source, never overlap.
"""

from __future__ import annotations

import math

import z3

from guards.constraints import guard_formula, sorted_symbols
from guards.model import (
    GuardSet,
    IdentityGuard,
    LengthGuard,
    TensorMatchGuard,
    TypeGuard,
    ValueGuard,
)
from symbolic import z3_locked

_COMPARED = {ValueGuard: "value", TypeGuard: "type_", LengthGuard: "length",
             IdentityGuard: "object_id"}

Z3_TIMEOUT_MS = 2000


@z3_locked
def size_constraints(entry: GuardSet) -> tuple[z3.BoolRef, dict[str, z3.ArithRef]]:
    """The entry's size constraints over variables named by source text, and those variables."""
    variables: dict[str, z3.ArithRef] = {}
    parts = []

    def var(text: str) -> z3.ArithRef:
        return variables.setdefault(text, z3.Int(text))

    substitution = {}
    for symbol, info in sorted_symbols(entry.env):
        v = var(str(info.source))
        substitution[z3.Int(symbol.name)] = v
        if not math.isinf(info.range.lo):
            parts.append(v >= int(info.range.lo))
        if not math.isinf(info.range.hi):
            parts.append(v <= int(info.range.hi))
    for guard in entry.shape_guards:
        parts.append(guard_formula(guard.expr, substitution))
    for guard in entry.other_guards:
        if isinstance(guard, TensorMatchGuard):
            for dim, size in guard.static_sizes:
                parts.append(var(f"{guard.source}.size({dim})") == size)
    return z3.And(*parts), variables


def tensor_conflict(a: GuardSet, b: GuardSet) -> str | None:
    """A property the two entries require differently (`L['x'].dtype`, `L['flag']`), or None."""
    required = {(type(g), str(g.source)): getattr(g, _COMPARED[type(g)])
                for g in a.other_guards if type(g) in _COMPARED}
    for guard in b.other_guards:
        if type(guard) not in _COMPARED:
            continue
        key = (type(guard), str(guard.source))
        mine = getattr(guard, _COMPARED[type(guard)])
        if key in required and not _same(required[key], mine):
            return str(guard.source)
    matches = {str(g.source): g for g in a.other_guards if isinstance(g, TensorMatchGuard)}
    for guard in b.other_guards:
        other = matches.get(str(guard.source)) if isinstance(guard, TensorMatchGuard) else None
        if other is None:
            continue
        for field in ("dtype", "device", "ndim", "requires_grad", "type_"):
            if getattr(guard, field) != getattr(other, field):
                return f"{guard.source}.{field}"
    return None


def _same(x, y) -> bool:
    return type(x) is type(y) and x == y


@z3_locked
def overlap_example(a: GuardSet, b: GuardSet) -> dict[str, int] | None:
    """Sizes both entries admit, or None when z3 proves there are none."""
    if tensor_conflict(a, b) is not None:
        return None
    fa, va = size_constraints(a)
    fb, vb = size_constraints(b)
    variables = {**va, **vb}
    solver = _solver()
    solver.add(fa, fb, *(v >= 0 for v in variables.values()))
    result = solver.check()
    if result != z3.sat:
        return None
    return _values(solver.model(), variables)


@z3_locked
def overlaps(a: GuardSet, b: GuardSet) -> bool:
    """True when some sizes pass both entries' shape guards (or z3 cannot tell: assume so)."""
    if tensor_conflict(a, b) is not None:
        return False
    fa, va = size_constraints(a)
    fb, vb = size_constraints(b)
    solver = _solver()
    solver.add(fa, fb, *(v >= 0 for v in {**va, **vb}.values()))
    return solver.check() != z3.unsat


@z3_locked
def uncovered_examples(
    entries: list[GuardSet], n: int = 3, *, min_size: int = 0, max_value: int | None = None
) -> list[dict[str, int]]:
    """Up to `n` distinct size assignments that no entry admits, smallest first."""
    constraints = [size_constraints(e) for e in entries]
    variables: dict[str, z3.ArithRef] = {}
    for _, vs in constraints:
        variables.update(vs)
    if not variables:
        return []
    solver = z3.Optimize()
    solver.set("timeout", Z3_TIMEOUT_MS)
    solver.add(*(z3.Not(f) for f, _ in constraints))
    solver.add(*(v >= min_size for v in variables.values()))
    if max_value is not None:
        solver.add(*(v <= max_value for v in variables.values()))
    solver.minimize(z3.Sum(*variables.values()))
    examples = []
    while len(examples) < n and solver.check() == z3.sat:
        model = solver.model()
        example = _values(model, variables)
        examples.append(example)
        solver.add(z3.Or(*(variables[k] != value for k, value in example.items())))
    return examples


def _solver() -> z3.Solver:
    solver = z3.Solver()
    solver.set("timeout", Z3_TIMEOUT_MS)
    return solver


def _values(model: z3.ModelRef, variables: dict[str, z3.ArithRef]) -> dict[str, int]:
    return {
        name: model.eval(v, model_completion=True).as_long()
        for name, v in sorted(variables.items())
    }
