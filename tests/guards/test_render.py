"""Readable rendering: ranges, bounds, tensor match, values, a whole GuardSet."""

import math

import pytest
import sympy
import torch

from guards import TensorMatchGuard, ValueGuard, bound_of, render_expr, render_range
from symbolic import AttrSource, LocalSource, ValueRange

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
INF = math.inf


@pytest.mark.parametrize(
    "value_range, expected",
    [
        (ValueRange(2, 1024), "2 <= s0 <= 1024"),
        (ValueRange(1, INF), "s0 >= 1"),
        (ValueRange(-INF, 64), "s0 <= 64"),
        (ValueRange(4, 4), "s0 == 4"),
        (ValueRange(-INF, INF), "True"),
    ],
)
def test_render_range(value_range, expected):
    assert render_range(s0, value_range) == expected


@pytest.mark.parametrize(
    "expr, expected",
    [
        (sympy.Le(s0, 1024), (s0, ValueRange(-INF, 1024))),
        (sympy.Lt(s0, 1024), (s0, ValueRange(-INF, 1023))),
        (sympy.Gt(s0, 1), (s0, ValueRange(2, INF))),
        (sympy.Ge(8, s0), (s0, ValueRange(-INF, 8))),
        (sympy.Gt(8, s0), (s0, ValueRange(-INF, 7))),
        (sympy.Le(2 * s0, 8), None),  # counterexample: not a bound on a lone symbol
        (sympy.Le(s0, s1), None),
        (sympy.Eq(s0, 4), None),
    ],
)
def test_bound_of(expr, expected):
    assert bound_of(expr) == expected, f"before={expr} expected={expected}"


def test_render_expr_uses_python_operators():
    assert render_expr(sympy.Eq(sympy.Mod(s0, 8), 0)) == "s0 % 8 == 0"
    assert render_expr(sympy.Eq(s1, 2 * s0)) == "s1 == 2*s0"


def test_guard_records_render():
    match = TensorMatchGuard(
        LocalSource("x"), torch.float32, torch.device("cpu"), 2, False, ((1, 768),)
    )
    assert str(match) == (
        "L['x'].dtype == torch.float32, device.type == 'cpu', dim() == 2, "
        "requires_grad == False, size(1) == 768"
    )
    training = ValueGuard(AttrSource(LocalSource("self"), "training"), True)
    assert str(training) == "L['self'].training == True"


def test_guard_set_str(entry):
    guard_set, _ = entry((8,), lambda a: [sympy.Eq(sympy.Mod(a, 8), 0), a <= 1024])
    assert str(guard_set).splitlines()[1:] == ["s0 % 8 == 0", "s0 <= 1024"]
