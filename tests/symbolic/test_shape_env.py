"""ShapeEnv: deciding conditions (sympy, ranges, z3, hint + guard), replacements, divisibility."""

import dataclasses
import math

import pytest
import sympy

from symbolic import (
    FloorDiv,
    LocalSource,
    ShapeEnv,
    ShapeEnvConfig,
    ShapeError,
    SizeSource,
    ValueRange,
    user_location,
)


def make_env(*hints, config=None, **ranges):
    """An env with one symbol per hint, read from L['x'].size(i); `ranges` maps 'sN' -> (lo, hi)."""
    env = ShapeEnv(config=config or ShapeEnvConfig())
    symbols = []
    for i, hint in enumerate(hints):
        lo, hi = ranges.get(f"s{i}", (None, None))
        symbols.append(env.create_symbol(hint, SizeSource(LocalSource("x"), i), min=lo, max=hi))
    return env, symbols


s0, s1, s2 = sympy.symbols("s0 s1 s2", integer=True, positive=True)


@dataclasses.dataclass
class Case:
    cond: object
    hints: tuple
    expected: bool
    guards: tuple  # the guards recorded, as text
    decided_by: str  # which stage decided it
    ranges: dict = dataclasses.field(default_factory=dict)


EVALUATE_CASES = [
    Case(2 * s0 > s0, (5,), True, (), "sympy"),
    Case(s0 >= 1, (5,), True, (), "sympy"),
    Case(s0 > 100, (5,), False, ("s0 <= 100",), "guard"),
    Case(s0 > 100, (500,), True, ("s0 > 100",), "guard"),
    Case(s0 + s1 >= 2, (5, 7), True, (), "ranges"),
    Case(s0 <= 1024, (5,), True, (), "ranges", {"s0": (1, 1024)}),
    Case(s0 > 2048, (5,), False, (), "ranges", {"s0": (1, 1024)}),
    Case(FloorDiv(s0, 2) <= s0, (5,), True, (), "z3"),
    Case(sympy.Mod(s0, 4) < 4, (5,), True, (), "ranges"),
    Case(sympy.Eq(s0, s1), (5, 5), True, ("s0 == s1",), "guard"),
    Case(sympy.Eq(s0, s1), (5, 6), False, ("s0 != s1",), "guard"),
    Case(sympy.Max(s0, s1) >= s0, (3, 9), True, (), "z3"),
]


@pytest.mark.parametrize("case", EVALUATE_CASES, ids=lambda c: f"{c.cond}@{c.hints}")
def test_evaluate_table(case):
    env, _ = make_env(*case.hints, **case.ranges)
    result = env.evaluate(case.cond)
    got = tuple(str(g) for g in env.guards)
    detail = f"before={case.cond} hints={case.hints} ranges={case.ranges}"
    assert result == case.expected, f"{detail}: got {result}, expected {case.expected}"
    assert got == case.guards, f"{detail}: guards {got}, expected {case.guards}"
    assert env.decided_by[case.decided_by] == 1, f"{detail}: decided_by {dict(env.decided_by)}"


def test_guard_s0_le_100_tightens_range_and_is_reused():
    env, (x,) = make_env(5)
    assert env.evaluate(x > 100) is False
    assert [str(g) for g in env.guards] == ["s0 <= 100"]
    assert env.ranges[x] == ValueRange(1, 100)
    assert env.evaluate(x <= 200) is True  # decided from the guard, no second guard
    assert len(env.guards) == 1


def test_expect_equality_makes_replacement_used_later():
    env, (a, b) = make_env(8, 8)
    env.expect(sympy.Eq(b, a), "matmul inner dims")
    assert env.replacements == {b: a}
    assert env.simplify(b + a) == 2 * a
    assert env.evaluate(sympy.Eq(b - a, 0)) is True
    assert env.guards == []
    assert [str(x) for x in env.asserts] == ["s1 == s0  (matmul inner dims)"]


def test_evaluate_equality_replaces_newer_symbol_whichever_side():
    env, (a, b) = make_env(4, 4)
    env.evaluate(sympy.Eq(a, b))
    assert env.replacements == {b: a}
    assert env.evaluate(b > 3) is True  # s0 > 3 now: a guard on s0, not s1
    assert str(env.guards[-1]) == "s0 > 3"


def test_replacement_chain_is_kept_flat():
    env, (a, b, c) = make_env(6, 3, 6)
    env.evaluate(sympy.Eq(c, 2 * b))
    env.evaluate(sympy.Eq(a, c))
    assert env.replacements[c] == 2 * b
    assert env.simplify(a + c) == 4 * b


def test_divisibility_fact_simplifies_floordiv_and_mod():
    env, (x,) = make_env(64)
    assert env.evaluate(sympy.Eq(sympy.Mod(x, 8), 0)) is True
    assert env.divisible == {(x, 8)}
    cases = [
        (FloorDiv(x, 8) * 8, x),
        (sympy.Mod(x, 8), 0),
        (sympy.Mod(3 * x, 4), 0),
        (FloorDiv(x, 4) * 4, x),
        (FloorDiv(x, 16) * 16, FloorDiv(x, 16) * 16),  # counterexample: 8 | s0 says nothing of 16
    ]
    for before, expected in cases:
        got = env.simplify(before)
        assert got == expected, f"before={before} expected={expected} got={got} facts=8|s0"


