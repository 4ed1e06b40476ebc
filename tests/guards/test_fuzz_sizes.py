"""z3-chosen sizes: edges of the admitted region, just outside each guard, a Hypothesis strategy."""

import pytest
import sympy
from conftest import build_entry
from hypothesis import given, settings

from guards import GuardError, edge_assignments, outside_assignments, sizes_strategy
from guards.constraints import holds


def admitted(guard_set, values, cap=None):
    env = guard_set.env
    in_range = all(env.symbols[s].range.contains(v) for s, v in values.items())
    under_cap = cap is None or all(v <= cap for v in values.values())
    return in_range and under_cap and all(holds(g.expr, values) for g in guard_set.shape_guards)


EDGE_CASES = [
    # (name, hints, guards, ranges, max_value, values of s0 that must appear, s0 that must not)
    ("upper bound boundary", (16,), lambda a: [a <= 512], {}, 1024, {1, 2, 511, 512}, {513}),
    ("lower bound and sizes 1, 2", (16,), lambda a: [a >= 2], {}, 64, {2, 3, 64}, {1}),
    (
        "divisibility edges",
        (16,),
        lambda a: [sympy.Eq(sympy.Mod(a, 8), 0)],
        {},
        64,
        {8, 16, 64},
        {1, 2, 9},
    ),
    ("declared range ends", (16,), lambda a: [], {0: (4, 40)}, 64, {4, 40}, {3, 41}),
    ("cap raised to the lower bound", (128,), lambda a: [], {0: (100, 200)}, 64, {100}, {99, 101}),
    ("not equal", (5,), lambda a: [sympy.Ne(a, 4), a <= 10], {}, 64, {3, 5, 10}, {4}),
]


@pytest.mark.parametrize("case", EDGE_CASES, ids=lambda c: c[0])
def test_edge_assignments_table(case):
    name, hints, guards, ranges, cap, present, absent = case
    guard_set, (s0,) = build_entry(hints, guards, ranges)
    got = edge_assignments(guard_set.env, guard_set, n=40, seed=0, max_value=cap)
    values = {a[s0] for a in got}
    detail = f"{name}: guards={guard_set.shape_guards} ranges={ranges} cap={cap}"
    detail += f" got={sorted(values)}"
    assert present <= values, detail
    assert not (absent & values), detail
    assert all(admitted(guard_set, a, max(cap, hints[0])) for a in got), detail


def test_equalities_and_relations_between_symbols():
    guard_set, (a, b, c) = build_entry(
        (4, 8, 3), lambda a, b, c: [sympy.Eq(b, 2 * a), c < a, sympy.Eq(sympy.Mod(a, 2), 0)]
    )
    got = edge_assignments(guard_set.env, guard_set, n=20, seed=1, max_value=32)
    assert len(got) == 20
    assert all(x[b] == 2 * x[a] and x[c] < x[a] and x[a] % 2 == 0 for x in got), got
    assert {x[a] for x in got} >= {2, 16}  # smallest even a, largest with b <= 32
    assert any(x[c] == x[a] - 1 for x in got)  # boundary of c < a


def test_edges_are_distinct_deterministic_and_capped_at_n():
    guard_set, _ = build_entry((4, 4), lambda a, b: [a + b <= 40])
    first = edge_assignments(guard_set.env, guard_set, n=25, seed=3, max_value=64)
    again = edge_assignments(guard_set.env, guard_set, n=25, seed=3, max_value=64)
    assert first == again and len(first) == 25
    assert len({tuple(sorted(x.items(), key=str)) for x in first}) == 25


def test_edges_of_small_region_are_exhaustive():
    guard_set, (s0,) = build_entry((4,), lambda a: [a <= 5])
    got = edge_assignments(guard_set.env, guard_set, n=50, seed=0)
    assert sorted(x[s0] for x in got) == [1, 2, 3, 4, 5]


def test_unsatisfiable_under_cap_raises():
    guard_set, _ = build_entry((400,), lambda a: [a >= 300])
    with pytest.raises(GuardError, match="no sizes"):
        edge_assignments(guard_set.env, guard_set, max_value=64)


def test_outside_assignments_violate_exactly_one_guard():
    guard_set, (s0,) = build_entry((16,), lambda a: [a <= 512, sympy.Eq(sympy.Mod(a, 8), 0)])
    cases = outside_assignments(guard_set.env, guard_set)
    got = {c.violated: c.values[s0] for c in cases}
    assert got == {"s0 >= 1": 0, "s0 <= 512": 520, "s0 % 8 == 0": 1}, got
    for case in cases:
        failing = [g for g in guard_set.shape_guards if not holds(g.expr, case.values)]
        in_range = case.values[s0] >= 1
        assert case.exactly_one
        assert len(failing) + (not in_range) == 1, f"{case}: fails {failing}, in range {in_range}"


def test_outside_assignment_when_guard_is_implied():
    guard_set, (s0,) = build_entry((16,), lambda a: [a >= 4, a >= 2])
    cases = {c.violated: c for c in outside_assignments(guard_set.env, guard_set)}
    assert cases["s0 >= 2"].exactly_one is False  # s0 < 2 breaks s0 >= 4 too
    assert cases["s0 >= 2"].values[s0] == 0
    assert cases["s0 >= 4"].exactly_one and cases["s0 >= 4"].values[s0] == 2
    assert "violates s0 >= 2, and others" in str(cases["s0 >= 2"])


GUARDED, GUARDED_SYMBOLS = build_entry(
    (8, 16), lambda a, b: [a >= 2, sympy.Eq(sympy.Mod(b, 4), 0), b <= 3 * a]
)


@settings(max_examples=40, deadline=None)
@given(sizes_strategy(GUARDED.env, GUARDED, max_value=48))
def test_sizes_strategy_draws_admitted_assignments(values):
    assert set(values) == set(GUARDED_SYMBOLS)
    assert admitted(GUARDED, values, 48), values
