"""torch functions whose result is a Python value, not a tensor, inside a compiled region.

- `torch.broadcast_shapes` of symbolic shapes is a torch.Size of sizes (no graph break), usable
  as a shape, with the empty shape and size-1 dims broadcasting as eager.
- `from m import (a, b)` inside inlined code (torch's own functions do it) is not an internal
  capture error.
"""

from __future__ import annotations

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
