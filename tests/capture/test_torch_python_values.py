"""Python values next to torch calls in a compiled region: results that are not tensors, and
non-tensor arguments.

- `torch.broadcast_shapes` of symbolic shapes is a torch.Size of sizes (no graph break), usable
  as a shape, with the empty shape and size-1 dims broadcasting as eager.
- `torch.allclose` / `torch.equal` / `Tensor.equal` return the Python bool eager returns (from a
  0-d bool output of the graph), at every size, 0-d, broadcast and differing shapes included;
  a branch on one is a graph break that resumes with the right value.
- `math.prod(sizes, start=size)` is a size expression (no graph break).
- A frozen dataclass of constants (`F.linear_cross_entropy`'s options) passes to a torch op,
  fixed by an identity guard.
- `from m import (a, b)` inside inlined code (torch's own functions do it) is not an internal
  capture error.
"""

from __future__ import annotations

import math

import pytest
import torch

import symc
from symc.compile import compiled_functions

BACKENDS = ["aot_eager", "inductor"]


def _no_breaks(compiled) -> None:
    for fn in compiled_functions(compiled):
        assert not fn.breaks, [b.reason for b in fn.breaks]


def broadcast_of(x, y):
    shape = torch.broadcast_shapes(x.shape, y.shape, ())
    return torch.zeros(shape) + x, shape


@pytest.mark.parametrize("backend", BACKENDS)
def test_broadcast_shapes_of_symbolic_shapes_is_a_size(backend):
    compiled = symc.compile(broadcast_of, backend=backend)
    for xs, ys in [((4, 1), (3,)), ((5, 1), (7,)), ((1,), (2, 1)), ((3, 2), (1,))]:
        x, y = torch.randn(xs), torch.randn(ys)
        out, shape = compiled(x, y)
        want_out, want_shape = broadcast_of(x, y)
        assert type(shape) is torch.Size and shape == want_shape
        torch.testing.assert_close(out, want_out)
    _no_breaks(compiled)


def constant_broadcast():
    return torch.broadcast_shapes((), ()), torch.broadcast_shapes((5, 1), 5)


def test_broadcast_shapes_of_constants_and_of_nothing():
    compiled = symc.compile(constant_broadcast, backend="inductor")
    assert compiled() == (torch.Size([]), torch.Size([5, 5]))
    _no_breaks(compiled)


def imports_names(x):
    from math import (pi, tau)  # a constant tuple of names on the stack

    return x * pi + tau


def test_import_of_a_tuple_of_names_is_captured():
    compiled = symc.compile(imports_names, backend="aot_eager")
    x = torch.randn(3)
    torch.testing.assert_close(compiled(x), imports_names(x))
    _no_breaks(compiled)


def compare(a, b):
    return torch.allclose(a, b, rtol=0.1, atol=0.01), torch.equal(a, b), a.equal(b)


PAIRS = [
    (torch.ones(3), torch.ones(3)),
    (torch.ones(4), torch.ones(4) * 1.05),          # close, not equal
    (torch.ones(5), torch.ones(5) * 2),             # neither
    (torch.ones(2), torch.ones(1)),                 # allclose broadcasts; equal: shapes differ
    (torch.ones(()), torch.ones(())),               # 0-d
    (torch.zeros(0), torch.zeros(0)),               # size 0: vacuously true
    (torch.full((3,), float("nan")), torch.full((3,), float("nan"))),  # NaN is not equal
]


@pytest.mark.parametrize("backend", ["eager", *BACKENDS])
def test_allclose_and_equal_return_the_python_bool_eager_returns(backend):
    compiled = symc.compile(compare, backend=backend)
    for a, b in PAIRS:
        got, want = compiled(a, b), compare(a, b)
        assert got == want, (a, b, got, want)
        assert all(type(g) is bool for g in got), got
    _no_breaks(compiled)


def branch_on_equal(a, b):
    if torch.equal(a, b):
        return a + 1
    return a - 1


def identity_of_equal(a, b):
    return torch.equal(a, b) is True


@pytest.mark.parametrize("fn", [branch_on_equal, identity_of_equal])
def test_a_branch_on_a_bool_read_from_a_tensor_breaks_and_resumes(fn):
    compiled = symc.compile(fn, backend="inductor")
    for a, b in [(torch.ones(3), torch.ones(3)), (torch.ones(3), torch.zeros(3))]:
        got, want = compiled(a, b), fn(a, b)
        assert (got is want) if isinstance(want, bool) else torch.equal(got, want)
    reasons = [b.reason for f in compiled_functions(compiled) for b in f.breaks]
    assert reasons and "read from a tensor" in reasons[0], reasons


def flattened_size(x):
    return x.reshape(math.prod(x.shape[1:], start=x.shape[0])) * 2


def test_math_prod_with_a_start_of_sizes_is_a_size():
    compiled = symc.compile(flattened_size, backend="inductor")
    for shape in [(2, 3, 4), (5, 1, 7), (1, 2, 1)]:
        x = torch.randn(shape)
        torch.testing.assert_close(compiled(x), flattened_size(x))
    _no_breaks(compiled)


@pytest.mark.skipif(not hasattr(torch.nn, "LinearCrossEntropyOptions"),
                    reason="F.linear_cross_entropy's options come with torch 2.12")
@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_options_record_passes_to_a_torch_op(reduction):
    options = torch.nn.LinearCrossEntropyOptions(batch_chunk_size=2)

    def loss(x, w, t):
        return torch.nn.functional.linear_cross_entropy(x, w, t, reduction=reduction,
                                                        options=options)

    compiled = symc.compile(loss, backend="inductor")
    for n in (8, 3, 1):
        x, w = torch.randn(n, 5, requires_grad=True), torch.randn(4, 5, requires_grad=True)
        t = torch.randint(0, 4, (n,))
        got, want = compiled(x, w, t), loss(x, w, t)
        torch.testing.assert_close(got, want)
        cot = torch.randn(want.shape)
        torch.testing.assert_close(torch.autograd.grad(got, (x, w), cot),
                                   torch.autograd.grad(want, (x, w), cot))
    _no_breaks(compiled)
