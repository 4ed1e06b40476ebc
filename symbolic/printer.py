"""Print size expressions as Python: `s0 % 8 == 0`, `s0 // 2 <= s1`, `min(s0, s1)`.

    python_str(Eq(Mod(s0, 8), 0))   ->  s0 % 8 == 0
    python_str(Le(100, s0))          ->  s0 >= 100     (constants go to the right)

sympy's own str prints `Mod(s0, 8)` and `Eq(s1, s0)`; guards, asserts and generated checks need
text that reads well and runs as Python. `names` maps symbols to other text (a local, a source).
"""

from __future__ import annotations

import sympy

from symbolic.functions import FloorDiv

# Python precedence levels, loosest first.
_OR, _AND, _NOT, _REL, _ADD, _MUL, _UNARY, _POW, _ATOM = range(1, 10)

_REL_OPS = {
    sympy.Eq: "==",
    sympy.Ne: "!=",
    sympy.Lt: "<",
    sympy.Le: "<=",
    sympy.Gt: ">",
    sympy.Ge: ">=",
}


def python_str(expr: sympy.Basic, names: dict | None = None) -> str:
    """`expr` as a Python expression: `%` for Mod, `//` for FloorDiv, min/max, and/or/not."""
    return _render(expr, names or {})[0]


def _wrap(part: tuple[str, int], level: int) -> str:
    text, prec = part
    return f"({text})" if prec < level else text


def _render(expr, names: dict) -> tuple[str, int]:
    if expr is sympy.true or expr is sympy.false:
        return str(bool(expr)), _ATOM
    if isinstance(expr, sympy.Symbol):
        return names.get(expr, expr.name), _ATOM
    if expr.is_Integer:
        value = int(expr)
        return str(value), (_ATOM if value >= 0 else _UNARY)
    if expr.is_Rational:
        return f"{expr.p}/{expr.q}", _MUL
    if isinstance(expr, sympy.core.relational.Relational):
        rel = _oriented(expr)
        left, right = _render(rel.lhs, names), _render(rel.rhs, names)
        return f"{_wrap(left, _ADD)} {_REL_OPS[type(rel)]} {_wrap(right, _ADD)}", _REL
    if isinstance(expr, sympy.And):
        parts = sorted(_wrap(_render(a, names), _NOT) for a in expr.args)
        return " and ".join(parts), _AND
    if isinstance(expr, sympy.Or):
        parts = sorted(_wrap(_render(a, names), _AND) for a in expr.args)
        return " or ".join(parts), _OR
    if isinstance(expr, sympy.Not):
        return f"not {_wrap(_render(expr.args[0], names), _NOT)}", _NOT
    if isinstance(expr, sympy.Add):
        return _render_add(expr, names), _ADD
    if isinstance(expr, sympy.Mul):
        return _render_mul(expr, names)
    if isinstance(expr, sympy.Pow):
        return _render_pow(expr, names)
    if isinstance(expr, FloorDiv):
        a, b = (_render(x, names) for x in expr.args)
        return f"{_wrap(a, _MUL)} // {_wrap(b, _UNARY)}", _MUL
    if isinstance(expr, sympy.Mod):
        a, b = (_render(x, names) for x in expr.args)
        return f"{_wrap(a, _MUL)} % {_wrap(b, _UNARY)}", _MUL
    if isinstance(expr, (sympy.Min, sympy.Max)):
        func = "min" if isinstance(expr, sympy.Min) else "max"
        args = sorted(_render(a, names)[0] for a in expr.args)
        return f"{func}({', '.join(args)})", _ATOM
    return str(expr), _ATOM


def _oriented(rel):
    """Put the constant on the right: `100 >= s0` reads as `s0 <= 100`."""
    if rel.lhs.is_number and not rel.rhs.is_number:
        return rel.reversed
    return rel


def _render_add(expr: sympy.Add, names: dict) -> str:
    terms = expr.as_ordered_terms()
    text = _wrap(_render(terms[0], names), _ADD)
    for term in terms[1:]:
        coeff, _ = term.as_coeff_Mul()
        if coeff.is_negative:
            text += f" - {_wrap(_render(-term, names), _MUL)}"
        else:
            text += f" + {_wrap(_render(term, names), _MUL)}"
    return text


def _render_mul(expr: sympy.Mul, names: dict) -> tuple[str, int]:
    coeff, rest = expr.as_coeff_Mul()
    if coeff == -1:
        return f"-{_wrap(_render(rest, names), _POW)}", _UNARY
    if coeff.is_Rational and not coeff.is_Integer:
        numerator = _render(coeff.p * rest, names)
        return f"{_wrap(numerator, _MUL)}/{coeff.q}", _MUL
    factors = sympy.Mul.make_args(expr)
    top = [f for f in factors if not (isinstance(f, sympy.Pow) and f.exp.is_negative)]
    bottom = [1 / f for f in factors if isinstance(f, sympy.Pow) and f.exp.is_negative]
    text = "*".join(_wrap(_render(f, names), _POW) for f in top) or "1"
    for factor in bottom:
        text += f"/{_wrap(_render(factor, names), _POW)}"
    return text, _MUL


def _render_pow(expr: sympy.Pow, names: dict) -> tuple[str, int]:
    base, exp = expr.args
    if exp.is_Integer and int(exp) < 0:
        return f"1/{_wrap(_render(base**-exp, names), _POW)}", _MUL
    return f"{_wrap(_render(base, names), _ATOM)}**{_wrap(_render(exp, names), _ATOM)}", _POW


def oriented(rel):
    """The same relation with a lone constant on the right (`100 >= s0` -> `s0 <= 100`)."""
    return _oriented(rel)
