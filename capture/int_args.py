"""Python int arguments as size symbols: `f(x, n)` compiles once for every `n`.

    n = 6 (a frame argument)   -> SymInt(s2) read from L['n'], range s2 >= 1
    x.repeat(1, n) * n         -> sizes and scalars in s2, no guard on its value
    if n > 4: ...              -> the guard s2 > 4 (a branch reads it), not n == 6
    x.sum(n)                   -> prims needs an int dim: n is specialised (s2 == 6), the op retried

Values 0 and 1 and negative ones stay constants with a value guard (as sizes 0/1 do), and a
bool is never an int here. A torch op whose rule cannot take the symbol (a dim, a flag) gets
the example value, guarded, so an int argument never costs a graph break.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from capture.variables import (
    ConstVariable,
    DictVariable,
    ListVariable,
    SizeVariable,
    SliceVariable,
    SymIntVariable,
    TupleVariable,
    Variable,
    sym_value,
)
from guards import TypeGuard, ValueGuard
from symbolic import SizeSource, Source


@dataclass(frozen=True, slots=True)
class IntCarrierSource(Source):
    """An int argument as the size of an empty tensor (0, n): every backend reads symbols from
    input sizes, so the int is graph input `empty((0, n))` and its symbol that input's size(1)."""

    base: Source

    def __str__(self) -> str:
        return f"__import__('torch').empty((0, {self.base}), dtype=__import__('torch').bool)"

    def size_text(self, dim: int) -> str:
        """size(1) is the int itself: guards and explain read `L['n']`, not the carrier."""
        return str(self.base) if dim == 1 else super(IntCarrierSource, self).size_text(dim)


def int_input(state, value: int, source: Source) -> Variable:
    """An int argument of the frame: a symbol read from `source` (constants for 0, 1, < 0)."""
    state.guard(TypeGuard, source, int)
    if value < 2:
        state.guard(ValueGuard, source, value)
        return ConstVariable(value, source)
    carrier = IntCarrierSource(source)
    tensor = state.add_input(torch.empty((0, value), dtype=torch.bool), carrier, static=False)
    expr = tensor.meta.shape[1]
    return SymIntVariable(expr, source)


def is_int_argument(source) -> bool:
    return isinstance(source, SizeSource) and isinstance(source.base, IntCarrierSource)


def _arg_symbols(state, var: Variable, found: set) -> set:
    if isinstance(var, SymIntVariable):
        for symbol in state.env.simplify(var.expr).free_symbols:
            info = state.env.symbols.get(symbol)
            if info is not None and is_int_argument(info.source):
                found.add(symbol)
    elif isinstance(var, TupleVariable | ListVariable):
        for item in var.items:
            _arg_symbols(state, item, found)
    elif isinstance(var, DictVariable):
        for item in var.items.values():
            _arg_symbols(state, item, found)
    elif isinstance(var, SliceVariable):
        for item in (var.start, var.stop, var.step):
            _arg_symbols(state, item, found)
    return found


def specialise_int_args(state, args: list, kwargs: dict):
    """(args, kwargs) with every int-argument symbol in them specialised (guarded), or None if
    they hold none: the retry of a torch op whose rule refused a symbolic int."""
    found: set = set()
    for var in (*args, *kwargs.values()):
        _arg_symbols(state, var, found)
    if not found:
        return None
    for symbol in sorted(found, key=str):
        state.specialise(symbol)
    return [_concrete(state, a) for a in args], {k: _concrete(state, v) for k, v in kwargs.items()}


def _concrete(state, var: Variable) -> Variable:
    if isinstance(var, SymIntVariable):
        return sym_value(state.env.simplify(var.expr))
    if type(var) in (TupleVariable, ListVariable, SizeVariable):
        return type(var)([_concrete(state, v) for v in var.items])
    if isinstance(var, DictVariable):
        return DictVariable({k: _concrete(state, v) for k, v in var.items.items()})
    if isinstance(var, SliceVariable):
        return SliceVariable(*(_concrete(state, v) for v in (var.start, var.stop, var.step)))
    return var


__all__ = ["IntCarrierSource", "int_input", "is_int_argument", "specialise_int_args"]
