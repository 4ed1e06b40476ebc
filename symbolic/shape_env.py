"""ShapeEnv: the symbols of one compilation and every fact known or assumed about them.

    env = ShapeEnv()
    s0 = env.create_symbol(5, SizeSource(LocalSource("x"), 0))   # s0, hint 5, range [1, inf)
    env.evaluate(s0 > 100)   # False, and records the guard `s0 <= 100`
    env.evaluate(2*s0 > s0)  # True, proved by value ranges: no guard

Deciding a condition goes sympy -> value ranges -> z3 -> hint (recording a guard). `expect`
records a runtime assert instead of a guard: for conditions eager would fail on anyway.
"""

from __future__ import annotations

import builtins
import contextlib
import contextvars
import math
from collections import Counter
from dataclasses import dataclass, field

import sympy
import z3

from symbolic.analyzer import symbol_key
from symbolic.binding import bind_frame
from symbolic.errors import ShapeError, SymbolicError
from symbolic.functions import FloorDiv, sym_int
from symbolic.printer import python_str
from symbolic.ranges import ValueRange, bounds, decide_relation
from symbolic.source import SizeSource, Source
from symbolic.z3_bridge import to_z3, z3_locked

builtins_max = builtins.max  # create_symbol's keyword `max` shadows the builtin

_LOCATION: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "symc_user_location", default=None
)


@contextlib.contextmanager
def user_location(where: str | None):
    """Attribute the guards and asserts recorded inside to the user's `file:line` `where`."""
    token = _LOCATION.set(where)
    try:
        yield
    finally:
        _LOCATION.reset(token)


@dataclass(frozen=True, slots=True)
class SymbolInfo:
    symbol: sympy.Symbol
    source: Source
    hint: int
    range: ValueRange


@dataclass(frozen=True, slots=True)
class ShapeGuard:
    """A size condition the compiled code was specialised on (`expr` held for the example)."""

    expr: sympy.Basic
    where: str | None = None

    def __str__(self) -> str:
        return python_str(self.expr)


@dataclass(frozen=True, slots=True)
class RuntimeAssert:
    """A size condition eager would also fail without; checked at run time, never recompiled."""

    expr: sympy.Basic
    message: str = ""
    where: str | None = None
    error: type = ShapeError  # what a failure raises: ShapeAssertionError for `assert`

    def __str__(self) -> str:
        return python_str(self.expr) + (f"  ({self.message})" if self.message else "")


@dataclass
class ShapeEnvConfig:
    z3_timeout_ms: int = 200
    specialize_zero_one: bool = True


