"""Runtime asserts: checked per call, raising ShapeError with the values and the user line."""

import pytest
import sympy
import torch

from guards import compile_assert_checker
from symbolic import LocalSource, ShapeEnv, ShapeError, SizeSource, user_location


def matmul_env():
    env = ShapeEnv()
    k1 = env.create_symbol(3, SizeSource(LocalSource("x"), 1))
    k2 = env.create_symbol(3, SizeSource(LocalSource("w"), 0))
    n = env.create_symbol(5, SizeSource(LocalSource("w"), 1))
    with user_location("model.py:12"):
        env.expect(sympy.Eq(k2, k1), "matmul inner dims")
    env.expect(n >= 2, "need two columns")
    return env


@pytest.mark.parametrize(
    "x_shape, w_shape, message",
    [
        ((2, 3), (3, 5), None),
        ((2, 7), (7, 2), None),
        (
            (2, 3),
            (4, 5),
            "matmul inner dims: expected s1 == s0, got s0 = 3 (L['x'].size(1)), "
            "s1 = 4 (L['w'].size(0)) at model.py:12",
        ),
        ((2, 3), (3, 1), "need two columns: expected s2 >= 2, got s2 = 1 (L['w'].size(1))"),
    ],
)
def test_assert_checker_table(x_shape, w_shape, message):
    checker = compile_assert_checker(matmul_env())
    L = {"x": torch.zeros(x_shape), "w": torch.zeros(w_shape)}
    if message is None:
        assert checker(L) is None
    else:
        with pytest.raises(ShapeError) as info:
            checker(L)
        assert str(info.value) == message


def test_no_asserts_is_a_no_op():
    checker = compile_assert_checker(ShapeEnv())
    assert checker({}) is None and "pass" in checker.source


def test_source_reads_each_symbol_once():
    checker = compile_assert_checker(matmul_env())
    assert checker.source.count("L['w'].size(0)") == 1


def test_the_checker_reads_symbols_in_the_one_symbol_order():
    """s2 before s10 (symbolic.symbol_key); the old name sort read s10 first (issue 19)."""
    env = ShapeEnv()
    syms = [env.create_symbol(h, SizeSource(LocalSource("x"), i))
            for i, h in enumerate(range(2, 14))]
    env.expect(sympy.Eq(syms[10], syms[2] + 8), "offset")
    lines = compile_assert_checker(env).source.splitlines()
    assert lines[1].strip().startswith("s2 =") and lines[2].strip().startswith("s10 =")
    with pytest.raises(ShapeError, match=r"got s2 = 4 .*, s10 = 11"):
        compile_assert_checker(env)({"x": torch.empty([1] * 2 + [4] + [1] * 7 + [11, 1])})
