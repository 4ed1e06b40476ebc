"""Helpers shared by the guards tests: an entry over L['x'] with one symbol per dimension."""

import pytest
import sympy
import torch

from guards import GuardSet, TensorMatchGuard
from symbolic import LocalSource, ShapeEnv, ShapeGuard, SizeSource


def build_entry(hints, guards=(), ranges=None, static=(), tensor=True, where=None):
    """GuardSet for `L['x']` with sizes `hints`; `guards(symbols)` returns shape conditions.

    Guards are added as given (not decided by the env), so redundant and contradictory sets can
    be built on purpose. `ranges` maps dim -> (min, max); `static` lists (dim, size) pairs.
    """
    env = ShapeEnv()
    ranges = ranges or {}
    symbols = []
    for dim, hint in enumerate(hints):
        lo, hi = ranges.get(dim, (None, None))
        symbols.append(env.create_symbol(hint, SizeSource(LocalSource("x"), dim), min=lo, max=hi))
    conditions = guards(*symbols) if callable(guards) else guards
    for cond in conditions:
        env.guards.append(ShapeGuard(sympy.sympify(cond), where))
    others = []
    if tensor:
        ndim = len(hints) + len(static)
        others.append(
            TensorMatchGuard(
                LocalSource("x"), torch.float32, torch.device("cpu"), ndim, False, tuple(static)
            )
        )
    return GuardSet(others, env), symbols


@pytest.fixture
def entry():
    return build_entry
