"""The wrapper's extern caller (inductor/wrapper.py make_extern): generated straight-line code
that indexes buffers, permutes views, computes integer size arguments from their expressions and
passes constants and float expressions as the old getters did; compared with calling the ref
by hand (the oracle) over sizes 1, 2, a prime and a large one."""

from tests.device import DEVICE, interpret_triton

interpret_triton()

import re  # noqa: E402
import types  # noqa: E402

import pytest  # noqa: E402
import sympy  # noqa: E402
import torch  # noqa: E402

from inductor.ir import Buffer, ExternNode, Layout, PermutedBuffer  # noqa: E402
from inductor import wrapper  # noqa: E402
from inductor.wrapper import inline_extern, make_extern  # noqa: E402

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


def test_single_tensor_ops_are_called_on_the_wrappers_line():
    """mm, bmm and mm of a transposed weight (linear) are the op itself on the wrapper's line,
    over the wrapper's own names; an extern of two outputs, a permuted result or another ref
    keeps its generated `run`."""
    x, w = buf("x", (s0, s1)), buf("w", (s0, s1))
    op, args, constants = inline_extern(_mm_node((x, PermutedBuffer(w, (1, 0)))))
    assert op is torch.nn.functional.linear and args == ["x", "w"] and constants == {}
    op, args, _ = inline_extern(_mm_node((PermutedBuffer(x, (1, 0), (s1, 4 * s0)), w)))
    assert op is torch.mm and args == ["x.view((int(s1), int(4*s0), )).mT", "w"]
    assert inline_extern(node(torch.mm, (x, w), outputs=2)) is None
    with pytest.MonkeyPatch.context() as patch:  # SYMC_MM_AS_LINEAR=0: the mm and its view
        patch.setattr(wrapper, "MM_AS_LINEAR", False)
        op, args, _ = inline_extern(_mm_node((x, PermutedBuffer(w, (1, 0)))))
        assert op is torch.mm and args == ["x", "w.mT"]
    assert inline_extern(node(torch.mm, (x, w), output_dims=((1, 0),))) is None
    assert inline_extern(node(lambda a, b: a @ b, (x, w))) is None


def test_inline_extern_result_is_made_contiguous_when_it_is_not():
    """The wrapper's line keeps the layout check of `run`: a result that is not contiguous
    (not what mm returns, so the op is swapped for one that does) is copied."""
    from inductor_graphs import decomposed, prims_graph

    from inductor.compile import compile_graph

    def fn(x, w):
        return decomposed(torch.exp, decomposed(torch.matmul, x, w))
    graph, env, _ = prims_graph(fn, [("a", 6), (6, 5)], device=DEVICE)
    cg = compile_graph(graph, env, device_backend="triton")
    (line,) = [ln for ln in cg.wrapper_source.splitlines() if "# mm" in ln]
    name = re.search(r"(extern\d+)\(", line).group(1)
    assert re.fullmatch(rf"\s+(buf\d+) = \1 if \(\1 := {name}\(arg0, arg1\)\)\.is_contiguous\(\)"
                        r" else \1\.contiguous\(\)  # mm", line), line
    x, w = torch.randn(7, 6, device=DEVICE), torch.randn(6, 5, device=DEVICE)
    torch.testing.assert_close(cg(x, w)[0], torch.exp(x @ w))
    namespace = cg.run.__globals__
    assert namespace[name] is torch.mm
    namespace[name] = lambda a, b: (b.mT @ a.mT).mT  # the same values, column-major
    try:
        torch.testing.assert_close(cg(x, w)[0], torch.exp(x @ w))
    finally:
        namespace[name] = torch.mm