@dataclass
class ShapeEnv:
    """Symbols, value ranges, replacements, divisibility facts, guards and runtime asserts."""

    config: ShapeEnvConfig = field(default_factory=ShapeEnvConfig)
    symbols: dict[sympy.Symbol, SymbolInfo] = field(default_factory=dict)
    ranges: dict[sympy.Symbol, ValueRange] = field(default_factory=dict)
    replacements: dict[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    divisible: set[tuple[sympy.Expr, int]] = field(default_factory=set)
    guards: list[ShapeGuard] = field(default_factory=list)
    asserts: list[RuntimeAssert] = field(default_factory=list)
    decided_by: Counter = field(default_factory=Counter)
    _z3_cache: dict = field(default_factory=dict)
    _version: int = 0  # bumped whenever a fact is added; part of the z3 cache key
    # Set while capture is inside the program's `try` block: a failing size check must raise
    # where the program can catch it, so it is a guard (other sizes recompile and run eagerly).
    asserts_as_guards: bool = False

    # ------------------------------------------------------------------ symbols
    def create_symbol(
        self,
        hint: int,
        source: Source,
        *,
        dynamic: bool = True,
        min: int | None = None,
        max: int | None = None,
    ) -> sympy.Expr:
        """A fresh size symbol for a value `hint` read from `source`, or the constant if static.

        Hints 0 and 1 are specialised (returned as constants) unless the user gave a range.
        Symbols are positive, so a hint of 0 is always specialised and `min` below 1 means 1.
        """
        hint = int(hint)
        user_range = min is not None or max is not None
        if not dynamic or hint <= 0:
            return sympy.Integer(hint)
        if self.config.specialize_zero_one and hint == 1 and not user_range:
            return sympy.Integer(hint)
        symbol = sympy.Symbol(f"s{len(self.symbols)}", integer=True, positive=True)
        lo = 1 if min is None else builtins_max(1, int(min))
        value_range = ValueRange(lo, math.inf if max is None else int(max))
        if not value_range.contains(hint):
            raise ShapeError(f"{source} = {hint} is outside its declared range {value_range}")
        self.symbols[symbol] = SymbolInfo(symbol, source, hint, value_range)
        self.ranges[symbol] = value_range
        return symbol

    def source_of(self, symbol: sympy.Symbol) -> Source:
        return self.symbols[symbol].source

    def hint_of(self, symbol: sympy.Symbol) -> int:
        return self.symbols[symbol].hint

    @property
    def hints(self) -> dict[sympy.Symbol, int]:
        return {s: info.hint for s, info in self.symbols.items()}

    # ------------------------------------------------------------------ simplification
    def simplify(self, expr):
        """`expr` with replacements applied, divisibility used, and sympy's simplifications."""
        expr = sym_int(expr)
        if self.replacements:
            expr = expr.xreplace(self.replacements)
        if self.divisible and expr.has(FloorDiv, sympy.Mod):
            exact = expr.replace(FloorDiv, self._floordiv_known)
            exact = exact.replace(sympy.Mod, self._mod_known)
            if not any(r.is_Rational and not r.is_Integer for r in exact.atoms(sympy.Rational)):
                expr = exact
        return expr

    def _is_divisible(self, a: sympy.Expr, b: sympy.Expr) -> bool:
        if not b.is_Integer:
            return False
        b = int(b)
        terms = sympy.Add.make_args(sympy.expand(a))
        for term in terms:
            coeff, rest = term.as_coeff_Mul()
            if coeff.is_Integer and int(coeff) % b == 0:
                continue
            if any((rest, d) in self.divisible and d % b == 0 for d in self._divisors()):
                continue
            return False
        return True

    def _divisors(self) -> set[int]:
        return {d for _, d in self.divisible}

    def _floordiv_known(self, a, b):
        if self._is_divisible(a, b):
            return sympy.expand(a / b)
        return FloorDiv(a, b)

    def _mod_known(self, a, b):
        return sympy.Integer(0) if self._is_divisible(a, b) else sympy.Mod(a, b)

    def size_hint(self, expr) -> int:
        """The value of `expr` at the example sizes: for heuristics only, records nothing."""
        value = sympy.sympify(self.simplify(expr)).xreplace(self.hints)
        value = sympy.sympify(value).xreplace(self.hints)  # replacements may reintroduce symbols
        if not value.is_number:
            raise ShapeError(f"no hint for {expr}: free symbols {value.free_symbols}")
        return int(value)

    def bounds(self, expr) -> ValueRange:
        return bounds(self.simplify(expr), self.ranges)

    # ------------------------------------------------------------------ deciding
    def _facts(self) -> list:
        """Everything known, as z3 formulas. A fact z3 cannot express is left out (still sound)."""
        facts = []
        for symbol, rng in self.ranges.items():
            var = to_z3(symbol)
            if not math.isinf(rng.lo):
                facts.append(var >= int(rng.lo))
            if not math.isinf(rng.hi):
                facts.append(var <= int(rng.hi))
        for symbol, expr in self.replacements.items():
            with contextlib.suppress(SymbolicError):
                facts.append(to_z3(symbol) == to_z3(expr))
        for expr, divisor in self.divisible:
            with contextlib.suppress(SymbolicError):
                facts.append(to_z3(sympy.Mod(expr, divisor)) == 0)
        for item in (*self.guards, *self.asserts):
            with contextlib.suppress(SymbolicError):
                facts.append(to_z3(item.expr))
        return facts

    @z3_locked
    def _z3_implies(self, cond) -> bool | None:
        """True if the facts prove `cond`, False if they prove `not cond`, None if unknown.

        A time-out or an expression z3 cannot take gives None: the caller then guards on the
        hint, which costs a guard but is never wrong.
        """
        key = (cond, self._version)
        if key in self._z3_cache:
            return self._z3_cache[key]
        try:
            target = to_z3(cond)
        except SymbolicError:
            return None
        solver = z3.Solver()
        solver.set("timeout", self.config.z3_timeout_ms)
        solver.add(*self._facts())
        answer = None
        if _check_with(solver, z3.Not(target)) == z3.unsat:
            answer = True
        elif _check_with(solver, target) == z3.unsat:
            answer = False
        self._z3_cache[key] = answer
        return answer

    def prove(self, cond) -> bool | None:
        """Decide `cond` without recording anything: True, False, or None when unknown."""
        if isinstance(cond, bool):
            return cond
        cond = self.simplify(cond)
        if cond in (sympy.true, sympy.false):
            self.decided_by["sympy"] += 1
            return bool(cond)
        by_range = decide_relation(cond, self.ranges)
        if by_range is not None:
            self.decided_by["ranges"] += 1
            return by_range
        by_z3 = self._z3_implies(cond)
        if by_z3 is not None:
            self.decided_by["z3"] += 1
        return by_z3

    def statically_known_true(self, cond) -> bool:
        return self.prove(cond) is True

    def evaluate(self, cond) -> bool:
        """Decide a size condition; if only the example sizes decide it, record a guard."""
        decided = self.prove(cond)
        if decided is not None:
            return decided
        cond = self.simplify(cond)
        value = self._hint_value(cond)
        self.decided_by["guard"] += 1
        recorded = cond if value else sympy.Not(cond)
        recorded = _normalise_not(recorded)
        self.guards.append(ShapeGuard(recorded, _LOCATION.get()))
        self._version += 1
        self._learn(recorded)
        return value

    def expect(self, cond, message: str = "", error: type = ShapeError) -> None:
        """Require a size condition eager would fail without: assert at run time, never guard.

        `error` (ShapeError or a subclass) is what a failure raises, now or at run time."""
        decided = self.prove(cond)
        where = _LOCATION.get()
        if decided is True:
            return
        if decided is False or not self._hint_value(self.simplify(cond)):
            at = f" at {where}" if where else ""
            raise error(f"{message or 'size check failed'}: expected {cond}{at}")
        if self.asserts_as_guards:
            self.evaluate(cond)  # true for the example: records the guard
            return
        cond = self.simplify(cond)
        self.asserts.append(RuntimeAssert(cond, message, where, error))
        self._version += 1
        self._learn(cond)

    def _hint_value(self, cond) -> bool:
        """`cond` at the example sizes; SymbolicError if a symbol has no example value."""
        value = cond.xreplace(self.hints)
        if value not in (sympy.true, sympy.false):
            value = sympy.simplify(value)
        if value not in (sympy.true, sympy.false):
            missing = sorted(map(str, value.free_symbols))
            raise SymbolicError(
                f"cannot decide {cond} from the example sizes: no hint for {missing}"
            )
        return bool(value)

    def evaluate_int(self, expr) -> int:
        """Specialise `expr` to its example value, recording the guard `expr == value`."""
        expr = self.simplify(expr)
        if expr.is_Integer:
            return int(expr)
        value = self.size_hint(expr)
        self.evaluate(sympy.Eq(expr, value))
        return value

    def _learn(self, fact) -> None:
        """Turn equalities into replacements and tighten ranges from simple bounds."""
        self._version += 1
        if isinstance(fact, sympy.And):
            for part in fact.args:
                self._learn(part)
        elif isinstance(fact, sympy.Eq):
            lhs, rhs = fact.lhs, fact.rhs
            candidates = [
                (a, b)
                for a, b in ((lhs, rhs), (rhs, lhs))
                if isinstance(a, sympy.Symbol) and a in self.symbols and a not in b.free_symbols
            ]
            # Keep the older symbol: `s1 == s0` replaces s1 by s0, whichever side it is on.
            candidates.sort(key=lambda pair: symbol_key(pair[0]), reverse=True)
            if candidates:
                self._replace(*candidates[0])
                return
            modulo = _divisibility(fact)
            if modulo is not None:
                self.divisible.add(modulo)
        elif isinstance(fact, sympy.core.relational.Relational):
            self._tighten(fact)

    def _replace(self, symbol: sympy.Symbol, expr: sympy.Expr) -> None:
        expr = self.simplify(expr)
        self.replacements = {k: v.xreplace({symbol: expr}) for k, v in self.replacements.items()}
        self.replacements[symbol] = expr
        if isinstance(expr, sympy.Symbol) and expr in self.ranges:
            self.ranges[expr] = self.ranges[expr].intersect(self.ranges[symbol])

    def _tighten(self, rel) -> None:
        lhs, rhs = rel.lhs, rel.rhs
        if isinstance(rhs, sympy.Symbol) and rhs.is_number is False and lhs.is_Integer:
            rel = rel.reversed
            lhs, rhs = rel.lhs, rel.rhs
        if not (isinstance(lhs, sympy.Symbol) and lhs in self.ranges and rhs.is_Integer):
            return
        value = int(rhs)
        if isinstance(rel, sympy.Ne):
            current = self.ranges[lhs]
            if current.lo == value:
                self.ranges[lhs] = ValueRange(value + 1, current.hi)
            elif current.hi == value:
                self.ranges[lhs] = ValueRange(current.lo, value - 1)
            return
        bound = {
            sympy.Le: ValueRange(-math.inf, value),
            sympy.Lt: ValueRange(-math.inf, value - 1),
            sympy.Ge: ValueRange(value, math.inf),
            sympy.Gt: ValueRange(value + 1, math.inf),
        }.get(type(rel))
        if bound is not None:
            self.ranges[lhs] = self.ranges[lhs].intersect(bound)

    # ------------------------------------------------------------------ binding at run time
    def bind_symbols(self, L: dict, G: dict | None = None) -> dict[sympy.Symbol, int]:
        """Symbol values for a new call of the frame with locals `L` and globals `G` (the one
        binder, symbolic/binding.py)."""
        return bind_frame(self.symbols, L, G)


def _check_with(solver: z3.Solver, extra) -> z3.CheckSatResult:
    solver.push()
    try:
        solver.add(extra)
        return solver.check()
    finally:
        solver.pop()


def _normalise_not(expr):
    if isinstance(expr, sympy.Not):
        inner = expr.args[0]
        if isinstance(inner, sympy.core.relational.Relational):
            return inner.negated
    return expr


def _divisibility(fact) -> tuple[sympy.Expr, int] | None:
    """`Eq(Mod(x, 8), 0)` -> (x, 8)."""
    for a, b in ((fact.lhs, fact.rhs), (fact.rhs, fact.lhs)):
        if isinstance(a, sympy.Mod) and b == 0 and a.args[1].is_Integer:
            return (a.args[0], int(a.args[1]))
    return None


__all__ = [
    "RuntimeAssert",
    "ShapeEnv",
    "ShapeEnvConfig",
    "ShapeGuard",
    "SizeSource",
    "SymbolInfo",
    "user_location",
]
