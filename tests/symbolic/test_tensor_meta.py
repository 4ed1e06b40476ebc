"""TensorMeta: printing, derived contiguous strides, sympy shapes, meta_of/verify."""

import pytest
import sympy
import torch
import torch.fx as fx

from symbolic import SymbolicError, TensorMeta, contiguous_strides, meta_of, verify

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)


@pytest.mark.parametrize(
    "meta, text",
    [
        (TensorMeta.contiguous((s0, 768), torch.float32), "f32[s0, 768]"),
        (TensorMeta.contiguous((), torch.int64), "i64[]"),
        (TensorMeta.contiguous((2, s0, s1), torch.bfloat16), "bf16[2, s0, s1]"),
        (TensorMeta.contiguous((s0 * 2,), torch.bool), "b8[2*s0]"),
    ],
)
def test_prints_short_form(meta, text):
    assert str(meta) == text


def test_contiguous_strides_are_derived():
    meta = TensorMeta.contiguous((s0, s1, 4), torch.float32)
    assert meta.stride == (4 * s1, 4, 1)
    assert meta.is_contiguous
    assert all(isinstance(s, sympy.Expr) for s in (*meta.shape, *meta.stride))
    assert contiguous_strides((sympy.Integer(3), sympy.Integer(0), sympy.Integer(2))) == (2, 2, 1)


def test_explicit_strides_and_helpers():
    meta = TensorMeta((s0, 4), torch.float32, stride=(1, s0))
    assert not meta.is_contiguous
    assert meta.ndim == 2 and meta.numel() == 4 * s0 and meta.size(1) == 4
    assert meta.free_symbols == {s0}
    assert meta.with_dtype(torch.float16).dtype == torch.float16
    with pytest.raises(SymbolicError, match="rank"):
        TensorMeta((s0, 4), torch.float32, stride=(1,))


def test_from_tensor_and_meta_accessors():
    meta = TensorMeta.from_tensor(torch.empty(3, 5), shape=(s0, 5))
    assert str(meta) == "f32[s0, 5]" and meta.stride == (5, 1)
    graph = fx.Graph()
    x = graph.placeholder("x")
    x.meta["val"] = meta
    graph.output((x,))
    verify(graph)
    assert meta_of(x) is meta
    bare = graph.placeholder("y")
    with pytest.raises(SymbolicError, match="no meta"):
        verify(graph)
    del bare
