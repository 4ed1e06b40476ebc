"""The generated check function: pass/fail table, order, single reads, explain_failure."""

import dataclasses

import pytest
import sympy
import torch

from guards import (
    DictKeysGuard,
    GuardError,
    GuardSet,
    IdentityGuard,
    LengthGuard,
    TensorMatchGuard,
    TypeGuard,
    ValueGuard,
    compile_checker,
)
from symbolic import (
    AttrSource,
    ConstantSource,
    ItemSource,
    LocalSource,
    ShapeEnv,
    SizeSource,
    user_location,
)


class Model:
    training = True


MODEL = Model()


def untrained():
    model = Model()
    model.training = False
    return model


def full_entry():
    """x: f32[s0, 16] with s0 <= 1024 (model.py:57), s0 >= 2 (implied by the next) and
    s0 % 8 == 0; idx: i64[s1] with s1 == 2*s0; plus type, value, identity, length, keys guards."""
    env = ShapeEnv()
    s0 = env.create_symbol(8, SizeSource(LocalSource("x"), 0))
    s1 = env.create_symbol(16, SizeSource(LocalSource("idx"), 0))
    with user_location("model.py:57"):
        env.evaluate(s0 <= 1024)
    env.evaluate(s0 >= 2)
    env.evaluate(sympy.Eq(sympy.Mod(s0, 8), 0))
    env.evaluate(sympy.Eq(s1, 2 * s0))
    cpu = torch.device("cpu")
    self_ = LocalSource("self")
    others = [
        ValueGuard(AttrSource(self_, "training"), True),
        TensorMatchGuard(LocalSource("x"), torch.float32, cpu, 2, False, ((1, 16),)),
        TensorMatchGuard(LocalSource("idx"), torch.int64, cpu, 1, False),
        TypeGuard(self_, Model),
        ValueGuard(LocalSource("n"), 3),
        IdentityGuard(GlobalFn := LocalSource("fn"), id(len), "len"),
        LengthGuard(LocalSource("items"), 2),
        DictKeysGuard(LocalSource("opts"), ("a", "b")),
        ValueGuard(ItemSource(LocalSource("opts"), "a"), None),
    ]
    del GlobalFn
    return GuardSet(others, env)


def good_locals(s0=8):
    return {
        "x": torch.zeros(s0, 16),
        "idx": torch.zeros(2 * s0, dtype=torch.int64),
        "self": MODEL,
        "n": 3,
        "fn": len,
        "items": [1, 2],
        "opts": {"a": None, "b": 1},
    }


@dataclasses.dataclass
class Case:
    name: str
    change: dict
    failing: str | None  # text of the first failing guard, None when all pass


CASES = [
    Case("all pass", {}, None),
    Case(
        "all pass at the largest size",
        {"x": torch.zeros(1024, 16), "idx": torch.zeros(2048, dtype=torch.int64)},
        None,
    ),
    Case("dtype", {"x": torch.zeros(8, 16, dtype=torch.float16)}, "L['x'].dtype == torch.float32"),
    Case("rank", {"x": torch.zeros(8, 16, 1)}, "L['x'].dim() == 2"),
    # idx's every size is a symbol: its rank is checked by unpacking its shape, not by dim()
    Case("rank of all-symbol sizes", {"idx": torch.zeros(16, 1, dtype=torch.int64)},
         "L['idx'].dim() == 1"),
    Case("rank 0 of all-symbol sizes", {"idx": torch.tensor(16)}, "L['idx'].dim() == 1"),
    Case("static size", {"x": torch.zeros(8, 15)}, "L['x'].size(1) == 16"),
    Case(
        "requires_grad",
        {"x": torch.zeros(8, 16, requires_grad=True)},
        "L['x'].requires_grad == False",
    ),
    Case("not a tensor", {"x": [[0.0] * 16] * 8}, "type(L['x']) is torch.Tensor"),
    Case(
        "range upper end",
        {"x": torch.zeros(1032, 16), "idx": torch.zeros(2064, dtype=torch.int64)},
        "1 <= s0 <= 1024",
    ),
    Case(
        "size zero",
        {"x": torch.zeros(0, 16), "idx": torch.zeros(0, dtype=torch.int64)},
        "1 <= s0 <= 1024",
    ),
    Case(
        "divisibility",
        {"x": torch.zeros(12, 16), "idx": torch.zeros(24, dtype=torch.int64)},
        "s0 % 8 == 0",
    ),
    Case("equality", {"idx": torch.zeros(15, dtype=torch.int64)}, "s1 == 2*s0"),
    Case("python value", {"n": 4}, "L['n'] == 3"),
    Case("python value type", {"n": 3.0}, "L['n'] == 3"),
    Case("subclass", {"self": type("M", (Model,), {})()}, "type(L['self']) is Model"),
    Case("bool value", {"self": untrained()}, "L['self'].training == True"),
    Case("identity", {"fn": max}, "L['fn'] is len"),
    Case("length", {"items": [1]}, "len(L['items']) == 2"),
    Case("dict keys", {"opts": {"b": 1, "a": None}}, "L['opts'].keys() == ['a', 'b']"),
    Case("None value", {"opts": {"a": 0, "b": 1}}, "L['opts']['a'] == None"),
    Case("missing local", {"n": KeyError}, "L['n'] == 3"),
]


