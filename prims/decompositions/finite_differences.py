"""torch.gradient: central differences inside, one-sided ones at the two edges, along each dim,
as slices of the input (uniform spacing: a number, or one per dim).

    torch.gradient(a f32[s0], spacing=2.0)
        -> (cat(((a[1:2] - a[0:1]) / 2, (a[2:] - a[:-2]) / 2 / 2, (a[-1:] - a[-2:-1]) / 2)),)

Edge order 2 uses the second-order one-sided stencils (-3/2, 2, -1/2) and (1/2, -2, 3/2), as
eager does. Coordinates given as tensors (non-uniform spacing) are not supported.
"""

from __future__ import annotations

import sympy
import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import is_tensor, ndim_of, shape_of, wrap_dim
from prims.decompositions.registry import register_decomposition
from prims.sizes import as_expr, require


def _part(a, d, start, stop):
    """a[start:stop] along d; negative bounds count from the end (a symbolic size)."""
    n = as_expr(shape_of(a)[d])
    begin = start if start >= 0 else n + start
    end = n if stop is None else (stop if stop >= 0 else n + stop)
    return ops.slice(a, d, begin, end, 1)


def _stencil(a, d, terms, dx):
    """sum_k coeff_k * a[start_k:stop_k] along d, divided by dx."""
    total = None
    for coeff, start, stop in terms:
        part = ops.mul(_part(a, d, start, stop), coeff)
        total = part if total is None else ops.add(total, part)
    return ops.div(total, dx)


def _along(a, d, dx, edge_order):
    n = as_expr(shape_of(a)[d])
    require(sympy.Ge(n, edge_order + 1), f"torch.gradient expected each dimension size to be "
                                         f"at least edge_order+1 ({edge_order + 1}), found {n}")
    center = ops.div(ops.div(ops.sub(_part(a, d, 2, None), _part(a, d, 0, -2)), dx), 2)
    if edge_order == 1:
        first = ops.div(ops.sub(_part(a, d, 1, 2), _part(a, d, 0, 1)), dx)
        last = ops.div(ops.sub(_part(a, d, -1, None), _part(a, d, -2, -1)), dx)
    else:
        first = _stencil(a, d, ((-1.5, 0, 1), (2.0, 1, 2), (-0.5, 2, 3)), dx)
        last = _stencil(a, d, ((0.5, -3, -2), (-2.0, -2, -1), (1.5, -1, None)), dx)
    return ops.cat((first, center, last), d)


@register_decomposition(torch.gradient)
def gradient(input, *, spacing=None, dim=None, edge_order=1):
    if edge_order not in (1, 2):
        raise PrimError(f"torch.gradient only supports edge_order=1 and edge_order=2, found "
                        f"{edge_order}")
    if not input.dtype.is_floating_point:
        raise PrimError(f"torch.gradient: expected a floating input, found {input.dtype}")
    if dim is None:
        dims = tuple(range(ndim_of(input)))
    else:   # in the order given: one result (and one spacing) per entry
        dims = tuple(wrap_dim(d, ndim_of(input)) for d in ((dim,) if isinstance(dim, int)
                                                            else dim))
    if spacing is None:
        spacing = (1.0,) * len(dims)
    elif isinstance(spacing, (int, float)):
        spacing = (spacing,) * len(dims)
    spacing = tuple(spacing)
    if any(is_tensor(s) for s in spacing):
        raise PrimError("torch.gradient: coordinates given as tensors (non-uniform spacing) "
                        "are not supported")
    if len(spacing) != len(dims):
        raise PrimError(f"torch.gradient expected spacing to be unspecified, a scalar or a list "
                        f"of length {len(dims)}, found a list of length {len(spacing)}")
    return tuple(_along(input, d, dx, edge_order) for d, dx in zip(dims, spacing, strict=True))
