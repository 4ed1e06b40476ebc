"""Property: a real tensor passes an entry's generated check iff z3 says its sizes satisfy the
minimised guard set (and iff they satisfy the original set: minimising changes nothing)."""

import sympy
import torch
import z3
from hypothesis import given, settings
from hypothesis import strategies as st

from guards import GuardSet, TensorMatchGuard, compile_checker, minimize, sizes_strategy
from guards.constraints import holds, range_facts
from symbolic import FloorDiv, LocalSource, ShapeEnv, ShapeGuard, SizeSource, to_z3

TEMPLATES = {
    "le": lambda s, t, c, k: s <= c,
    "ge": lambda s, t, c, k: s >= c,
    "ne": lambda s, t, c, k: sympy.Ne(s, c),
    "mod": lambda s, t, c, k: sympy.Eq(sympy.Mod(s, k), 0),
    "eq": lambda s, t, c, k: sympy.Eq(s, t),
    "lt": lambda s, t, c, k: s < t,
    "sum": lambda s, t, c, k: s + t <= c,
    "floordiv": lambda s, t, c, k: FloorDiv(s, k) >= c // 4,
    "double": lambda s, t, c, k: sympy.Eq(t, 2 * s),
}


@st.composite
def entries(draw):
    """An env over L['x'] (rank 1-3) whose random guards all hold at the example sizes."""
    rank = draw(st.integers(1, 3))
    env = ShapeEnv()
    symbols = []
    for dim in range(rank):
        lo = draw(st.sampled_from([None, 2, 3]))
        hi = draw(st.sampled_from([None, 24, 40]))
        hint = draw(st.integers(lo or 2, hi or 40))
        symbols.append(env.create_symbol(hint, SizeSource(LocalSource("x"), dim), min=lo, max=hi))
    for _ in range(draw(st.integers(1, 4))):
        name = draw(st.sampled_from(sorted(TEMPLATES)))
        s, t = draw(st.sampled_from(symbols)), draw(st.sampled_from(symbols))
        cond = TEMPLATES[name](s, t, draw(st.integers(1, 40)), draw(st.sampled_from([2, 3, 4, 8])))
        if cond in (sympy.true, sympy.false):
            continue
        holds_at_hint = bool(cond.xreplace(env.hints))
        env.guards.append(ShapeGuard(cond if holds_at_hint else sympy.Not(cond)))
    match = TensorMatchGuard(LocalSource("x"), torch.float32, torch.device("cpu"), rank, False)
    return GuardSet([match], env), symbols


def z3_admits(env, kept, values) -> bool:
    solver = z3.Solver()
    solver.add(*(f for _, f in range_facts(env)), *(to_z3(g.expr) for g in kept))
    solver.add(*(to_z3(s) == v for s, v in values.items()))
    return solver.check() == z3.sat


@settings(max_examples=150, deadline=None)
@given(entries(), st.lists(st.integers(0, 48), min_size=3, max_size=3))
def test_check_passes_iff_z3_admits(entry, sizes):
    guard_set, symbols = entry
    minimized = minimize(guard_set)
    checker = compile_checker(guard_set, minimized)
    hint_sizes = [guard_set.env.hints[s] for s in symbols]
    assert checker({"x": torch.empty(hint_sizes)}) == -1, checker.source
    values = dict(zip(symbols, sizes[: len(symbols)], strict=True))
    index = checker({"x": torch.empty(sizes[: len(symbols)])})
    by_z3 = z3_admits(guard_set.env, minimized.kept, values)
    in_ranges = all(guard_set.env.symbols[s].range.contains(v) for s, v in values.items())
    by_original = in_ranges and all(holds(g.expr, values) for g in guard_set.shape_guards)
    detail = f"guards={[str(g) for g in guard_set.shape_guards]} sizes={values}\n{checker.source}"
    assert (index == -1) == by_z3 == by_original, detail
    if index != -1:
        assert "failed:" in checker.explain_failure(
            {"x": torch.empty(sizes[: len(symbols)])}, {}, index
        )


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_sizes_from_strategy_pass_the_check(data):
    guard_set, symbols = data.draw(entries())
    checker = compile_checker(guard_set)
    values = data.draw(sizes_strategy(guard_set.env, guard_set, max_value=48))
    sizes = [values[s] for s in symbols]
    assert checker({"x": torch.empty(sizes)}) == -1, f"{values} rejected:\n{checker.source}"
