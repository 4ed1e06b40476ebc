"""The wrapper's extern caller (inductor/wrapper.py make_extern): generated straight-line code
that indexes buffers, permutes views, computes integer size arguments from their expressions and
passes constants and float expressions as the old getters did; compared with calling the ref
by hand (the oracle) over sizes 1, 2, a prime and a large one."""

import types

import pytest
import sympy
import torch

from inductor.ir import Buffer, ExternNode, Layout, PermutedBuffer
from inductor.wrapper import make_extern

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)


def buf(name, size):
    return Buffer(name, Layout.contiguous(size, torch.float32, torch.device("cpu")))


def node(ref, args, kwargs=None, outputs=1, output_dims=()):
    outs = tuple(buf(f"out{i}", (s0,)) for i in range(outputs))
    return ExternNode("extern0", types.SimpleNamespace(ref=ref, name="test"), args, kwargs or {},
                      outs, output_dims)


@pytest.mark.parametrize("n,m", [(1, 1), (2, 3), (7, 13), (64, 5)])
def test_extern_call_matches_the_ref_called_by_hand(n, m):
    seen = []

    def ref(a, bt, width, shape, scale, flag=None, dims=None):
        seen.append((width, shape, scale, flag, dims))
        return (a @ bt)[:, :width], a.t()
    x, w = buf("x", (s0, s1)), buf("w", (s0, s1))
    scale = 1 / sympy.sqrt(s1)  # a float expression: computed through sympy, as before
    run, names, syms = make_extern(node(ref, (x, PermutedBuffer(w, (1, 0)), s0 // 2 + 1,
                                              (s0, s1 * 2, 3), scale),
                                        {"flag": True, "dims": [s1, 1]}, outputs=2))
    assert names == ["w", "x"] and syms == [s0, s1]
    a, b = torch.randn(n, m), torch.randn(n, m)
    out = run((b, a), (n, m))
    expected = ((a @ b.t())[:, :n // 2 + 1], a.t())
    assert len(out) == 2 and all(o.is_contiguous() for o in out)
    for got, want in zip(out, expected):
        torch.testing.assert_close(got, want)
    width, shape, sc, flag, dims = seen[-1]
    assert (width, shape, flag, dims) == (n // 2 + 1, (n, 2 * m, 3), True, [m, 1])
    assert type(width) is int and type(shape[0]) is int
    assert sc == pytest.approx(m ** -0.5)
    assert "int(" in run.source and "(tensors, values)" in run.source  # inlined and getters


def test_viewed_operand_and_permuted_result():
    x = buf("x", (s0 * s1,))
    viewed = PermutedBuffer(x, (1, 0), (s0, s1))
    run, _, _ = make_extern(node(lambda a: a * 2, (viewed,), output_dims=((1, 0),)))
    t = torch.arange(6.0)
    (out,) = run((t,), (2, 3))
    torch.testing.assert_close(out, (t.view(2, 3).t() * 2).t())
    assert out.is_contiguous()


def test_single_tensor_result_is_a_one_tuple():
    x = buf("x", (s0,))
    run, _, _ = make_extern(node(lambda a: a.flip(0), (x,)))
    t = torch.arange(5.0)
    (out,) = run((t,), ())
    torch.testing.assert_close(out, t.flip(0))