def test_divisibility_proves_conditions_without_guard():
    env, (x,) = make_env(64)
    env.evaluate(sympy.Eq(sympy.Mod(x, 8), 0))
    assert env.evaluate(sympy.Eq(sympy.Mod(x, 4), 0)) is True
    assert env.evaluate(x >= 8) is True  # z3: positive multiple of 8
    assert len(env.guards) == 1


def test_z3_timeout_falls_back_to_guard_never_wrong():
    # a^3 + b^3 != c^3 holds for all positive integers, but z3 cannot prove it in 1 ms.
    env, (a, b, c) = make_env(7, 11, 13, config=ShapeEnvConfig(z3_timeout_ms=1))
    cond = sympy.Ne(a**3 + b**3, c**3)
    hint_answer = bool(cond.xreplace(env.hints))
    assert env.evaluate(cond) == hint_answer
    assert [str(g.expr) for g in env.guards] == [str(cond)]
    assert env.decided_by["guard"] == 1


def test_prove_never_records():
    env, (x,) = make_env(5)
    assert env.prove(x > 100) is None
    assert env.prove(x > 0) is True
    assert env.statically_known_true(x > 100) is False
    assert env.guards == []


def test_expect_raises_shape_error_when_example_fails():
    env, (a, b) = make_env(3, 4)
    with user_location("model.py:12"), pytest.raises(ShapeError, match=r"model.py:12"):
        env.expect(sympy.Eq(a, b), "matmul inner dims")
    assert env.asserts == []


def test_expect_disproved_raises():
    env, (a,) = make_env(3)
    with pytest.raises(ShapeError, match="expected"):
        env.expect(a < 0, "negative size")


def test_guards_carry_user_location():
    env, (x,) = make_env(5)
    with user_location("model.py:57"):
        env.evaluate(x > 100)
    assert env.guards[0].where == "model.py:57"


@pytest.mark.parametrize(
    "hint, kwargs, expected",
    [
        (0, {}, sympy.Integer(0)),
        (1, {}, sympy.Integer(1)),
        (7, {"dynamic": False}, sympy.Integer(7)),
        (0, {"min": 0, "max": 8}, sympy.Integer(0)),  # symbols are positive: 0 stays constant
    ],
)
def test_create_symbol_specialises(hint, kwargs, expected):
    env = ShapeEnv()
    got = env.create_symbol(hint, LocalSource("n"), **kwargs)
    assert got == expected, f"hint={hint} kwargs={kwargs}: got {got}"
    assert env.symbols == {}


def test_create_symbol_keeps_one_dynamic_with_user_range():
    env = ShapeEnv()
    x = env.create_symbol(1, LocalSource("n"), min=1, max=64)
    assert isinstance(x, sympy.Symbol) and x.is_positive and x.is_integer
    assert env.symbols[x].range == ValueRange(1, 64)
    assert env.evaluate(x <= 64) is True and env.guards == []


def test_mark_dynamic_range_respected_and_checked():
    env = ShapeEnv()
    x = env.create_symbol(16, LocalSource("n"), min=8, max=512)
    assert env.evaluate(x >= 8) is True
    assert env.evaluate(x > 512) is False
    assert env.guards == []
    with pytest.raises(ShapeError, match="outside its declared range"):
        env.create_symbol(4, LocalSource("m"), min=8, max=512)


def test_min_below_one_is_clamped():
    env = ShapeEnv()
    x = env.create_symbol(3, LocalSource("n"), min=0)
    assert env.symbols[x].range == ValueRange(1, math.inf)


def test_decided_by_counts_each_stage():
    env, (x, y) = make_env(5, 9)
    env.evaluate(x >= 1)  # sympy
    env.evaluate(x + y >= 2)  # ranges
    env.evaluate(FloorDiv(x, 2) <= x)  # z3
    env.evaluate(x < y)  # guard
    assert dict(env.decided_by) == {"sympy": 1, "ranges": 1, "z3": 1, "guard": 1}


def test_ne_guard_tightens_range_end():
    env, (x,) = make_env(5)
    env.evaluate(sympy.Eq(x, 1))
    assert str(env.guards[0]) == "s0 != 1"
    assert env.ranges[x] == ValueRange(2, math.inf)


def test_evaluate_int_specialises_with_guard():
    env, (x,) = make_env(6)
    assert env.evaluate_int(2 * x) == 12
    assert [str(g) for g in env.guards] == ["2*s0 == 12"]


def test_size_hint_and_bounds():
    env, (x, y) = make_env(6, 7, s1=(2, 10))
    assert env.size_hint(x * y + 1) == 43
    assert env.bounds(2 * y + 1) == ValueRange(5, 21)
    assert env.guards == []


def test_bind_symbols_reads_sources():
    import torch

    env, (x, y) = make_env(4, 5)
    values = env.bind_symbols({"x": torch.empty(9, 3)})
    assert values == {x: 9, y: 3}


def test_symbol_without_hint_raises_symbolic_error():
    from symbolic import SymbolicError

    env, (x,) = make_env(5)
    stranger = sympy.Symbol("u0", integer=True, positive=True)
    with pytest.raises(SymbolicError, match="no hint for \\['u0'\\]"):
        env.evaluate(x > stranger)
