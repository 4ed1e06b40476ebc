"""as_strided and its copy/scatter forms read an input's storage (prims/decompositions/strided.py):
compiled for an input that is its whole storage (guarded), a graph break for anything else, and
an input of another layout at a later call never reuses the compiled entry."""

from __future__ import annotations

import pytest
import torch

import symc

BACKENDS = ("aot_eager", "inductor")


def _fn(x):
    return torch.as_strided(x, (3, 3), (2, 1), 1) * 2   # overlapping windows


@pytest.mark.parametrize("backend", BACKENDS)
def test_as_strided_of_dense_input_matches_eager_with_overlaps(backend):
    compiled = symc.compile(_fn, backend=backend)
    for n in (9, 12):
        x = torch.randn(n, requires_grad=True)
        want = _fn(x)
        (want_grad,) = torch.autograd.grad((want * want).sum(), x)
        got = compiled(x)
        (got_grad,) = torch.autograd.grad((got * got).sum(), x)
        torch.testing.assert_close(got, want)
        torch.testing.assert_close(got_grad, want_grad)   # overlapping reads accumulate
    assert symc.explain(compiled).graph_breaks == 0


def test_as_strided_of_a_view_input_is_not_compiled_from_its_values():
    compiled = symc.compile(_fn, backend="inductor")
    x, base = torch.randn(10), torch.randn(20)
    torch.testing.assert_close(compiled(x), _fn(x))   # compiled, guarded on x's storage
    torch.testing.assert_close(compiled(base[:10]), _fn(base[:10]))   # storage is 20 long
    torch.testing.assert_close(compiled(base[3:13]), _fn(base[3:13]))  # offset 3
    torch.testing.assert_close(compiled(base[::2]), _fn(base[::2]))    # strided
    report = symc.explain(compiled)
    assert any("storage" in str(b) for b in report.breaks), report.breaks


def test_as_strided_of_an_intermediate_breaks_the_graph():
    def fn(x):
        return torch.as_strided(x.t(), (2,), (1,))

    x = torch.randn(3, 3)
    torch.testing.assert_close(symc.compile(fn, backend="inductor")(x), fn(x))


def test_as_strided_scatter_gradient_is_the_true_derivative():
    def fn(a, src):
        return torch.as_strided_scatter(a, src, (2, 2), (1, 2), 1)

    a = torch.randn(9, dtype=torch.float64, requires_grad=True)
    src = torch.randn(2, 2, dtype=torch.float64, requires_grad=True)
    compiled = symc.compile(fn, backend="aot_eager")
    torch.testing.assert_close(compiled(a, src), fn(a, src))
    assert torch.autograd.gradcheck(compiled, (a, src))
    (grad_a,) = torch.autograd.grad(compiled(a, src).sum(), a)
    written = torch.zeros(9, dtype=torch.bool)
    written[[1, 2, 3, 4]] = True
    assert torch.equal(grad_a, (~written).double())
