"""Dynamic-shape behaviour of decompositions: symbolic -1, symbolic slicing, broadcasting
guards vs runtime asserts, and detection of accidental concrete reads of a size."""

from __future__ import annotations

import operator

import pytest
import sympy
import torch

from prims import MetaTracer, PrimError, infer_meta, ops, tracing
from symbolic import FloorDiv, LocalSource, ShapeEnv, TensorMeta

F32 = torch.float32


def _env(*hints):
    env = ShapeEnv()
    return env, [env.create_symbol(h, LocalSource(f"x{i}")) for i, h in enumerate(hints)]


def test_view_minus_one_divides_exactly_when_it_can():
    env, (s0,) = _env(5)
    out = infer_meta(torch.Tensor.view, (TensorMeta.contiguous((s0, 8), F32), -1, 4), {}, env)
    assert out.shape == (2 * s0, 4)
    assert not env.guards and not env.asserts


def test_view_minus_one_asserts_divisibility_without_guarding():
    env, (s0, s1) = _env(3, 8)
    out = infer_meta(torch.Tensor.view, (TensorMeta.contiguous((s0, s1, 4), F32), -1, 8), {}, env)
    assert out.shape[1] == 8
    assert out.shape[0] == FloorDiv(s0 * s1, 2)  # 4*s0*s1 // 8, the common factor cancelled
    assert not env.guards
    assert any(isinstance(a.expr, sympy.Eq) and a.expr.has(sympy.Mod) for a in env.asserts)


def test_slice_with_symbolic_stop_is_clamped_not_specialised():
    env, (s0, s1) = _env(6, 4)
    x = TensorMeta.contiguous((3, s0), F32)
    out = infer_meta(operator.getitem, (x, (slice(None), slice(1, s1))), {}, env)
    assert out.shape[0] == 3
    assert out.shape[1].has(sympy.Min) and out.shape[1].free_symbols == {s0, s1}
    assert not env.guards


def test_negative_slice_bounds_count_from_the_symbolic_end():
    env, (s0,) = _env(9)
    out = infer_meta(operator.getitem, (TensorMeta.contiguous((s0,), F32),
                                        slice(1, -1)), {}, env)
    for value in (1, 2, 3, 9, 40):  # one expression, right at every size (x[1:-1] of length v)
        assert out.shape[0].subs(s0, value) == len(range(value)[1:-1])
    assert not env.guards


def test_broadcasting_two_equal_symbols_guards_their_equality_only():
    env, (s0, s1) = _env(5, 5)
    out = infer_meta(torch.add, (TensorMeta.contiguous((s0,), F32),
                                 TensorMeta.contiguous((s1,), F32)), {}, env)
    assert len(out.shape) == 1 and out.shape[0] in (s0, s1)
    assert [str(g) for g in env.guards] == ["s0 == s1"]  # holds for 1 == 1 too: no `!= 1`
    assert not env.asserts


def test_a_size_one_example_is_specialized_so_broadcasting_decides_nothing():
    env, (s0, one) = _env(5, 1)
    assert one == 1  # sizes 0 and 1 are specialized when the symbol is created
    out = infer_meta(torch.add, (TensorMeta.contiguous((s0,), F32),
                                 TensorMeta.contiguous((one,), F32)), {}, env)
    assert out.shape == (s0,) and not env.guards


def test_broadcasting_against_a_literal_one_records_nothing():
    env, (s0,) = _env(3)
    out = infer_meta(torch.sub, (TensorMeta.contiguous((1, s0), F32),
                                 TensorMeta.contiguous((s0, 1), F32)), {}, env)
    assert out.shape == (s0, s0) and not env.guards and not env.asserts


def test_matmul_inner_dims_become_a_runtime_assert():
    env, (s0, s1, s2) = _env(4, 6, 6)
    out = infer_meta(torch.matmul, (TensorMeta.contiguous((s0, s1), F32),
                                    TensorMeta.contiguous((s2, 3), F32)), {}, env)
    assert out.shape == (s0, 3)
    assert not env.guards and [str(a.expr) for a in env.asserts] == ["Eq(s1, s2)"]


def test_broadcasting_against_a_constant_keeps_the_symbol():
    env, (s0,) = _env(7)
    out = infer_meta(torch.mul, (TensorMeta.contiguous((s0, 4), F32),
                                 TensorMeta.contiguous((4,), F32)), {}, env)
    assert out.shape == (s0, 4) and not env.guards


def test_a_concrete_read_of_a_symbolic_size_is_detected():
    """The symbolic test harness catches int()/bool() on sizes: sympy raises TypeError."""
    env, (s0,) = _env(5)

    def careless(a):
        if a.shape[0] > 3:  # bool() of a relational between symbols
            return ops.neg(a)
        return a

    def specialising(a):
        return ops.reshape(a, (int(a.shape[0]),))

    x = TensorMeta.contiguous((s0,), F32)
    with tracing(MetaTracer(env)):
        with pytest.raises(TypeError):
            careless(x)
        with pytest.raises(TypeError):
            specialising(x)


def test_squeeze_without_dims_guards_on_symbolic_size_one():
    env, (s0,) = _env(4)
    out = infer_meta(torch.squeeze, (TensorMeta.contiguous((s0, 1, 3), F32),), {}, env)
    assert out.shape == (s0, 3)
    assert [str(g) for g in env.guards] == ["s0 != 1"]


def test_infer_meta_propagates_requires_grad_to_float_outputs():
    env, (s0,) = _env(5)
    x = TensorMeta.contiguous((s0, 4), F32, requires_grad=True)
    values, indices = infer_meta(torch.max, (x, 1), {}, env)
    plain = infer_meta(torch.neg, (TensorMeta.contiguous((s0,), F32),), {}, env)
    assert values.requires_grad and not indices.requires_grad and not plain.requires_grad


def test_sizes_are_decided_in_the_env_the_tracer_was_given_only():
    env, (s0,) = _env(4)
    other = ShapeEnv()  # symbols are named by index: a second env's s0 would be the same symbol
    x = TensorMeta.contiguous((s0, 1, 3), F32)
    with pytest.raises(PrimError, match=r"needs the ShapeEnv of its symbols.*\['s0'\]"):
        infer_meta(torch.squeeze, (x,), {}, other)  # env's s0 is unknown to `other`
    assert not other.guards and not env.guards
    out = infer_meta(torch.squeeze, (x,), {}, env)
    assert out.shape == (s0, 3) and [str(g) for g in env.guards] == ["s0 != 1"]
    assert not other.guards


def test_without_a_tracer_sizes_are_ints_over_an_empty_env():
    from prims.sizes import analyzer, guard_true, require

    an = analyzer()
    assert isinstance(an.env, ShapeEnv) and not an.env.symbols
    assert guard_true(sympy.Integer(3) > 2) is True
    env, (s0,) = _env(5)
    with pytest.raises(PrimError, match="needs the ShapeEnv"):
        guard_true(sympy.Gt(s0, 3))
    with pytest.raises(PrimError, match="expected"):
        require(sympy.Eq(s0, 5), "no env")
    assert not env.guards and not env.asserts
    assert not an.env.symbols and not an.env.guards and not an.env.asserts  # shared: nothing
