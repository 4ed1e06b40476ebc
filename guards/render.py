"""Readable text for shape guards; the same text is the Python the checker runs.

    render_expr(Eq(Mod(s0, 8), 0))        ->  s0 % 8 == 0
    render_expr(Le(FloorDiv(s0, 2), s1))  ->  s0 // 2 <= s1
    render_range(s0, ValueRange(2, 1024)) ->  2 <= s0 <= 1024

`render_expr(expr, names)` prints symbols through `names` (the checker maps them to locals).
`bound_of(rel)` recognises a bound on one symbol (`s0 <= 1024`) so bounds merge into ranges.
"""

from __future__ import annotations

import math

import sympy

from symbolic import ValueRange
from symbolic.printer import oriented as _oriented
from symbolic.printer import python_str


def render_expr(expr: sympy.Basic, names: dict | None = None) -> str:
    """`expr` as a Python expression: `%` for Mod, `//` for FloorDiv, min/max, and/or/not."""
    return python_str(expr, names)


def bound_of(expr: sympy.Basic) -> tuple[sympy.Symbol, ValueRange] | None:
    """`s0 <= 1024` -> (s0, [-inf, 1024]); None when `expr` is not a bound on one symbol."""
    if not isinstance(expr, (sympy.Le, sympy.Lt, sympy.Ge, sympy.Gt)):
        return None
    rel = _oriented(expr)
    if not (isinstance(rel.lhs, sympy.Symbol) and rel.rhs.is_Integer):
        return None
    lhs, value = rel.lhs, int(rel.rhs)
    bound = {
        sympy.Le: ValueRange(-math.inf, value),
        sympy.Lt: ValueRange(-math.inf, value - 1),
        sympy.Ge: ValueRange(value, math.inf),
        sympy.Gt: ValueRange(value + 1, math.inf),
    }[type(rel)]
    return lhs, bound


def render_range(symbol: sympy.Symbol, value_range: ValueRange, name: str | None = None) -> str:
    """`2 <= s0 <= 1024`, `s0 >= 2`, `s0 <= 1024`, `s0 == 4`, or `True` when unbounded."""
    name = name or symbol.name
    lo, hi = value_range.lo, value_range.hi
    if lo == hi:
        return f"{name} == {int(lo)}"
    if math.isinf(lo) and math.isinf(hi):
        return "True"
    if math.isinf(hi):
        return f"{name} >= {int(lo)}"
    if math.isinf(lo):
        return f"{name} <= {int(hi)}"
    return f"{int(lo)} <= {name} <= {int(hi)}"


def range_expr(symbol: sympy.Symbol, value_range: ValueRange) -> sympy.Basic:
    """The sympy condition `lo <= symbol <= hi` (ends at infinity left out)."""
    parts = []
    if not math.isinf(value_range.lo):
        parts.append(sympy.Ge(symbol, int(value_range.lo)))
    if not math.isinf(value_range.hi):
        parts.append(sympy.Le(symbol, int(value_range.hi)))
    return sympy.And(*parts) if parts else sympy.true
