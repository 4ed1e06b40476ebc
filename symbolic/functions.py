"""Integer functions sizes need and sympy lacks: `FloorDiv(a, b)` is Python's `a // b`.

`sympy.floor(a / b)` introduces rationals and simplifies poorly; `FloorDiv` stays integer, folds
constants and obvious cases (`FloorDiv(8*s0, 8) -> s0`), and maps 1:1 onto z3 and C/Triton code.
Modulo uses sympy's own `Mod` (sign of the divisor, like Python).
"""

from __future__ import annotations

import sympy
from sympy.printing.precedence import PRECEDENCE


class FloorDiv(sympy.Function):
    """Python floor division on integers: FloorDiv(7, 2) == 3, FloorDiv(-7, 2) == -4."""

    is_integer = True

    @classmethod
    def eval(cls, a, b):
        if b == 0:
            raise ZeroDivisionError("FloorDiv by zero")
        if a.is_Integer and b.is_Integer:
            return sympy.Integer(int(a) // int(b))
        if b == 1:
            return a
        if a == 0:
            return sympy.Integer(0)
        if b.is_Integer:
            quotient = sympy.expand(a / b)
            if _is_integer_polynomial(quotient):
                return quotient
        return None

    def _sympystr(self, printer):
        # parenthesised operands: `((s2 + 1)//2)`, never the misleading `(s2 + 1//2)`
        a, b = (printer.parenthesize(x, PRECEDENCE["Mul"], strict=False) for x in self.args)
        return f"({a}//{b})"


def _is_integer_polynomial(expr: sympy.Expr) -> bool:
    """True when every coefficient is an integer and every symbol is an integer symbol."""
    if expr.is_Integer:
        return True
    if any(not s.is_integer for s in expr.free_symbols):
        return False
    terms = sympy.Add.make_args(expr)
    for term in terms:
        coeff, _ = term.as_coeff_Mul()
        if not coeff.is_Integer:
            return False
        powers = [a for a in sympy.Mul.make_args(term) if isinstance(a, sympy.Pow)]
        if any(not p.exp.is_Integer or p.exp < 0 for p in powers):
            return False
    return True


def sym_int(value) -> sympy.Expr:
    """Turn an int or a sympy expression into a sympy expression (ints become sympy.Integer)."""
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, bool):
        return sympy.true if value else sympy.false
    if isinstance(value, int):
        return sympy.Integer(value)
    raise TypeError(f"expected an int or a sympy expression, got {type(value).__name__}")
