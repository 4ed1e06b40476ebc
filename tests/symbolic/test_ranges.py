"""Value ranges: sound interval bounds, and relations they decide."""

import math

import pytest
import sympy

from symbolic import FloorDiv, ValueRange, bounds
from symbolic.ranges import decide_relation

# No positivity assumption, so sympy leaves `s0 >= 1` for the ranges to decide.
s0, s1 = sympy.symbols("s0 s1", integer=True)
R = {s0: ValueRange(1, 1024), s1: ValueRange(2, 8)}
INF = math.inf

BOUNDS = [
    (2 * s0 + 1, ValueRange(3, 2049)),
    (s0 - s1, ValueRange(-7, 1022)),
    (s0 * s1, ValueRange(2, 8192)),
    (FloorDiv(s0, s1), ValueRange(0, 512)),
    (sympy.Mod(s0, 8), ValueRange(0, 7)),
    (sympy.Mod(s1, 16), ValueRange(0, 8)),
    (s1**2, ValueRange(4, 64)),
    (sympy.Min(s0, s1), ValueRange(1, 8)),
    (sympy.Max(s0, s1), ValueRange(2, 1024)),
    (sympy.Symbol("u", integer=True), ValueRange(-INF, INF)),
]


@pytest.mark.parametrize("expr, expected", BOUNDS, ids=[str(b[0]) for b in BOUNDS])
def test_bounds_table(expr, expected):
    got = bounds(expr, R)
    assert got == expected, f"before={expr} ranges={R} expected={expected} got={got}"


DECIDE = [
    (s0 >= 1, True),
    (s0 > 1024, False),
    (s1 <= 8, True),
    (s0 > 5, None),  # counterexample s0 = 5
    (sympy.Eq(s1, 0), False),
    (sympy.Ne(s1, 1), True),
    (sympy.Eq(s0, s1), None),
]


@pytest.mark.parametrize("rel, expected", DECIDE, ids=[str(d[0]) for d in DECIDE])
def test_decide_relation_table(rel, expected):
    got = decide_relation(rel, R)
    assert got == expected, f"before={rel} ranges={R} expected={expected} got={got}"


def test_range_helpers():
    r = ValueRange(2, 10)
    assert r.intersect(ValueRange(5, INF)) == ValueRange(5, 10)
    assert r.contains(2) and not r.contains(11)
    assert ValueRange(3, 2).is_empty and not r.is_empty
