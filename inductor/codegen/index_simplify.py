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
"""

from __future__ import annotations

import sympy

from symbolic.functions import FloorDiv


def simplify_index(expr: sympy.Expr, extents: dict) -> sympy.Expr:
    """`expr` with every FloorDiv/Mod the rules above decide replaced (innermost first), then
    unravel-ravel pairs folded back (`recombine`)."""
    expr = sympy.sympify(expr)
    if not extents or not expr.has(FloorDiv, sympy.Mod):
        return expr
    expr = expr.replace(lambda e: isinstance(e, FloorDiv | sympy.Mod),
                        lambda e: _simplify_one(e, extents))
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
    terms = list(sympy.Add.make_args(expr))
    for i, term in enumerate(terms):
        coeff, mods = _split_factor(term, sympy.Mod)
        if mods is None:
            continue
        x, b = mods.args
        partner = sympy.expand(coeff * b * FloorDiv(x, b))
        for j, other in enumerate(terms):
            if j != i and sympy.expand(other - partner) == 0:
                rest = [t for k, t in enumerate(terms) if k not in (i, j)]
                return recombine(sympy.Add(*rest, coeff * x))
    return expr


def _split_factor(term, kind):
    """(coefficient, the one factor of type `kind`) of a product term, or (term, None)."""
    factors = sympy.Mul.make_args(term)
    found = [f for f in factors if isinstance(f, kind)]
    if len(found) != 1:
        return term, None
    return sympy.Mul(*[f for f in factors if f is not found[0]]), found[0]


def _simplify_one(expr, extents: dict):
    a, b = expr.args
    inner = _inner_atoms(a, extents)
    if inner:  # x0 // s1 and x0 % s1 inside: loop-like values with known extents
        names = {atom: sympy.Dummy("v", integer=True) for atom in inner}
        wider = {**extents, **{names[atom]: extent for atom, extent in inner.items()}}
        out = _simplify_one(type(expr)(a.xreplace(names), b), wider)
        return out.xreplace({v: atom for atom, v in names.items()})
    quotient, rest = _split_multiples(a, b)
    if quotient is None:
        return expr
    if _within(rest, b, extents):
        return quotient if isinstance(expr, FloorDiv) else rest
    scaled = _common_factor(rest, b, extents)
    if scaled is not None:  # rest = g*u + r with 0 <= r < g and b = g*k
        g, u, r, k = scaled
        if isinstance(expr, FloorDiv):
            return quotient + _simplify_one(FloorDiv(u, k), extents)
        return g * _simplify_one(sympy.Mod(u, k), extents) + r
    return quotient + FloorDiv(rest, b) if isinstance(expr, FloorDiv) else sympy.Mod(rest, b)


def _common_factor(rest, b, extents: dict):
    """(g, u, r, k) with rest == g*u + r, b == g*k, 0 <= r <= g - 1 and k an integer polynomial
    other than 1 (rules 3 and 4 of the module docstring), from a term of `rest`; or None."""
    for term in sympy.Add.make_args(rest):
        loop_vars = [v for v in term.free_symbols if v in extents]
        if len(loop_vars) != 1:
            continue
        g = sympy.cancel(term / loop_vars[0])
        k = sympy.cancel(b / g)
        if g == 1 or sympy.fraction(k)[1] != 1 or not _integer_polynomial(k) or k == 1:
            continue
        r = sympy.expand(rest - term)
        if r == 0 or _within(r, g, extents):
            return g, loop_vars[0], r, k
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
    symbols = sorted(expr.free_symbols, key=str)
    if not expr.is_polynomial(*symbols):
        return None
    try:
        return sympy.Poly(expr, *symbols)
    except sympy.PolynomialError:
        return None


def _within(r, b, extents: dict) -> bool:
    """0 <= r <= b - 1 for every value of the loop vars (each in [0, extent - 1]) and every
    size >= 1: r must be linear in the loop vars with non-negative coefficients."""
    loop_vars = [v for v in r.free_symbols if v in extents]
    if not loop_vars:
        return False  # a constant remainder: leave it to the printer's range checks
    high = r
    if _poly(r) is None:
        return False
    for v in loop_vars:
        coeff = sympy.expand(r).coeff(v)
        if coeff.free_symbols & set(extents) or not _nonnegative(coeff):
            return False
        high = high.subs(v, extents[v] - 1)
    low = sympy.expand(r.subs({v: 0 for v in loop_vars}))
    return _nonnegative(low) and _nonnegative(sympy.expand(b - 1 - high))


def _nonnegative(expr) -> bool:
    """Provably >= 0 for sizes >= 1: a polynomial whose coefficients are all >= 0, after moving
    to `s = 1 + t` (t >= 0) for each size symbol."""
    expr = sympy.expand(expr)
    if expr.is_number:
        return bool(expr >= 0)
    shift = {s: s + 1 for s in expr.free_symbols}
    poly = _poly(sympy.expand(expr.xreplace(shift)))
    return poly is not None and all(c >= 0 for c in poly.coeffs())
