"""Overlap between entries and sizes no entry admits, with symbols matched by source."""

from dataclasses import replace

import pytest
import sympy
import torch
from conftest import build_entry

from guards import GuardSet, overlap_example, overlaps, tensor_conflict, uncovered_examples
from symbolic import LocalSource, ShapeEnv, ShapeGuard, SizeSource

X0 = "L['x'].size(0)"
X1 = "L['x'].size(1)"


@pytest.mark.parametrize(
    "a, b, expected",
    [
        (((8,), lambda s: [s >= 2, s <= 64]), ((64,), lambda s: [s >= 32]), True),
        (((8,), lambda s: [s <= 16]), ((64,), lambda s: [s >= 17]), False),
        (((8,), lambda s: [sympy.Eq(sympy.Mod(s, 8), 0)]), ((3,), lambda s: [s < 8]), False),
        (
            ((8, 16), lambda a, b: [sympy.Eq(b, 2 * a)]),
            ((8, 8), lambda a, b: [sympy.Eq(a, b)]),
            False,
        ),
    ],
    ids=["ranges meet", "ranges disjoint", "multiple of 8 vs below 8", "b == 2a vs a == b"],
)
def test_overlaps_table(a, b, expected):
    ea, _ = build_entry(*a)
    eb, _ = build_entry(*b)
    assert overlaps(ea, eb) is expected, f"a={ea.shape_guards} b={eb.shape_guards}"
    example = overlap_example(ea, eb)
    assert (example is not None) is expected
    if example is not None:
        assert 32 <= example[X0] <= 64


def test_symbols_matched_by_source_not_name():
    # a: s0 is x.size(0) and s0 <= 4.  b: s0 is x.size(1) and s0 >= 5 (x.size(0) is its s1).
    # By name the two would be disjoint; by source they overlap.
    a, _ = build_entry((2, 9), lambda s0, s1: [s0 <= 4])
    env = ShapeEnv()
    t0 = env.create_symbol(9, SizeSource(LocalSource("x"), 1))
    env.create_symbol(3, SizeSource(LocalSource("x"), 0))
    b = GuardSet([], env)
    b.add(ShapeGuard(t0 >= 5))
    assert overlaps(a, b)
    example = overlap_example(a, b)
    assert example[X0] <= 4 and example[X1] >= 5, example


def test_static_sizes_take_part():
    dynamic, _ = build_entry((8,), lambda s: [s >= 2])
    static, _ = build_entry((), (), static=((0, 1),))
    assert not overlaps(dynamic, static)
    assert uncovered_examples([dynamic, static], n=1, min_size=0) == [{X0: 0}]


def test_uncovered_examples_size_one():
    entry, _ = build_entry((8,), lambda s: [s >= 2])
    assert uncovered_examples([entry], n=1, min_size=1) == [{X0: 1}]
    assert uncovered_examples([entry], n=3, min_size=0) == [{X0: 0}, {X0: 1}]


def test_uncovered_examples_none_when_entries_cover_everything():
    small, _ = build_entry((8,), lambda s: [s <= 16])
    large, _ = build_entry((64,), lambda s: [s >= 17])
    assert uncovered_examples([small, large], n=3, min_size=1) == []
    assert uncovered_examples([small], n=2, min_size=1) == [{X0: 17}, {X0: 18}]


def test_different_dtype_or_rank_never_overlaps():
    a, _ = build_entry((8,), lambda s: [s >= 2])
    b, _ = build_entry((8,), lambda s: [s >= 2])
    assert overlaps(a, b) and tensor_conflict(a, b) is None
    c, _ = build_entry((8, 4), lambda s, t: [s >= 2])
    assert tensor_conflict(a, c) == "L['x'].ndim"
    assert not overlaps(a, c) and overlap_example(a, c) is None
    half = GuardSet([replace(b.other_guards[0], dtype=torch.float16)], b.env)
    assert tensor_conflict(a, half) == "L['x'].dtype" and not overlaps(a, half)


def test_entries_needing_different_python_values_never_overlap():
    from guards import ValueGuard

    a = GuardSet([ValueGuard(LocalSource("flag"), True)])
    b = GuardSet([ValueGuard(LocalSource("flag"), False)])
    c = GuardSet([ValueGuard(LocalSource("flag"), 1)])  # 1 == True, but not the same type
    assert not overlaps(a, b) and not overlaps(a, c) and overlaps(a, a)
    assert tensor_conflict(a, b) == "L['flag']"
