"""Exact quotients in index expressions, shared by the C++ and Triton printers and the wrapper.

Whether a FloorDiv/Mod may print as the backend's truncating `/` (`//`) and `%` is the
Analyzer's `native_division(a, b)` (symbolic/analyzer.py: `a >= 0` and `b > 0` from the one
non-negativity proof); both printers ask it, so they agree on every expression:

    an.native_division(x0 + s1, s1)   -> True   (x0 >= 0, s1 >= 1)
    an.native_division(-s0, 2)        -> False  (x * (-n // 2) at n = 5 is -3, not -2)

What is left here is the one rational form an integer size takes: a view's inferred dim.
"""

from __future__ import annotations

import sympy


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
