"""Index simplification with loop extents: `(x2 + s1*x1) // s1 -> x1` when 0 <= x2 < s1.

Views (reshape, unravel of a flat index) leave FloorDiv/Mod of loop variables in load and store
indices. Value ranges alone cannot drop them when the sizes are symbolic (`x2 < s1` is a
relation, not an interval), and on the GPU each one is an int64 division. Two exact rules, with
`extents` = {loop var: its symbolic trip count}:

    FloorDiv(b*q + r, b) = q + FloorDiv(r, b)     Mod(b*q + r, b) = Mod(r, b)   (q an integer)
    FloorDiv(r, b) = 0 and Mod(r, b) = r          when 0 <= r <= b - 1 for every loop value
    FloorDiv(g*u + r, g*k) = FloorDiv(u, k)       Mod(g*u + r, g*k) = g*Mod(u, k) + r
                                                  when 0 <= r <= g - 1 (u, k integers)

    simplify_index(FloorDiv(x2 + s1*x1 + s1**2*x0, s1), {x0: 4*s0, x1: s1, x2: s1}) == x1 + s1*x0

Whether `0 <= r <= b - 1` holds is the Analyzer's `nonnegative` under the extents as scoped
facts (symbolic/analyzer.py: the one non-negativity proof, the printers' too).
"""

from __future__ import annotations

import sympy

from symbolic.analyzer import Analyzer, sort_symbols
from symbolic.functions import FloorDiv


def simplify_index(expr: sympy.Expr, extents: dict, analyzer: Analyzer | None = None
                   ) -> sympy.Expr:
    """`expr` with every FloorDiv/Mod the rules above decide replaced (innermost first), then
    unravel-ravel pairs folded back (`recombine`). `analyzer` holds the facts about the other
    symbols (sizes, runtime indices); `extents` are added to it as scoped loop facts."""
    expr = sympy.sympify(expr)
    if not extents or not expr.has(FloorDiv, sympy.Mod):
        return expr
    an = analyzer if analyzer is not None else Analyzer()
    with an.loop_extents(extents):
        expr = expr.replace(lambda e: isinstance(e, FloorDiv | sympy.Mod),
                            lambda e: _simplify_one(e, an))
    return recombine(expr)


def recombine(expr: sympy.Expr) -> sympy.Expr:
    """Fold `c*b*FloorDiv(x, b) + c*Mod(x, b)` into `c*x`, an identity for every integer x and
    b != 0 (floor division and its modulo), so it needs no range facts. Merging loop dims
    leaves this shape when an index re-linearises the dims it split (x0 // s1, x0 % s1):

        recombine(32*s1*FloorDiv(x0, s1) + 32*Mod(x0, s1) + x1) == 32*x0 + x1
    """
    expr = sympy.expand(expr)
    if not expr.has(sympy.Mod) or not expr.has(FloorDiv):
        return expr
    expr = _flat_floordivs(expr)
    terms = list(sympy.Add.make_args(expr))
    for i, term in enumerate(terms):
        coeff, mods = _split_factor(term, sympy.Mod)
        if mods is None:
            continue
        x, b = mods.args
        partner = _flat_floordivs(sympy.expand(coeff * b * FloorDiv(x, b)))
        for j, other in enumerate(terms):
            if j != i and sympy.expand(other - partner) == 0:
                rest = [t for k, t in enumerate(terms) if k not in (i, j)]
                return recombine(sympy.Add(*rest, coeff * x))
    return expr


def _flat_floordivs(expr: sympy.Expr) -> sympy.Expr:
    """`FloorDiv(FloorDiv(x, a), b)` as `FloorDiv(x, a*b)` for positive a and b (an identity for
    every integer x): a dim merged from three, `4*s1*(x0 // (4*s1)) + s1*((x0 // s1) % 4) +
    x0 % s1`, then recombines to x0 in two steps."""
    def nested(e):
        return (isinstance(e, FloorDiv) and isinstance(e.args[0], FloorDiv)
                and e.args[1].is_positive and e.args[0].args[1].is_positive)
    return expr.replace(nested, lambda e: FloorDiv(e.args[0].args[0],
                                                   e.args[0].args[1] * e.args[1]))


def _split_factor(term, kind):
    """(coefficient, the one factor of type `kind`) of a product term, or (term, None)."""
    factors = sympy.Mul.make_args(term)
    found = [f for f in factors if isinstance(f, kind)]
    if len(found) != 1:
        return term, None
    return sympy.Mul(*[f for f in factors if f is not found[0]]), found[0]


