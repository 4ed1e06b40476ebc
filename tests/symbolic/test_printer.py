"""python_str: size expressions print as Python that reads well and evaluates like sympy."""

import pytest
import sympy

from symbolic import FloorDiv, python_str

s0, s1, s2 = sympy.symbols("s0 s1 s2", integer=True, positive=True)

CASES = [
    (sympy.Eq(sympy.Mod(s0, 8), 0), "s0 % 8 == 0"),
    (sympy.Le(FloorDiv(s0, 2), s1), "s0 // 2 <= s1"),
    (sympy.Eq(s1, 2 * s0), "s1 == 2*s0"),
    (sympy.Ge(100, s0), "s0 <= 100"),
    (sympy.Lt(s0, 100), "s0 < 100"),
    (sympy.Ne(s0, 1), "s0 != 1"),
    (s0 - s1, "s0 - s1"),
    (s0 - 2 * s1 + 3, "s0 - 2*s1 + 3"),
    (2 * FloorDiv(s0, 4), "2*(s0 // 4)"),
    (-FloorDiv(s0, 4), "-(s0 // 4)"),
    (FloorDiv(s0 + 1, s1), "(s0 + 1) // s1"),
    (sympy.Mod(s0 * s1, 3), "s0*s1 % 3"),
    (FloorDiv(s0, s1 * s2), "s0 // (s1*s2)"),
    (s0**2, "s0**2"),
    ((s0 + 1) ** 2, "(s0 + 1)**2"),
    (sympy.Min(s0, s1), "min(s0, s1)"),
    (sympy.Max(s0, s1 + 1), "max(s0, s1 + 1)"),
    (sympy.And(s0 < 5, s1 > 2), "s0 < 5 and s1 > 2"),
    (sympy.Or(s0 < 5, sympy.Eq(s1, 2)), "s0 < 5 or s1 == 2"),
    (sympy.Not(sympy.And(s0 < 5, s1 > 2)), "not (s0 < 5 and s1 > 2)"),
    (sympy.true, "True"),
]


@pytest.mark.parametrize("expr, expected", CASES, ids=[c[1] for c in CASES])
def test_python_str_table(expr, expected):
    got = python_str(expr)
    assert got == expected, f"before={sympy.srepr(expr)} expected={expected!r} got={got!r}"


@pytest.mark.parametrize("expr, _", CASES, ids=[c[1] for c in CASES])
def test_python_str_evaluates_like_sympy(expr, _):
    for values in ({s0: 7, s1: 3, s2: 2}, {s0: 1, s1: 5, s2: 4}, {s0: 16, s1: 1, s2: 3}):
        expected = expr.xreplace(values)
        expected = bool(expected) if expected in (sympy.true, sympy.false) else int(expected)
        local = {s.name: v for s, v in values.items()}
        got = eval(python_str(expr), {}, local)  # noqa: S307
        assert got == expected, f"{python_str(expr)} at {local}: python {got}, sympy {expected}"


def test_names_map_symbols():
    assert python_str(s0 + s1, {s0: "a", s1: "L['x'].size(1)"}) == "a + L['x'].size(1)"
