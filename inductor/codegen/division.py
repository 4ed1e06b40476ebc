"""One division semantics for index expressions, shared by the C++ and Triton printers.

Sizes and indices follow Python: `FloorDiv(a, b)` rounds toward minus infinity and `Mod(a, b)`
takes the divisor's sign. C and Triton's `/` (`//`) and `%` truncate toward zero, which is the
same only when `a >= 0` and `b > 0`. A printer calls `native_division_ok(a, b, ranges)` for each
FloorDiv/Mod: True (proved from value ranges) lets it print the native operator, False makes it
call the backend's floor helper (`symc_floordiv`/`symc_mod` in C++, `floordiv_py`/`mod_py` in
Triton). Both backends decide from this one proof, so they agree on every expression:

    native_division_ok(x0 + s1, s1, ranges)   -> True   (x0, s1 >= 0, s1 >= 1)
    native_division_ok(-s0, 2, ranges)        -> False  (x * (-n // 2) at n = 5 is -3, not -2)

`ranges` maps symbols to `ValueRange`s (the ShapeEnv's, `env_ranges`); a symbol without one
gets what its sympy assumptions say (size symbols are positive, loop variables and checked
runtime indices non-negative), else it is unbounded: never a wrong proof.
"""

from __future__ import annotations

import math

import sympy

from symbolic.ranges import ValueRange, bounds

NONNEGATIVE = ValueRange(0, math.inf)
POSITIVE = ValueRange(1, math.inf)


def is_nonnegative(expr, ranges: dict) -> bool:
    expr = sympy.sympify(expr)
    return bounds(expr, with_assumptions(expr, ranges)).lo >= 0


def native_division_ok(a, b, ranges: dict) -> bool:
    """C-style truncating `a / b` and `a % b` equal Python's `a // b` and `a % b`."""
    b = sympy.sympify(b)
    return is_nonnegative(a, ranges) and bounds(b, with_assumptions(b, ranges)).lo > 0


def with_assumptions(expr, ranges: dict) -> dict:
    """`ranges` plus what sympy's assumptions say of `expr`'s other symbols: size symbols are
    positive (ShapeEnv), loop variables and checked runtime indices non-negative."""
    missing = [s for s in expr.free_symbols if s not in ranges]
    if not missing:
        return ranges
    out = dict(ranges)
    for s in missing:
        if s.is_positive:
            out[s] = POSITIVE
        elif s.is_nonnegative:
            out[s] = NONNEGATIVE
    return out


def exact_quotient(expr):
    """(numerator, denominator) when the integer-valued size or index `expr` carries rational
    coefficients (a view's inferred dim: `s0/8 + Mod(-s0, 8)/8`), else None. The division is
    exact (the value is an integer), so C's `/` and Triton's `//` print it for any sign."""
    expr = sympy.sympify(expr)
    if not isinstance(expr, (sympy.Add, sympy.Mul)) or not any(
            a.is_Rational and not a.is_Integer for a in expr.atoms(sympy.Rational)):
        return None
    numerator, denominator = sympy.fraction(sympy.together(expr))
    if not denominator.is_Integer or denominator == 1:
        return None
    return sympy.expand(numerator), denominator


def env_ranges(env) -> dict:
    """The ShapeEnv's current symbol ranges (guards refine them), or {} without an env."""
    if env is None:
        return {}
    return {s: r for s, r in env.ranges.items() if isinstance(s, sympy.Symbol)}
