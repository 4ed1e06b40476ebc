"""Translate size expressions between sympy and z3.

    to_z3(s0 // 8 * 8 <= s0)  ->  z3: (s0 / 8) * 8 <= s0   (z3 Int division is floor for b > 0)

Covers +, -, *, FloorDiv, Mod, Min, Max, integer powers, relations and And/Or/Not. Floor division
and modulo follow Python's sign rules for either sign of the divisor.

z3's Python API shares one context, which is not thread-safe: every use of z3 in symc (building
terms, solving) holds `Z3_LOCK` (decorate with `@z3_locked`), so threads compiling at once wait
for each other instead of corrupting it.
"""

from __future__ import annotations

import functools
import threading

import sympy
import z3

from symbolic.errors import SymbolicError
from symbolic.functions import FloorDiv


Z3_LOCK = threading.RLock()


def z3_locked(fn):
    """`fn` run while holding Z3_LOCK (re-entrant: locked functions may call each other)."""
    @functools.wraps(fn)
    def locked(*args, **kwargs):
        with Z3_LOCK:
            return fn(*args, **kwargs)

    return locked


def z3_var(symbol: sympy.Symbol) -> z3.ArithRef:
    return z3.Int(symbol.name)


def _floordiv(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    if z3.is_int_value(b):
        value = b.as_long()
        return a / b if value > 0 else (-a) / (-b)
    return z3.If(b > 0, a / b, (-a) / (-b))


def _mod(a: z3.ArithRef, b: z3.ArithRef) -> z3.ArithRef:
    return a - b * _floordiv(a, b)


def _pow(base, exp: sympy.Expr):
    if not exp.is_Integer or int(exp) < 0:
        raise SymbolicError(f"to_z3: only non-negative integer powers are supported, got **{exp}")
    result = z3.IntVal(1)
    for _ in range(int(exp)):
        result = result * base
    return result


_RELATIONS = {
    sympy.Eq: lambda a, b: a == b,
    sympy.Ne: lambda a, b: a != b,
    sympy.Lt: lambda a, b: a < b,
    sympy.Le: lambda a, b: a <= b,
    sympy.Gt: lambda a, b: a > b,
    sympy.Ge: lambda a, b: a >= b,
}


@z3_locked
def to_z3(expr: sympy.Basic):
    """A z3 expression equal to `expr` for every integer assignment of its symbols."""
    return _to_z3(expr)


@functools.lru_cache(maxsize=8192)
def _to_z3(expr: sympy.Basic):
    """`to_z3`'s cached work (called with Z3_LOCK held)."""
    if expr is sympy.true or expr == sympy.true:
        return z3.BoolVal(True)
    if expr is sympy.false or expr == sympy.false:
        return z3.BoolVal(False)
    if isinstance(expr, sympy.Symbol):
        return z3_var(expr)
    if expr.is_Integer:
        return z3.IntVal(int(expr))
    if expr.is_Rational:
        return z3.RealVal(f"{expr.p}/{expr.q}")
    for relation, build in _RELATIONS.items():
        if isinstance(expr, relation):
            return build(to_z3(expr.lhs), to_z3(expr.rhs))
    args = [to_z3(a) for a in expr.args] if not isinstance(expr, sympy.Pow) else None
    if isinstance(expr, sympy.Add):
        return functools.reduce(lambda x, y: x + y, args)
    if isinstance(expr, sympy.Mul):
        return functools.reduce(lambda x, y: x * y, args)
    if isinstance(expr, sympy.Pow):
        return _pow(to_z3(expr.base), expr.exp)
    if isinstance(expr, FloorDiv):
        return _floordiv(*args)
    if isinstance(expr, sympy.Mod):
        return _mod(*args)
    if isinstance(expr, sympy.Min):
        return functools.reduce(lambda x, y: z3.If(x <= y, x, y), args)
    if isinstance(expr, sympy.Max):
        return functools.reduce(lambda x, y: z3.If(x >= y, x, y), args)
    if isinstance(expr, sympy.And):
        return z3.And(*args)
    if isinstance(expr, sympy.Or):
        return z3.Or(*args)
    if isinstance(expr, sympy.Not):
        return z3.Not(*args)
    raise SymbolicError(f"to_z3: unsupported expression {expr!r} ({type(expr).__name__})")


@z3_locked
def from_z3(expr: z3.ExprRef, symbols: dict[str, sympy.Symbol] | None = None) -> sympy.Basic:
    """The sympy form of an integer z3 expression (values, variables, + - * div mod, relations)."""
    symbols = symbols or {}
    if z3.is_int_value(expr):
        return sympy.Integer(expr.as_long())
    if z3.is_true(expr):
        return sympy.true
    if z3.is_false(expr):
        return sympy.false
    if z3.is_const(expr) and expr.decl().kind() == z3.Z3_OP_UNINTERPRETED:
        name = expr.decl().name()
        return symbols.get(name, sympy.Symbol(name, integer=True))
    kids = [from_z3(k, symbols) for k in expr.children()]
    kind = expr.decl().kind()
    table = {
        z3.Z3_OP_ADD: lambda: sympy.Add(*kids),
        z3.Z3_OP_MUL: lambda: sympy.Mul(*kids),
        z3.Z3_OP_SUB: lambda: kids[0] - sympy.Add(*kids[1:]),
        z3.Z3_OP_UMINUS: lambda: -kids[0],
        z3.Z3_OP_IDIV: lambda: FloorDiv(kids[0], kids[1]),
        z3.Z3_OP_MOD: lambda: sympy.Mod(kids[0], kids[1]),
        z3.Z3_OP_EQ: lambda: sympy.Eq(kids[0], kids[1]),
        z3.Z3_OP_LE: lambda: sympy.Le(kids[0], kids[1]),
        z3.Z3_OP_LT: lambda: sympy.Lt(kids[0], kids[1]),
        z3.Z3_OP_GE: lambda: sympy.Ge(kids[0], kids[1]),
        z3.Z3_OP_GT: lambda: sympy.Gt(kids[0], kids[1]),
        z3.Z3_OP_AND: lambda: sympy.And(*kids),
        z3.Z3_OP_OR: lambda: sympy.Or(*kids),
        z3.Z3_OP_NOT: lambda: sympy.Not(kids[0]),
    }
    if kind not in table:
        raise SymbolicError(f"from_z3: unsupported z3 expression {expr}")
    return table[kind]()