@pytest.fixture(scope="module")
def checker():
    return compile_checker(full_entry())


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_checker_table(checker, case):
    L = good_locals()
    L.update({k: v for k, v in case.change.items() if v is not KeyError})
    for key in [k for k, v in case.change.items() if v is KeyError]:
        del L[key]
    index = checker.check(L, {})
    got = None if index == -1 else checker.items[index].text
    detail = f"{case.name}: change={case.change} expected={case.failing} got={got}"
    assert got == case.failing, detail


def test_order_puts_non_shape_guards_before_shapes(checker):
    texts = [item.text for item in checker.items]
    first_shape = texts.index("1 <= s0 <= 1024")
    assert texts[:2] == ["L['fn'] is len", "type(L['self']) is Model"]  # `is` checks first
    assert all(not t.startswith("s") and "<=" not in t for t in texts[:first_shape])
    assert texts[first_shape:] == ["1 <= s0 <= 1024", "s1 >= 1", "s0 % 8 == 0", "s1 == 2*s0"]
    assert texts.index("L['n'] == 3") > texts.index("len(L['items']) == 2")


def test_each_symbol_read_once_from_its_source(checker):
    source = checker.source
    assert source.count("s0 = ") == 1 and source.count("s1, = ") == 1
    # x: f32[s0, 16] reads its one symbol; idx: i64[s1] unpacks its shape (that checks its rank)
    assert "s0 = v2.shape[0]" in source and "s1, = v3.shape" in source, source
    assert "v2.dim() == 2" in source and "v3.dim()" not in source, source
    assert source.count("L['x']") == 1, source  # bound once to a local, then reused
    assert "def check_guards(L, G=None):" in source


@pytest.mark.parametrize(
    "change, expected",
    [
        (
            {"x": torch.zeros(1032, 16), "idx": torch.zeros(2064, dtype=torch.int64)},
            "1 <= s0 <= 1024 failed: s0 = 1032 (L['x'].size(0), model.py:57)",
        ),
        (
            {"idx": torch.zeros(15, dtype=torch.int64)},
            "s1 == 2*s0 failed: s0 = 8 (L['x'].size(0)), s1 = 15 (L['idx'].size(0))",
        ),
        (
            {"x": torch.zeros(8, 16, dtype=torch.float16)},
            "L['x'].dtype == torch.float32 failed: L['x'].dtype = torch.float16",
        ),
        ({"n": 4}, "L['n'] == 3 failed: L['n'] = 4"),
    ],
)
def test_explain_failure(checker, change, expected):
    L = dict(good_locals(), **change)
    index = checker.check(L, {})
    assert index >= 0
    assert checker.explain_failure(L, {}, index) == expected


def test_reason_carries_entry_index(checker):
    L = dict(good_locals(), n=5)
    reason = checker.reason(L, {}, checker.check(L, {}), entry_index=2)
    assert str(reason) == "entry 2: L['n'] == 3 failed: L['n'] = 5"
    assert reason.to_json()["values"] == [{"name": "L['n']", "value": 5, "source": "L['n']"}]


def test_minimized_guard_not_checked(entry):
    guard_set, _ = entry((16,), lambda a: [a <= 100, a <= 50])
    checker = compile_checker(guard_set)
    assert [i.text for i in checker.items][-1] == "1 <= s0 <= 50"
    assert "100" not in checker.source
    assert checker(dict(x=torch.zeros(60))) == len(checker.items) - 1
    assert checker(dict(x=torch.zeros(50))) == -1


def test_constant_source_cannot_be_checked():
    env = ShapeEnv()
    env.create_symbol(4, ConstantSource("made up"))
    with pytest.raises(GuardError, match="no run-time value"):
        compile_checker(GuardSet([], env))


def test_checker_without_env_checks_other_guards_only():
    checker = compile_checker(GuardSet([LengthGuard(LocalSource("t"), 3)]))
    assert checker({"t": (1, 2, 3)}) == -1 and checker({"t": ()}) == 0


def test_guarded_call_misses_exactly_when_the_check_fails_on_every_table_case(checker):
    from guards import MISS

    probe = checker.guarded(lambda L, G, *inputs: len(inputs))
    for case in CASES:
        L = good_locals()
        L.update({k: v for k, v in case.change.items() if v is not KeyError})
        for key in [k for k, v in case.change.items() if v is KeyError]:
            del L[key]
        passes = checker.check(L, {}) == -1
        result = probe(L, {})
        assert (result is MISS) == (not passes), f"{case.name}: {result}"
