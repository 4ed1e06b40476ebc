"""Value ranges: interval bounds of size expressions from the ranges of their symbols.

    bounds(2*s0 + 1, {s0: [1, 1024]})  ->  ValueRange(3, 2049)

Used by `ShapeEnv.evaluate` before z3 (cheap, proves most `s0 >= 1`-style facts) and by codegen to
prove that an index fits in int32. Unknown structure gives the unbounded range, never a wrong one.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import sympy

from symbolic.functions import FloorDiv

INF = math.inf


@dataclass(frozen=True, slots=True)
class ValueRange:
    """Closed integer interval [lo, hi]; either end may be +-inf."""

    lo: float
    hi: float

    def __str__(self) -> str:
        return f"[{self.lo}, {self.hi}]"

    def intersect(self, other: ValueRange) -> ValueRange:
        return ValueRange(max(self.lo, other.lo), min(self.hi, other.hi))

    def contains(self, value: int) -> bool:
        return self.lo <= value <= self.hi

    @property
    def is_empty(self) -> bool:
        return self.lo > self.hi


UNBOUNDED = ValueRange(-INF, INF)


def _mul(a: float, b: float) -> float:
    if a == 0 or b == 0:
        return 0
    return a * b


def _combine(x: ValueRange, y: ValueRange, op) -> ValueRange:
    corners = [op(a, b) for a, b in itertools.product((x.lo, x.hi), (y.lo, y.hi))]
    if any(isinstance(c, float) and math.isnan(c) for c in corners):
        return UNBOUNDED
    return ValueRange(min(corners), max(corners))


def _floordiv(x: ValueRange, y: ValueRange) -> ValueRange:
    if y.lo <= 0 <= y.hi:
        return UNBOUNDED

    def div(a, b):
        if math.isinf(a) or math.isinf(b):
            return a / b if not (math.isinf(a) and math.isinf(b)) else math.nan
        return a // b

    return _combine(x, y, div)


def _mod(x: ValueRange, y: ValueRange) -> ValueRange:
    if y.lo > 0:
        hi = y.hi - 1
        if x.lo >= 0:
            return ValueRange(0, min(hi, x.hi))
        return ValueRange(0, hi)
    return UNBOUNDED


def _pow(x: ValueRange, exp: sympy.Expr) -> ValueRange:
    if not exp.is_Integer or int(exp) < 0:
        return UNBOUNDED
    result = ValueRange(1, 1)
    for _ in range(int(exp)):
        result = _combine(result, x, _mul)
    return result


def bounds(expr: sympy.Expr, ranges: dict[sympy.Symbol, ValueRange]) -> ValueRange:
    """A sound interval containing every value of `expr` when each symbol lies in its range."""
    if expr.is_Integer:
        return ValueRange(int(expr), int(expr))
    if expr.is_Number:
        return ValueRange(float(expr), float(expr))
    if isinstance(expr, sympy.Symbol):
        return ranges.get(expr, UNBOUNDED)
    if isinstance(expr, sympy.Pow):
        return _pow(bounds(expr.base, ranges), expr.exp)
    args = [bounds(a, ranges) for a in expr.args]
    if isinstance(expr, sympy.Add):
        return _fold(args, lambda a, b: a + b)
    if isinstance(expr, sympy.Mul):
        return _fold(args, _mul)
    if isinstance(expr, FloorDiv):
        return _floordiv(*args)
    if isinstance(expr, sympy.Mod):
        return _mod(*args)
    if isinstance(expr, sympy.Min):
        return ValueRange(min(a.lo for a in args), min(a.hi for a in args))
    if isinstance(expr, sympy.Max):
        return ValueRange(max(a.lo for a in args), max(a.hi for a in args))
    return UNBOUNDED


def _fold(args: list[ValueRange], op) -> ValueRange:
    result = args[0]
    for arg in args[1:]:
        result = _combine(result, arg, op)
    return result


def decide_relation(rel: sympy.Basic, ranges: dict[sympy.Symbol, ValueRange]) -> bool | None:
    """True/False when the ranges alone decide `rel` (a relation), else None."""
    if not isinstance(rel, sympy.core.relational.Relational):
        return None
    diff = bounds(sympy.expand(rel.lhs - rel.rhs), ranges)
    if isinstance(rel, (sympy.Gt, sympy.StrictGreaterThan)):
        return True if diff.lo > 0 else False if diff.hi <= 0 else None
    if isinstance(rel, (sympy.Ge, sympy.GreaterThan)):
        return True if diff.lo >= 0 else False if diff.hi < 0 else None
    if isinstance(rel, (sympy.Lt, sympy.StrictLessThan)):
        return True if diff.hi < 0 else False if diff.lo >= 0 else None
    if isinstance(rel, (sympy.Le, sympy.LessThan)):
        return True if diff.hi <= 0 else False if diff.lo > 0 else None
    if isinstance(rel, sympy.Eq):
        if diff.lo == diff.hi == 0:
            return True
        return False if (diff.lo > 0 or diff.hi < 0) else None
    if isinstance(rel, sympy.Ne):
        if diff.lo == diff.hi == 0:
            return False
        return True if (diff.lo > 0 or diff.hi < 0) else None
    return None
