"""The Analyzer facade (issue 19): every size question in one object, and the cases where it
decides differently from the helpers it replaced (each a bug one of them had)."""

from __future__ import annotations

import itertools

import sympy

from symbolic import Analyzer, FloorDiv, LocalSource, ShapeEnv, SizeSource, symbol_key
from symbolic.ranges import ValueRange

x0, x1 = sympy.symbols("x0 x1", integer=True, nonnegative=True)


def _env(*hints):
    env = ShapeEnv()
    return env, [env.create_symbol(h, SizeSource(LocalSource("x"), i)) for i, h in enumerate(hints)]


def test_one_symbol_order_is_by_index_not_by_name():
    env, syms = _env(*range(2, 14))  # s0 .. s11
    shuffled = sorted(syms, key=str)  # the old name sorts: s10, s11 before s2
    assert [s.name for s in shuffled][:4] == ["s0", "s1", "s10", "s11"]
    assert sorted(shuffled, key=symbol_key) == syms
    assert sorted([x1, syms[2], x0], key=symbol_key) == [syms[2], x0, x1]


def test_equal_is_a_proof_and_guards_only_when_asked():
    env, (s0, s1) = _env(6, 6)
    an = Analyzer(env)
    assert an.equal(s0 * s1, s1 * s0) and an.equal(3, 3) and not an.equal(3, 4)
    assert not an.equal(s0, s1)
    assert env.guards == []
    assert an.equal(s0, s1, guard=True)
    assert len(env.guards) == 1
    assert an.equal(s0, s1)  # proved from the recorded fact now


def test_equal_without_env_uses_value_ranges():
    s = sympy.Symbol("s9", integer=True, positive=True)
    an = Analyzer(ranges={s: ValueRange(4, 4)})
    assert an.equal(s, 4)
    assert not Analyzer().equal(s, 4)


def test_prove_records_nothing_evaluate_records_only_when_it_must():
    env, (s0,) = _env(5)
    an = Analyzer(env)
    assert an.prove(s0 > 100) is None
    assert an.prove(2 * s0 > s0) is True
    assert an.evaluate(2 * s0 > s0) is True
    assert env.guards == []
    assert an.evaluate(s0 > 100) is False
    assert [str(g) for g in env.guards] == ["s0 <= 100"]


def test_loop_extents_are_scoped_facts():
    env, (s0,) = _env(7)
    an = Analyzer(env)
    flip = s0 - 1 - x0  # torch.flip's index: in [0, s0 - 1] inside the loop
    assert not an.nonnegative(flip)
    with an.loop_extents({x0: s0}):
        assert an.nonnegative(flip)
        assert an.prove(x0 < s0) is True and an.prove(x0 >= s0) is False
        assert an.native_division(flip, 2)
        assert not an.native_division(flip - 1, 2)  # -1 at x0 = s0 - 1
    assert not an.nonnegative(flip)  # the fact left with its scope
    assert an.prove(x0 < s0) is None


def test_nonnegative_is_sound_on_a_grid():
    """Whatever `nonnegative` proves holds at every point of a grid of loop and size values."""
    s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
    an = Analyzer()
    exprs = [s0 - 1 - x0, s0 * s1 - 1 - x0 - s0 * x1, x0 + s1 - 1, s1 - x1, x0 - 1,
             s0 - x0 - x1, 2 * s1 - 2 - x1, s0 * s0 - s0, s0 - 2]
    proved = []
    with an.loop_extents({x0: s0, x1: s1}):
        for e in exprs:
            if an.nonnegative(e):
                proved.append(e)
    assert s0 - 1 - x0 in proved and s0 * s1 - 1 - x0 - s0 * x1 in proved
    assert s0 - 2 not in proved and x0 - 1 not in proved and s0 - x0 - x1 not in proved
    for e in proved:
        for v0, v1 in itertools.product(range(1, 6), repeat=2):
            for a, b in itertools.product(range(v0), range(v1)):
                assert e.xreplace({s0: v0, s1: v1, x0: a, x1: b}) >= 0, (e, v0, v1, a, b)


def test_fits_int32_uses_the_loop_extents():
    s = sympy.Symbol("s0", integer=True, positive=True)
    an = Analyzer(ranges={s: ValueRange(1, 8)})
    assert not an.fits_int32(x0 * 3 + 5)  # x0 unbounded outside its loop
    with an.loop_extents({x0: s}):  # x0 in [0, 7]
        assert an.fits_int32(x0 * 3 + 5)
        assert an.fits_int32(2**31 - 8 + x0)
        assert not an.fits_int32(2**31 - 7 + x0)
        assert not an.fits_int32(-(2**31) - 1 + x0)
