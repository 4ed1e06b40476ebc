"""Layout facts the program reads are guarded; strided and offset inputs give eager's answers.

Each case calls one compiled function on a sequence of inputs whose layouts differ (contiguous,
strided, with a storage offset, transposed, channels-last) and sizes 1, 2, primes and above the
first call's hint, and compares every call with eager.
"""

from __future__ import annotations

import pytest
import torch

import symc

BACKENDS = ["eager", "aot_eager", "inductor"]


def _layouts(n: int, m: int) -> list[torch.Tensor]:
    """Inputs of shape (n, m): contiguous, strided, offset, transposed, offset-contiguous."""
    return [
        torch.randn(n, m),
        torch.randn(n, 2 * m)[:, ::2],
        torch.randn(n + 3, m + 1)[2:, 1:],
        torch.randn(m, n).t(),
        torch.randn(n + 1, m)[1:],
    ]


def branch_on_contiguity(x):
    if x.is_contiguous():
        return x + 1
    return x * 2 - 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_is_contiguous_branch_follows_each_input(backend):
    torch.manual_seed(0)
    compiled = symc.compile(branch_on_contiguity, backend=backend)
    for n, m in [(5, 3), (1, 2), (2, 7), (13, 11)]:
        for x in _layouts(n, m):
            torch.testing.assert_close(compiled(x), branch_on_contiguity(x))


def test_is_contiguous_is_a_guard_on_the_input():
    compiled = symc.compile(branch_on_contiguity, backend="eager")
    compiled(torch.randn(4, 3))
    compiled(torch.randn(4, 6)[:, ::2])
    report = symc.explain(compiled)
    assert report.compiles == 2
    assert "L['x'].is_contiguous() == True" in str(report)


def branch_on_channels_last(x):
    if x.is_contiguous(memory_format=torch.channels_last):
        return x + 1
    return x - 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_channels_last_branch_follows_each_input(backend):
    torch.manual_seed(0)
    compiled = symc.compile(branch_on_channels_last, backend=backend)
    for shape in [(2, 3, 4, 5), (1, 2, 3, 7), (3, 5, 2, 2)]:
        a = torch.randn(shape)
        for x in (a, a.to(memory_format=torch.channels_last), a):
            torch.testing.assert_close(compiled(x), branch_on_channels_last(x))


def branch_on_view_contiguity(x):
    y = x.t()
    if y.is_contiguous():
        return y + 1
    return y.contiguous() * 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_is_contiguous_of_an_intermediate_matches_eager(backend):
    compiled = symc.compile(branch_on_view_contiguity, backend=backend)
    for n in (1, 2, 5, 11):
        x = torch.randn(n, 3)
        torch.testing.assert_close(compiled(x), branch_on_view_contiguity(x))


def contiguous_then_ask(x):
    y = (x * 2).contiguous()
    return y + 1 if y.is_contiguous() else y - 1


def test_result_of_contiguous_is_known_contiguous():
    compiled = symc.compile(contiguous_then_ask, backend="eager")
    x = torch.randn(3, 4)
    torch.testing.assert_close(compiled(x), contiguous_then_ask(x))
    assert symc.explain(compiled).graph_breaks == 0


def mixed(x, y):
    return (x * 2 + y).sum(0) + x.amax(1).sum()


@pytest.mark.parametrize("backend", BACKENDS)
def test_strided_and_offset_inputs_forward_and_backward(backend):
    torch.manual_seed(0)
    compiled = symc.compile(mixed, backend=backend)
    for n, m in [(3, 4), (1, 1), (2, 2), (7, 5), (17, 13)]:
        for xs, ys in zip(_layouts(n, m), reversed(_layouts(n, m))):
            bases = [t._base if t._base is not None else t for t in (xs, ys)]
            leaves = [b.detach().clone().requires_grad_(True) for b in bases]
            views = [torch.as_strided(leaf, t.shape, t.stride(), t.storage_offset())
                     for leaf, t in zip(leaves, (xs, ys))]
            out = compiled(*views)
            expected_leaves = [b.detach().clone().requires_grad_(True) for b in bases]
            expected_views = [torch.as_strided(leaf, t.shape, t.stride(), t.storage_offset())
                              for leaf, t in zip(expected_leaves, (xs, ys))]
            expected = mixed(*expected_views)
            torch.testing.assert_close(out, expected)
            out.sum().backward()
            expected.sum().backward()
            for leaf, ref in zip(leaves, expected_leaves):
                torch.testing.assert_close(leaf.grad, ref.grad)


def scale_by_stride(x):
    y = x.t()
    return y * y.stride(0) + x.stride(1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_strides_of_inputs_and_intermediates_match_eager(backend):
    compiled = symc.compile(scale_by_stride, backend=backend)
    for n, m in [(3, 4), (1, 2), (2, 7), (13, 11)]:
        for x in _layouts(n, m):
            torch.testing.assert_close(compiled(x), scale_by_stride(x))


def flat_view(x):
    return x.view(-1) * 2


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_of_a_non_contiguous_input_fails_as_in_eager(backend):
    compiled = symc.compile(flat_view, backend=backend)
    for n in (3, 1, 2, 7):
        x = torch.randn(n, 4)
        torch.testing.assert_close(compiled(x), flat_view(x))
        transposed = torch.randn(4, n).t()
        if n > 1:
            with pytest.raises(RuntimeError):
                flat_view(transposed)
            with pytest.raises(RuntimeError):
                compiled(transposed)
        strided = torch.randn(n, 8)[:, ::2]  # a view eager accepts: rows of equal stride
        torch.testing.assert_close(compiled(strided), flat_view(strided))
