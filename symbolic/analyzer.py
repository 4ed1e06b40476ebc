"""Analyzer: the one object that answers size questions, passed explicitly to whoever asks.

    an = Analyzer(env)                      # the compilation's ShapeEnv (or None: codegen tests)
    an.equal(s0*s1, s1*s0)                  # True: a proof, records nothing
    an.prove(s0 > 100)                      # None when unknown, records nothing
    an.evaluate(s0 > 100)                   # decided; a guard only when only the example decides
    with an.loop_extents({x0: s0}):         # facts inside a loop nest: 0 <= x0 <= s0 - 1
        an.nonnegative(s0 - 1 - x0)         # True
        an.native_division(s0 - 1 - x0, 2)  # C's `/` and `%` equal Python's `//` and `%`
    an.fits_int32(x0 + s0*x1)               # value ranges prove |e| < 2**31
    sorted(symbols, key=symbol_key)         # s2 before s10: by index, never by name

Facts come from three places, most specific first: ranges the caller adds (`an.ranges`,
a mutable dict: codegen's indirect indices), the scoped loop extents, the env's ranges (guards
tighten them), then sympy's assumptions (size symbols positive, loop variables and checked
runtime indices non-negative). A symbol none of them bounds is unbounded: never a wrong proof.
"""

from __future__ import annotations

import contextlib
import math

import sympy

from symbolic.errors import SymbolicError
from symbolic.functions import sym_int
from symbolic.ranges import UNBOUNDED, ValueRange, bounds, decide_relation

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
NONNEGATIVE = ValueRange(0, math.inf)
POSITIVE = ValueRange(1, math.inf)


def symbol_key(symbol) -> tuple:
    """The one symbol order: by name prefix, then by index (`s2` before `s10`), then name."""
    name = symbol.name if hasattr(symbol, "name") else str(symbol)
    stem = name.rstrip("0123456789")
    digits = name[len(stem):]
    return (stem, int(digits) if digits else -1, name)


def sort_symbols(symbols) -> list:
    return sorted(symbols, key=symbol_key)


