"""sympy <-> z3: each construct on a table of assignments (the property test covers the rest)."""

import pytest
import sympy
import z3

from symbolic import FloorDiv, SymbolicError, from_z3, to_z3

s0, s1 = sympy.symbols("s0 s1", integer=True)


def z3_value(expr, values):
    formula = to_z3(expr)
    pairs = [(z3.Int(s.name), z3.IntVal(v)) for s, v in values.items()]
    result = z3.simplify(z3.substitute(formula, *pairs))
    if z3.is_true(result) or z3.is_false(result):
        return z3.is_true(result)
    return result.as_long()


def sympy_value(expr, values):
    result = expr.xreplace({s: sympy.Integer(v) for s, v in values.items()})
    return bool(result) if result in (sympy.true, sympy.false) else int(result)


CASES = [
    FloorDiv(s0, 3),
    FloorDiv(s0, -3),
    FloorDiv(s0, s1),
    sympy.Mod(s0, 3),
    sympy.Mod(s0, -3),
    sympy.Mod(s0, s1),
    sympy.Min(s0, s1),
    sympy.Max(s0, s1),
    s0**3 - s1,
    sympy.Eq(s0, s1),
    sympy.Ne(s0 * 2, s1),
    sympy.And(s0 < 3, s1 >= 2),
    sympy.Or(s0 > 3, sympy.Not(s1 <= 2)),
]
ASSIGNMENTS = [{s0: 7, s1: 2}, {s0: -7, s1: 2}, {s0: 7, s1: -2}, {s0: -7, s1: -3}, {s0: 0, s1: 5}]


@pytest.mark.parametrize("expr", CASES, ids=str)
def test_to_z3_matches_python_semantics(expr):
    for values in ASSIGNMENTS:
        expected, got = sympy_value(expr, values), z3_value(expr, values)
        assert got == expected, f"before={expr} at {values}: sympy {expected}, z3 {got}"


def test_from_z3_round_trip():
    names = {"s0": s0, "s1": s1}
    for expr in (s0 + 2 * s1, sympy.Le(s0, s1 + 3), FloorDiv(s0, 4), sympy.Mod(s0, 4)):
        back = from_z3(to_z3(expr), names)
        for values in ASSIGNMENTS[:2]:
            assert sympy_value(back, values) == sympy_value(expr, values), f"{expr} -> {back}"


def test_unsupported_expression_raises_symbolic_error():
    with pytest.raises(SymbolicError, match="unsupported"):
        to_z3(sympy.sin(s0))
    with pytest.raises(SymbolicError, match="powers"):
        to_z3(sympy.Pow(s0, sympy.Rational(1, 2)))