def _simplify_one(expr, an: Analyzer):
    a, b = expr.args
    inner = _inner_atoms(a, an.loop_vars)
    if inner:  # x0 // s1 and x0 % s1 inside: loop-like values with known extents
        names = {atom: sympy.Dummy("v", integer=True) for atom in inner}
        with an.loop_extents({names[atom]: extent for atom, extent in inner.items()}):
            out = _simplify_one(type(expr)(a.xreplace(names), b), an)
        return out.xreplace({v: atom for atom, v in names.items()})
    quotient, rest = _split_multiples(a, b)
    if quotient is None:
        return expr
    if _within(rest, b, an):
        return quotient if isinstance(expr, FloorDiv) else rest
    scaled = _common_factor(rest, b, an)
    if scaled is not None:  # rest = g*u + r with 0 <= r < g and b = g*k
        g, u, r, k = scaled
        if isinstance(expr, FloorDiv):
            return quotient + _simplify_one(FloorDiv(u, k), an)
        return g * _simplify_one(sympy.Mod(u, k), an) + r
    return quotient + FloorDiv(rest, b) if isinstance(expr, FloorDiv) else sympy.Mod(rest, b)


def _common_factor(rest, b, an: Analyzer):
    """(g, u, r, k) with rest == g*u + r, b == g*k, 0 <= r <= g - 1 and k an integer polynomial
    other than 1 (rules 3 and 4 of the module docstring), from a term of `rest`; or None."""
    for term in sympy.Add.make_args(rest):
        loop_vars = [v for v in term.free_symbols if v in an.loop_vars]
        if len(loop_vars) != 1:
            continue
        g = sympy.cancel(term / loop_vars[0])
        k = sympy.cancel(b / g)
        if g == 1 or sympy.fraction(k)[1] != 1 or not _integer_polynomial(k) or k == 1:
            continue
        # u: every term that is a multiple of g (6*r0 + 768*x0 + x1 over 6: r0 + 128*x0)
        u, r = _split_multiples(rest, g)
        if u is not None and (r == 0 or _within(r, g, an)):
            return g, u, r, k
    return None


def _inner_atoms(a, extents: dict) -> dict:
    """{FloorDiv(v, c) or Mod(v, c) in `a`, v a loop var: its extent} where exact."""
    found = {}
    for atom in a.atoms(FloorDiv, sympy.Mod):
        v, c = atom.args
        if v not in extents:
            continue
        if isinstance(atom, sympy.Mod):
            found[atom] = c
            continue
        m = sympy.cancel(extents[v] / c)
        if sympy.fraction(m)[1] == 1 and _integer_polynomial(m):
            found[atom] = m
    return found


def _split_multiples(a, b):
    """(q, r) with a == b*q + r and q an integer polynomial; (None, a) when b is not usable."""
    if not isinstance(b, sympy.Expr) or b.is_number and b <= 0:
        return None, a
    quotient, rest = sympy.Integer(0), []
    for term in sympy.Add.make_args(sympy.expand(a)):
        q = sympy.cancel(term / b)
        if sympy.fraction(q)[1] == 1 and _integer_polynomial(q):
            quotient += q
        else:
            rest.append(term)
    return sympy.expand(quotient), sympy.Add(*rest)


def _integer_polynomial(expr) -> bool:
    if expr.is_Integer:
        return True
    if not all(s.is_integer for s in expr.free_symbols):
        return False
    poly = _poly(expr)
    return poly is not None and all(c.is_Integer for c in poly.coeffs())


def _poly(expr):
    """`expr` as a polynomial in its symbols, or None (FloorDiv, Mod, Min... inside)."""
    symbols = sort_symbols(expr.free_symbols)
    if not expr.is_polynomial(*symbols):
        return None
    try:
        return sympy.Poly(expr, *symbols)
    except sympy.PolynomialError:
        return None


def _within(r, b, an: Analyzer) -> bool:
    """0 <= r <= b - 1 for every value of the loop vars (each in [0, extent - 1]) and of the
    other symbols (the analyzer's facts); a remainder without loop vars is left to the printer."""
    if not r.free_symbols & set(an.loop_vars):
        return False
    return an.nonnegative(r) and an.nonnegative(sympy.expand(b - 1 - r))
