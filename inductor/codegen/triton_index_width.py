"""int32 or int64 indexing for one kernel: proved at codegen where the ShapeEnv's ranges allow,
else decided per launch from the actual sizes.

    index_width(checks, ranges, loop_numels, symbols) -> IndexWidth("tl.int32" | "tl.int64", fits)

`checks` are the kernel's index expressions (over its loop variables and size symbols) and
`xnumel * rnumel + 1`. When value ranges prove every check fits in int32 (`Analyzer.fits_int32`), the kernel is int32 and
nothing is checked at run time. When they do not (sizes without an upper bound, the common case),
the kernel gets int32 bodies *and* int64 ones; `fits(*sizes)` evaluates, per launch size tuple
(cached by the launcher), symbolic upper and lower bounds of every check built here once:

    r0 + s1*x0   with x0 < s0, r0 < s1   ->   hi = (s1 - 1) + s1*(s0 - 1), lo = 0

and the launcher runs the int32 body when they fit, the int64 one otherwise (tensors past 2**31
elements). Powers of a size (`s1**2`, attention scores), `Max`/`Min` (clamped slices and cat
inputs) and indices loaded from memory (gathers: the codegen masks them into [0, size), the
range `ranges` holds for their symbol) are bounded too. Any expression these rules cannot
bound soundly keeps the kernel int64-only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy

from inductor.codegen.triton_printer import python_evaluator
from symbolic import Analyzer, FloorDiv
from symbolic.ranges import ValueRange, bounds

INT32_MAX = 2**31 - 1
MARGIN = 1 << 16  # program offsets run up to one block past xnumel; blocks stay far below this


@dataclass(frozen=True)
class IndexWidth:
    dtype: str  # "tl.int32" (proved) or "tl.int64"
    fits: Callable[..., bool] | None = None  # with int64: sizes -> the int32 bodies are safe


def index_width(checks, ranges: dict, loop_numels: dict, symbols) -> IndexWidth:
    an = Analyzer(ranges=dict(ranges))
    if all(an.fits_int32(c) for c in checks):
        return IndexWidth("tl.int32")
    positive = {s: ValueRange(1, float("inf")) for s in symbols}
    # symbols neither loop vars nor size arguments with finite integer ranges: gathered indices
    finite = {s: r for s, r in ranges.items() if s not in loop_numels and s not in positive
              and _finite(r)}
    try:
        limits = [_interval(sympy.sympify(c), loop_numels, positive, finite) for c in checks]
        evaluators = [(python_evaluator(lo, symbols), python_evaluator(hi, symbols))
                      for lo, hi in limits]
    except _Unbounded:
        return IndexWidth("tl.int64")
    except (NameError, SyntaxError, TypeError):  # a bound needs a symbol the kernel lacks
        return IndexWidth("tl.int64")

    def fits(*sizes) -> bool:
        return all(lo(*sizes) >= -INT32_MAX - 1 and hi(*sizes) <= INT32_MAX - MARGIN
                   for lo, hi in evaluators)
    return IndexWidth("tl.int64", fits)


class _Unbounded(Exception):
    """An expression these rules cannot bound soundly."""


def _finite(r: ValueRange) -> bool:
    return all(isinstance(v, int) or getattr(v, "is_Integer", False) for v in (r.lo, r.hi))


def _nonnegative(expr, positive: dict) -> bool:
    return bounds(sympy.sympify(expr), positive).lo >= 0


def _interval(e: sympy.Expr, loops: dict, positive: dict,
              finite: dict | None = None) -> tuple[sympy.Expr, sympy.Expr]:
    """(lo, hi): symbolic bounds of `e` over every loop variable value, in the size symbols;
    `finite` symbols (gathered indices) range over their constant bounds."""
    finite = finite or {}
    if e.is_Integer:
        return e, e
    if isinstance(e, sympy.Symbol):
        if e in loops:
            return sympy.Integer(0), loops[e] - 1
        if e in positive:
            return e, e
        if e in finite:
            return sympy.Integer(int(finite[e].lo)), sympy.Integer(int(finite[e].hi))
        raise _Unbounded(e)
    if isinstance(e, sympy.Add):
        parts = [_interval(a, loops, positive, finite) for a in e.args]
        return sympy.Add(*[p[0] for p in parts]), sympy.Add(*[p[1] for p in parts])
    if isinstance(e, sympy.Mul):
        coeff, rest = e.as_coeff_Mul()
        if coeff != 1:
            if not coeff.is_Integer:
                raise _Unbounded(e)
            lo, hi = _interval(rest, loops, positive, finite)
            return (coeff * lo, coeff * hi) if coeff > 0 else (coeff * hi, coeff * lo)
        parts = [_interval(a, loops, positive, finite) for a in e.args]
        if not all(_nonnegative(lo, positive) for lo, _ in parts):
            raise _Unbounded(e)
        return sympy.Mul(*[p[0] for p in parts]), sympy.Mul(*[p[1] for p in parts])
    if isinstance(e, sympy.Pow) and e.exp.is_Integer and e.exp > 0:
        lo, hi = _interval(e.base, loops, positive, finite)
        if not _nonnegative(lo, positive):  # monotone only for a base that is never negative
            raise _Unbounded(e)
        return lo ** e.exp, hi ** e.exp
    if isinstance(e, (sympy.Max, sympy.Min)):  # monotone in every argument
        parts = [_interval(a, loops, positive, finite) for a in e.args]
        kind = type(e)
        return kind(*[p[0] for p in parts]), kind(*[p[1] for p in parts])
    if isinstance(e, (FloorDiv, sympy.Mod)):
        a, b = e.args
        a_lo, a_hi = _interval(a, loops, positive, finite)
        b_lo, b_hi = _interval(b, loops, positive, finite)
        if not (_nonnegative(a_lo, positive) and bounds(b_lo, positive).lo >= 1):
            raise _Unbounded(e)
        if isinstance(e, FloorDiv):
            return sympy.Integer(0), a_hi  # a // b <= a for b >= 1
        return sympy.Integer(0), b_hi - 1
    raise _Unbounded(e)