class Analyzer:
    """Size questions over one ShapeEnv (optional) plus caller and loop-scope facts."""

    def __init__(self, env=None, ranges: dict | None = None):
        self.env = env
        self.ranges: dict = ranges if ranges is not None else {}
        self._extents: dict = {}  # loop var -> symbolic trip count (scoped)

    # ------------------------------------------------------------------ facts
    @contextlib.contextmanager
    def loop_extents(self, extents: dict):
        """Inside: each loop var `v` of `extents` lies in [0, extent - 1]."""
        saved = self._extents
        self._extents = {**saved, **{v: sympy.sympify(e) for v, e in extents.items()}}
        try:
            yield self
        finally:
            self._extents = saved

    @property
    def loop_vars(self) -> dict:
        return self._extents

    def size_ranges(self) -> dict:
        """The env's symbol ranges (guards tighten them) and the caller's: a snapshot."""
        env = self.env.ranges.items() if self.env is not None else ()
        return {**{s: r for s, r in env if isinstance(s, sympy.Symbol)}, **self.ranges}

    def range_of(self, symbol) -> ValueRange:
        if symbol in self.ranges:
            return self.ranges[symbol]
        if symbol in self._extents:
            hi = self.bounds(self._extents[symbol]).hi
            return ValueRange(0, hi - 1)
        if self.env is not None and symbol in self.env.ranges:
            return self.env.ranges[symbol]
        if symbol.is_positive:
            return POSITIVE
        if symbol.is_nonnegative:
            return NONNEGATIVE
        return UNBOUNDED

    def symbol_ranges(self, expr) -> dict:
        return {s: self.range_of(s) for s in sympy.sympify(expr).free_symbols}

    def simplify(self, expr):
        expr = sym_int(expr) if not isinstance(expr, sympy.Basic) else expr
        return self.env.simplify(expr) if self.env is not None else expr

    def bounds(self, expr) -> ValueRange:
        expr = self.simplify(sympy.sympify(expr))
        return bounds(expr, self.symbol_ranges(expr))

    # ------------------------------------------------------------------ deciding
    def prove(self, cond) -> bool | None:
        """True/False when every fact decides `cond`, else None; records nothing."""
        if isinstance(cond, bool):
            return cond
        cond = self.simplify(sympy.sympify(cond))
        if cond in (sympy.true, sympy.false):
            return bool(cond)
        local = cond.free_symbols & (set(self.ranges) | set(self._extents))
        if self.env is not None and not local:
            return self.env.prove(cond)  # sympy, ranges, z3 over every fact of the env
        decided = decide_relation(cond, self.symbol_ranges(cond))
        if decided is None:
            decided = self._prove_by_sign(cond)
        if decided is None and self.env is not None:
            decided = self.env.prove(cond)
        return decided

    def _prove_by_sign(self, cond) -> bool | None:
        """An order relation decided by `nonnegative` of its difference (loop extents)."""
        if not isinstance(cond, (sympy.Gt, sympy.Ge, sympy.Lt, sympy.Le)):
            return None
        diff = sympy.expand(cond.lhs - cond.rhs)
        if not diff.is_integer:
            return None
        sign = 1 if isinstance(cond, (sympy.Gt, sympy.Ge)) else -1
        strict = 1 if isinstance(cond, (sympy.Gt, sympy.Lt)) else 0
        if self.nonnegative(sign * diff - strict):
            return True
        if self.nonnegative(-sign * diff - (1 - strict)):
            return False
        return None

    def evaluate(self, cond) -> bool:
        """Decide `cond`; when only the example sizes decide it the env records a guard."""
        decided = self.prove(cond)
        if decided is not None:
            return decided
        if self.env is None:
            raise SymbolicError(f"deciding {cond} needs a ShapeEnv (a guard), found none")
        return self.env.evaluate(cond)

    def evaluate_int(self, expr) -> int:
        """`expr` specialised to its example value, with the guard `expr == value`."""
        expr = self.simplify(sympy.sympify(expr))
        if expr.is_Integer:
            return int(expr)
        if self.env is None:
            raise SymbolicError(f"specialising {expr} needs a ShapeEnv (a guard), found none")
        return self.env.evaluate_int(expr)

    def expect(self, cond, message: str = "", **kwargs) -> None:
        """A condition eager would fail without: a runtime assert in the env, never a guard."""
        if self.prove(cond) is True:
            return
        if self.env is None:
            raise SymbolicError(f"{message or 'size check'}: expected {cond}, found no ShapeEnv")
        self.env.expect(cond, message, **kwargs)

    def equal(self, a, b, *, guard: bool = False) -> bool:
        """Whether sizes `a` and `b` are equal: the one place size equality is decided.

        sympy first (equal after the env's replacements and expansion), then value ranges and
        z3 over every known fact, so `s5*(s1//s5)` equals `s1` once the program asserted it.
        Unknown gives False, unless `guard`: then the example sizes decide, with a guard."""
        if a is b or (not isinstance(a, sympy.Basic) and not isinstance(b, sympy.Basic)
                      and a == b):
            return True
        a, b = self.simplify(sympy.sympify(a)), self.simplify(sympy.sympify(b))
        if a == b or sympy.expand(a - b) == 0:
            return True
        if a.is_number and b.is_number:
            return False
        cond = sympy.Eq(a, b)
        if self.env is None:
            return decide_relation(cond, self.symbol_ranges(cond)) is True
        if self._differ_at_example(a, b):
            # every fact holds at the example sizes, so no proof of a == b exists: skip z3
            return self.env.evaluate(cond) if guard else False
        return self.env.evaluate(cond) if guard else self.env.prove(cond) is True

    def _differ_at_example(self, a, b) -> bool:
        try:
            return self.env.size_hint(a) != self.env.size_hint(b)
        except (SymbolicError, TypeError, ZeroDivisionError):
            return False

    # ------------------------------------------------------------------ index questions
    def nonnegative(self, expr) -> bool:
        """`expr >= 0` for every value the facts allow: value ranges, or (for what intervals
        lose, `x2 < s1`) the loop vars at their extreme ends and a polynomial whose
        coefficients are all >= 0 once each symbol is shifted to its lower bound."""
        expr = sympy.expand(sympy.sympify(expr))
        if expr.is_number:
            return bool(expr >= 0)
        if bounds(expr, self.symbol_ranges(expr)).lo >= 0:
            return True
        low = self._loop_minimum(expr)
        return low is not None and self._polynomial_nonnegative(low)

    def positive(self, expr) -> bool:
        return self.nonnegative(sympy.sympify(expr) - 1)

    def native_division(self, a, b) -> bool:
        """Truncating `a / b` and `a % b` (C, Triton) equal Python's `a // b` and `a % b`: the
        one proof both printers print from."""
        return self.nonnegative(a) and self.positive(b)

    def fits_int32(self, expr) -> bool:
        rng = self.bounds(expr)
        return rng.lo >= INT32_MIN and rng.hi <= INT32_MAX

    def _loop_minimum(self, expr):
        """`expr` with each loop var at the end of [0, extent - 1] that minimises it, when
        `expr` is linear in it with a coefficient of known sign free of loop vars; else None."""
        for v in [v for v in expr.free_symbols if v in self._extents]:
            coeff = expr.coeff(v)
            if coeff.free_symbols & set(self._extents) or sympy.expand(
                    expr - coeff * v).has(v):
                return None
            if self.nonnegative(coeff):
                expr = sympy.expand(expr.subs(v, 0))
            elif self.nonnegative(-coeff):
                expr = sympy.expand(expr.subs(v, self._extents[v] - 1))
            else:
                return None
        return expr

    def _polynomial_nonnegative(self, expr) -> bool:
        symbols = sort_symbols(expr.free_symbols)
        shift = {}
        for s in symbols:
            lo = self.range_of(s).lo
            if math.isinf(lo):
                return False
            shift[s] = s + int(lo)
        shifted = sympy.expand(expr.xreplace(shift))
        if shifted.is_number:
            return bool(shifted >= 0)
        if not shifted.is_polynomial(*symbols):
            return False
        try:
            poly = sympy.Poly(shifted, *symbols)
        except sympy.PolynomialError:
            return False
        return all(c >= 0 for c in poly.coeffs())
