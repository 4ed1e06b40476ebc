"""An entry's shape constraints as z3 formulas: declared symbol ranges plus shape guards.

    range_facts(env)   ->  [("s0 >= 1", s0 >= 1), ("s0 <= 1024", s0 <= 1024)]
    holds(s0 <= 8, {s0: 4}) -> True

The declared range (`SymbolInfo.range`, from create_symbol/mark_dynamic) is always checked at run
time, so it may prove guards redundant. The env's *tightened* ranges may not: they were narrowed by
the very guards being minimised, and using them would drop a guard because it holds.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import sympy
import z3

from guards.model import GuardError, GuardSet
from symbolic import ShapeGuard, SymbolicError, ValueRange, symbol_key, to_z3


def declared_ranges(env) -> dict[sympy.Symbol, ValueRange]:
    """Each symbol's range as created (min/max given by the user, else [1, inf))."""
    return {symbol: info.range for symbol, info in sorted_symbols(env)}


def sorted_symbols(env) -> list:
    """(symbol, SymbolInfo) pairs in the one symbol order (s0, s1, ..., s10: `symbol_key`)."""
    return sorted(env.symbols.items(), key=lambda item: symbol_key(item[0]))


def range_facts(env, var=None) -> list[tuple[str, z3.BoolRef]]:
    """One (text, formula) per finite end of each declared range; `var` maps symbol -> z3 term."""
    var = var or to_z3
    facts = []
    for symbol, value_range in declared_ranges(env).items():
        if not math.isinf(value_range.lo):
            facts.append((f"{symbol} >= {int(value_range.lo)}", var(symbol) >= int(value_range.lo)))
        if not math.isinf(value_range.hi):
            facts.append((f"{symbol} <= {int(value_range.hi)}", var(symbol) <= int(value_range.hi)))
    return facts


def shape_guards_of(guards) -> list[ShapeGuard]:
    """Normalise a GuardSet, a ShapeEnv, or an iterable of ShapeGuards / sympy conditions."""
    if isinstance(guards, GuardSet):
        return guards.shape_guards
    if hasattr(guards, "symbols") and hasattr(guards, "guards"):
        return list(guards.guards)
    result = []
    for item in guards if isinstance(guards, Iterable) else ():
        result.append(item if isinstance(item, ShapeGuard) else ShapeGuard(sympy.sympify(item)))
    return result


def guard_formula(expr: sympy.Basic, substitution: dict | None = None) -> z3.BoolRef:
    """z3 form of a shape condition; GuardError if z3 cannot express it."""
    try:
        formula = to_z3(expr)
    except SymbolicError as error:
        raise GuardError(f"cannot reason about shape guard {expr}: {error}") from error
    if substitution:
        formula = z3.substitute(formula, *substitution.items())
    return formula


def holds(expr: sympy.Basic, values: dict[sympy.Symbol, int]) -> bool:
    """Whether the shape condition is true at these symbol values (plain sympy evaluation)."""
    result = expr.xreplace({s: sympy.Integer(v) for s, v in values.items()})
    if result not in (sympy.true, sympy.false):
        result = sympy.simplify(result)
    if result not in (sympy.true, sympy.false):
        raise GuardError(f"{expr} is not decided by {values}: got {result}")
    return bool(result)
