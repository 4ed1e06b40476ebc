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
    out = run(b, a, n, m)
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
    (out,) = run(t, 2, 3)
    torch.testing.assert_close(out, (t.view(2, 3).t() * 2).t())
    assert out.is_contiguous()


def test_single_tensor_result_is_a_one_tuple():
    x = buf("x", (s0,))
    run, _, _ = make_extern(node(lambda a: a.flip(0), (x,)))
    t = torch.arange(5.0)
    (out,) = run(t)
    torch.testing.assert_close(out, t.flip(0))


def _mm_node(args):
    out = buf("out0", (s0, s0))
    return ExternNode("extern0", types.SimpleNamespace(ref=torch.mm, name="mm"), args, {},
                      (out,), ())


@pytest.mark.parametrize("n,k", [(1, 1), (3, 5), (17, 64)])
def test_mm_of_a_transposed_weight_is_linear_bit_for_bit(n, k):
    x, w = buf("x", (s0, s1)), buf("w", (s0, s1))
    run, names, _ = make_extern(_mm_node((x, PermutedBuffer(w, (1, 0)))))
    assert "linear" not in run.source and ".mT" not in run.source  # the bound ref, no view
    a, b = torch.randn(n, k), torch.randn(n + 2, k)
    (out,) = run(*[{"x": a, "w": b}[name] for name in names])
    assert torch.equal(out, torch.mm(a, b.mT)) and out.is_contiguous()
    # another layout of the weight keeps the mm and its view
    run, names, _ = make_extern(_mm_node((PermutedBuffer(x, (1, 0)), w)))
    assert ".mT" in run.source
    c = torch.randn(n, 2)
    (out,) = run(*[{"x": a, "w": c}[name] for name in names])
    assert torch.equal(out, torch.mm(a.mT, c))


def test_a_non_contiguous_result_is_copied_a_contiguous_one_is_not():
    x = buf("x", (s0, s1))
    run, _, _ = make_extern(node(lambda a: a.t(), (x,)))
    t = torch.randn(3, 4)
    (out,) = run(t)
    assert out.is_contiguous() and torch.equal(out, t.t())
    run, _, _ = make_extern(node(lambda a: a, (x,)))
    (out,) = run(t)
    assert out is t  # already in the buffer's layout: no copy, no new tensor
