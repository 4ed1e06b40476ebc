"""Index simplification with loop extents: exact on every loop value, and the divisions go."""

from __future__ import annotations

import itertools
import random

import pytest
import sympy

from inductor.codegen.index_simplify import simplify_index
from symbolic.functions import FloorDiv

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
x0, x1, x2 = sympy.symbols("x0 x1 x2", integer=True, nonnegative=True)
EXTENTS = {x0: 4 * s0, x1: s1, x2: s1}
FLAT = x2 + s1 * x1 + s1**2 * x0

CASES = [
    (FloorDiv(FLAT, s1), x1 + s1 * x0),
    (sympy.Mod(FLAT, s1), x2),
    (sympy.Mod(FloorDiv(FLAT, s1), s1), x1),
    (FloorDiv(FLAT, 4 * s1**2), FloorDiv(x0, 4)),
    (sympy.Mod(FLAT, 4 * s1**2), s1**2 * sympy.Mod(x0, 4) + x2 + s1 * x1),
    # several terms share the factor (a split sum's row 128*x0 + r0 read through a reshape)
    (FloorDiv(s1 * x0 + 2 * s1 * x1 + x2, 4 * s1), FloorDiv(x0 + 2 * x1, 4)),
    (sympy.Mod(s1 * x0 + 2 * s1 * x1 + x2, 4 * s1), s1 * sympy.Mod(x0 + 2 * x1, 4) + x2),
    (FloorDiv(x2 + 3, s1), None),                        # may reach s1: kept
    (FloorDiv(x2 - 1, s1), None),                        # may be negative: kept
    (32 * s1 * FloorDiv(x1 + 32 * s1 * FloorDiv(x0, s1) + 32 * sympy.Mod(x0, s1), 32 * s1),
     None),
    # a merged dim re-linearised: b*(x // b) + x % b == x for any integers, no ranges needed
    (32 * s1 * FloorDiv(x0, s1) + 32 * sympy.Mod(x0, s1) + x1, 32 * x0 + x1),
    (s1 * FloorDiv(x0, s1) + sympy.Mod(x0, s1) - x2, x0 - x2),
    (3 * s1 * FloorDiv(x0, s1) + sympy.Mod(x0, s1), None),   # coefficients differ: kept
]


def _evaluate(expr, env):
    return int(expr.replace(lambda e: isinstance(e, FloorDiv),
                            lambda e: sympy.floor(e.args[0] / e.args[1])).xreplace(env))


@pytest.mark.parametrize("expr, expected", CASES, ids=[str(c[0]) for c in CASES])
def test_simplified_index_equals_the_original_on_every_loop_value(expr, expected):
    extents = {**EXTENTS, x1: 32 * s0} if expr.has(FloorDiv(x0, s1)) else EXTENTS
    out = simplify_index(expr, extents)
    if expected is not None:
        assert sympy.expand(out - expected) == 0, out
    rng = random.Random(0)
    for n0, n1 in itertools.product((1, 2, 3, 5), (1, 2, 7)):
        sizes = {s0: n0, s1: n1}
        ranges = {v: range(int(e.xreplace(sizes))) for v, e in extents.items()}
        for _ in range(40):
            env = {**sizes, **{v: sympy.Integer(rng.choice(r)) for v, r in ranges.items() if r}}
            if len(env) < len(sizes) + len(ranges):
                continue
            assert _evaluate(out, env) == _evaluate(expr, env), (expr, out, env)


def test_the_unravel_of_a_ravel_loses_all_its_divisions():
    out = simplify_index(FloorDiv(FLAT, s1) + sympy.Mod(FLAT, s1), EXTENTS)
    assert not out.has(FloorDiv, sympy.Mod)


def test_recombine_folds_a_dim_merged_from_three():
    """A loop var merged from (a, 4, s1) re-linearised: its nested division
    ((x0 // s1) % 4, beside x0 // (4*s1)) folds back to x0. Left as it was, the Triton writer
    saw a read at another index than the write the scheduler fused it with, and T5's graphs
    fell back to the reference implementations on the GPU."""
    from inductor.codegen.index_simplify import recombine

    index = 4 * s1 * FloorDiv(x0, 4 * s1) + s1 * sympy.Mod(FloorDiv(x0, s1), 4) + sympy.Mod(x0, s1)
    assert recombine(index) == x0
    assert recombine(index + 7 * x1) == x0 + 7 * x1


def test_recombine_removes_every_division_of_a_re_linearised_index():
    from inductor.codegen.index_simplify import recombine

    out = recombine(32 * s1 * FloorDiv(x0, s1) + 32 * sympy.Mod(x0, s1) + x1)
    assert not out.has(FloorDiv, sympy.Mod) and out == 32 * x0 + x1
    kept = recombine(3 * s1 * FloorDiv(x0, s1) + sympy.Mod(x0, s1))
    assert kept.has(FloorDiv) and kept.has(sympy.Mod)


def test_index_simplify_does_not_assume_runtime_indices_are_positive():
    """The old index_simplify proved `0 <= r` by shifting every symbol to `1 + t`, so a runtime
    index `i` (only known >= 0) counted as >= 1: FloorDiv(x0 + i - 1, s0 + i) became 0, but it
    is -1 at x0 = i = 0. The Analyzer shifts each symbol to its own lower bound (issue 19)."""
    i = sympy.Symbol("ind3", integer=True, nonnegative=True)
    expr = FloorDiv(x0 + i - 1, s0 + i)
    out = simplify_index(expr, {x0: s0})
    for v, a, iv in itertools.product(range(1, 5), range(4), range(3)):
        if a < v:
            values = {s0: v, x0: a, i: iv}
            assert _evaluate(out, values) == (a + iv - 1) // (v + iv), (out, values)
