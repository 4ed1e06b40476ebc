"""Property: sympy and z3 agree on random size expressions under random assignments."""

import sympy
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from symbolic import FloorDiv, to_z3

SYMBOLS = sympy.symbols("s0 s1 s2", integer=True, positive=True)


def leaves():
    return st.one_of(st.sampled_from(SYMBOLS), st.integers(-6, 9).map(sympy.Integer))


def nonzero_divisors():
    constants = st.sampled_from([-4, -3, -2, 2, 3, 4, 8]).map(sympy.Integer)
    return st.one_of(constants, st.sampled_from(SYMBOLS))


def extend(children):
    pairs = st.tuples(children, children)
    return st.one_of(
        pairs.map(lambda p: p[0] + p[1]),
        pairs.map(lambda p: p[0] - p[1]),
        pairs.map(lambda p: p[0] * p[1]),
        st.tuples(children, nonzero_divisors()).map(lambda p: FloorDiv(*p)),
        st.tuples(children, nonzero_divisors()).map(lambda p: sympy.Mod(*p)),
        pairs.map(lambda p: sympy.Min(*p)),
        pairs.map(lambda p: sympy.Max(*p)),
        st.tuples(children, st.sampled_from([2, 3])).map(lambda p: p[0] ** p[1]),
    )


INT_EXPRS = st.recursive(leaves(), extend, max_leaves=6)
RELATIONS = [sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge]
ATOMS = st.builds(lambda r, a, b: r(a, b), st.sampled_from(RELATIONS), INT_EXPRS, INT_EXPRS)


def extend_bool(children):
    pairs = st.tuples(children, children)
    return st.one_of(
        pairs.map(lambda p: sympy.And(*p)),
        pairs.map(lambda p: sympy.Or(*p)),
        children.map(sympy.Not),
    )


BOOL_EXPRS = st.recursive(ATOMS, extend_bool, max_leaves=3)
ASSIGNMENTS = st.fixed_dictionaries({s: st.integers(1, 40) for s in SYMBOLS})


def evaluate_both(expr, values):
    result = expr.xreplace({s: sympy.Integer(v) for s, v in values.items()})
    assert result.is_number or result in (sympy.true, sympy.false), f"not decided: {result}"
    pairs = [(z3.Int(s.name), z3.IntVal(v)) for s, v in values.items()]
    z3_result = z3.simplify(z3.substitute(to_z3(expr), *pairs))
    if z3.is_bool(z3_result):
        assert z3.is_true(z3_result) or z3.is_false(z3_result), f"z3 left {z3_result}"
        return bool(result), z3.is_true(z3_result)
    return int(result), z3_result.as_long()


@settings(max_examples=400, deadline=None)
@given(INT_EXPRS, ASSIGNMENTS)
def test_integer_expressions_agree(expr, values):
    expected, got = evaluate_both(expr, values)
    assert got == expected, f"before={expr} assignment={values} sympy={expected} z3={got}"


@settings(max_examples=250, deadline=None)
@given(BOOL_EXPRS, ASSIGNMENTS)
def test_conditions_agree(expr, values):
    if expr in (sympy.true, sympy.false):
        return  # sympy decided it already; the atoms were checked by the integer test
    expected, got = evaluate_both(expr, values)
    assert got == expected, f"before={expr} assignment={values} sympy={expected} z3={got}"
