"""Sizes that are equal only through a recorded fact (a guard or assert from broadcasting two
different expressions) are equal everywhere after it: autograd's cotangent check, views, the
scheduler and the wrapper all ask `Analyzer.equal` (issue 18, class 6; issue 19)."""

from __future__ import annotations

import sympy
import torch

from symbolic import Analyzer, FloorDiv, LocalSource, ShapeEnv, SizeSource
from tests.symc.eager_oracle import assert_matches_eager


def _env_with(*hints):
    env = ShapeEnv()
    syms = [env.create_symbol(h, SizeSource(LocalSource(f"x{i}"), 0)) for i, h in enumerate(hints)]
    return env, syms


def test_sizes_equal_proves_from_a_recorded_fact_without_a_new_guard():
    env, (s0, s1) = _env_with(8, 2)
    half = FloorDiv(s0 + 1, 2)
    assert not Analyzer(env).equal(s0 - half, half)  # unknown: not equal, nothing recorded
    assert env.guards == []
    assert Analyzer(env).equal(s0 - half, half, guard=True)  # the example decides: a guard
    assert len(env.guards) == 1
    assert Analyzer(env).equal(s0 - half, half)  # now proved from the guard
    assert Analyzer(env).equal(s1 * FloorDiv(s0, s1), s0) is False
    env.expect(sympy.Eq(s1 * FloorDiv(s0, s1), s0), "gqa")
    assert Analyzer(env).equal(s1 * FloorDiv(s0, s1), s0)
    assert len(env.guards) == 1


def test_sizes_equal_table():
    env, (s0, s1) = _env_with(6, 3)
    cases = [  # (a, b, expected without facts)
        (s0 * s1, s1 * s0, True),
        (2 * s0, s0 + s0, True),
        (FloorDiv(2 * s0, 2), s0, True),
        (s0, s1, False),
        (s0 + 1, s0, False),
        (sympy.Integer(3), 3, True),
        (sympy.Integer(3), 4, False),
    ]
    for a, b, expected in cases:
        assert Analyzer(env).equal(a, b) is expected, (a, b, expected)
    assert env.guards == []


def test_sizes_equal_without_env_is_structural():
    s = sympy.Symbol("s9", integer=True, positive=True)
    assert Analyzer().equal(2 * s, s + s)
    assert not Analyzer().equal(s, s + 0 * s + 1)


SIZES = (4, 2, 6, 10, 14)  # even: the chunks' halves are equal; above the hint included


def _chunk_mul(x):
    a, b = x.chunk(2, -1)
    return a * b


def test_uneven_chunk_product_differentiates():
    assert_matches_eager(_chunk_mul, lambda n: [torch.randn(2, 3, n, requires_grad=True)],
                         SIZES)


def _split_mul(x):
    a, b = x.split((x.shape[-1] + 1) // 2, -1)
    return a * b + a.sum()


def test_split_halves_product_differentiates():
    assert_matches_eager(_split_mul, lambda n: [torch.randn(3, n, requires_grad=True)], SIZES)


def _gqa(q, k):
    b, h, t, d = q.shape
    kv = k.shape[1]
    k = k[:, :, None].expand(b, kv, h // kv, t, d).reshape(b, kv * (h // kv), t, d)
    return q * k


def test_grouped_query_expand_reshape_differentiates():
    assert_matches_eager(_gqa, lambda n: [torch.randn(2, 2 * n, 3, 4, requires_grad=True),
                                          torch.randn(2, n, 3, 4, requires_grad=True)],
                         (3, 1, 2, 5))
    assert_matches_eager(_gqa, lambda n: [torch.randn(2, 4, n, 4, requires_grad=True),
                                          torch.randn(2, 2, n, 4, requires_grad=True)],
                         (3, 1, 2, 7))


def _halve(x):
    while x.shape[-1] > 1:
        a, b = x.chunk(2, -1)
        x = a + b
    return x


def test_loop_halving_a_size_differentiates():
    assert_matches_eager(_halve, lambda n: [torch.randn(3, n, requires_grad=True)], (8, 16))


def test_floordiv_prints_its_operands_parenthesised():
    s0 = sympy.Symbol("s0", integer=True, positive=True)
    assert str(s0 - FloorDiv(s0 + 1, 2)) == "s0 - ((s0 + 1)//2)"  # was `s0 - (s0 + 1//2)`
    assert str(FloorDiv(s0, 2)) == "(s0//2)"
