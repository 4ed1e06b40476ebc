"""minimize: z3 drops every shape guard the others and the declared ranges imply."""

import dataclasses

import pytest
import sympy
from conftest import build_entry

from guards import GuardError, GuardSet, minimize
from symbolic import FloorDiv, LocalSource, ShapeEnv, SizeSource


@dataclasses.dataclass
class Case:
    name: str
    hints: tuple
    guards: object  # symbols -> conditions
    kept: list  # minimized.lines
    removed: dict  # removed guard text -> implied_by
    ranges: dict = dataclasses.field(default_factory=dict)


CASES = [
    Case(
        "tighter bound wins",
        (16,),
        lambda a: [a <= 100, a <= 50],
        ["1 <= s0 <= 50"],
        {"s0 <= 100": ("s0 <= 50",)},
    ),
    Case(
        "bounds merge into a range", (16,), lambda a: [a >= 2, a <= 1024], ["2 <= s0 <= 1024"], {}
    ),
    Case(
        "range end implies guard",
        (16,),
        lambda a: [a <= 1024],
        ["1 <= s0 <= 512"],
        {"s0 <= 1024": ("s0 <= 512",)},
        {0: (1, 512)},
    ),
    Case(
        "divisibility by 8 implies by 4",
        (16,),
        lambda a: [sympy.Eq(sympy.Mod(a, 8), 0), sympy.Eq(sympy.Mod(a, 4), 0)],
        ["s0 >= 1", "s0 % 8 == 0"],
        {"s0 % 4 == 0": ("s0 % 8 == 0",)},
    ),
    Case(
        "equality implies bound",
        (4, 8),
        lambda a, b: [sympy.Eq(b, 2 * a), b >= 2],
        ["s0 >= 1", "s1 >= 1", "s1 == 2*s0"],
        {"s1 >= 2": ("s1 == 2*s0", "s0 >= 1")},
    ),
    Case(
        "ne implied by strict bound",
        (8,),
        lambda a: [a > 4, sympy.Ne(a, 3)],
        ["s0 >= 5"],
        {"s0 != 3": ("s0 > 4",)},
    ),
    Case(
        "two strict relations give the equality",
        (4, 5),
        lambda a, b: [a < b, b < a + 2, sympy.Eq(b, a + 1)],
        ["s0 >= 1", "s1 >= 1", "s1 == s0 + 1"],
        {"s0 < s1": ("s1 == s0 + 1",), "s1 < s0 + 2": ("s1 == s0 + 1",)},
    ),
    Case(
        "floordiv bound",
        (64,),
        lambda a: [FloorDiv(a, 8) >= 2, a >= 16],
        ["s0 >= 16"],
        {"s0 // 8 >= 2": ("s0 >= 16",)},
    ),
    # counterexample: independent guards, nothing may go
    Case(
        "independent guards stay",
        (4, 5),
        lambda a, b: [a <= 100, b <= 100, sympy.Ne(a, b)],
        ["1 <= s0 <= 100", "1 <= s1 <= 100", "s0 != s1"],
        {},
    ),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_minimize_table(case):
    guard_set, _ = build_entry(case.hints, case.guards, case.ranges)
    result = minimize(guard_set)
    removed = {str(r).split("  (")[0]: r.implied_by for r in result.removed}
    detail = (
        f"before={[str(g) for g in guard_set.shape_guards]} ranges={case.ranges}\n"
        f"expected kept={case.kept} removed={case.removed}\ngot kept={result.lines} "
        f"removed={removed}"
    )
    assert result.lines == case.kept, detail
    assert {k: set(v) for k, v in removed.items()} == {
        k: set(v) for k, v in case.removed.items()
    }, detail


def test_kept_set_is_equivalent_to_original():
    guard_set, (a, b) = build_entry(
        (8, 16),
        lambda a, b: [
            a <= 100,
            a <= 50,
            sympy.Eq(b, 2 * a),
            b <= 200,
            sympy.Eq(sympy.Mod(a, 4), 0),
        ],
    )
    result = minimize(guard_set)
    for x in range(1, 60):
        values = {a: x, b: 2 * x}
        original = all(bool(g.expr.xreplace(values)) for g in guard_set.shape_guards)
        kept = all(bool(g.expr.xreplace(values)) for g in result.kept)
        assert original == kept, f"s0={x}: original {original}, kept {kept}"


@pytest.mark.parametrize(
    "guards, ranges",
    [
        (lambda a: [a < 3, a > 5], {}),
        (lambda a: [a > 600], {0: (1, 512)}),
        (lambda a: [sympy.Eq(sympy.Mod(a, 2), 0), sympy.Eq(a, 7)], {}),
    ],
    ids=["disjoint bounds", "outside declared range", "odd multiple of two"],
)
def test_unsatisfiable_guards_raise(guards, ranges):
    guard_set, _ = build_entry((4,), guards, ranges)
    with pytest.raises(GuardError, match="unsatisfiable"):
        minimize(guard_set)


def test_recorded_guards_minimize_through_guard_set():
    env = ShapeEnv()
    x = env.create_symbol(16, SizeSource(LocalSource("x"), 0))
    env.evaluate(x <= 100)
    env.evaluate(x <= 50)
    result = minimize(GuardSet([], env))
    assert [str(g) for g in result.kept] == ["s0 <= 50"]
    assert str(result).splitlines() == [
        "1 <= s0 <= 50",
        "removed:",
        "  s0 <= 100  (implied by s0 <= 50)",
    ]


def test_a_guard_set_without_shapes_minimizes_over_an_empty_env():
    guard_set = GuardSet([])
    assert isinstance(guard_set.env, ShapeEnv) and not guard_set.env.symbols
    result = minimize(guard_set)
    assert not result.kept and not result.removed


def test_guard_z3_cannot_read_is_kept_unchanged():
    weird = sympy.Function("opaque")
    guard_set, _ = build_entry((4,), lambda a: [sympy.Eq(weird(a), 1), a <= 8, a <= 16])
    result = minimize(guard_set)
    assert [str(g) for g in result.kept] == ["opaque(s0) == 1", "s0 <= 8"]
    assert [str(r.guard) for r in result.removed] == ["s0 <= 16"]
