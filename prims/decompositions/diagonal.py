"""Diagonals and scatters into views: diagonal, diag, diag_embed, diagflat, trace,
diagonal_scatter, select_scatter, slice_scatter.

A diagonal reads the flattened matrix dims at `start + i * (cols + 1)` (index_select, whose VJP
is an index_put accumulate); placing values on a diagonal compares row and column iotas and
picks with `where`, so sizes stay symbolic.

    torch.diagonal(x f32[s0, s1], 1) -> index_select(reshape(x, (s0*s1,)), 0, iota * (s1+1) + 1)
"""

from __future__ import annotations

import sympy
import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import (
    broadcast_to,
    convert,
    ndim_of,
    reshape,
    shape_of,
    unsqueeze,
    wrap_dim,
)
from prims.decompositions.registry import register_decomposition
from prims.decompositions.shapes import flatten, slice_dim
from prims.sizes import as_expr

T = torch.Tensor


def _diag_length(rows, cols, offset):
    rows, cols = as_expr(rows), as_expr(cols)
    length = sympy.Min(rows - max(0, -offset), cols - max(0, offset))
    return sympy.Max(length, 0)


def _to_end(a, dim1, dim2):
    """`a` with dims dim1, dim2 moved last (in that order)."""
    n = ndim_of(a)
    rest = [d for d in range(n) if d not in (dim1, dim2)]
    order = (*rest, dim1, dim2)
    return a if order == tuple(range(n)) else ops.permute(a, order)


@register_decomposition(torch.diagonal, T.diagonal, torch.diagonal_copy)
def diagonal(a, offset=0, dim1=0, dim2=1):
    n = ndim_of(a)
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise PrimError(f"diagonal: expected two different dims, found {dim1} and {dim2}")
    x = _to_end(a, d1, d2)
    rows, cols = shape_of(x)[-2:]
    length = _diag_length(rows, cols, offset)
    lead = shape_of(x)[:-2]
    flat = reshape(x, (*lead, as_expr(rows) * as_expr(cols)))
    start = max(0, -offset) * as_expr(cols) + max(0, offset)
    index = ops.add(ops.mul(ops.iota(length, 0, 1, torch.int64, a.device), as_expr(cols) + 1),
                    start)
    return ops.index_select(flat, len(lead), index)


@register_decomposition(torch.linalg.diagonal)
def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return diagonal(A, offset, dim1, dim2)


def _place(values, offset, rows, cols, device):
    """(..., rows, cols): values[..., k] on the `offset` diagonal, zeros elsewhere; and the
    diagonal's bool mask (rows, cols)."""
    r = ops.broadcast_in_dim(ops.iota(rows, 0, 1, torch.int64, device), (rows, cols), (0,))
    c = ops.broadcast_in_dim(ops.iota(cols, 0, 1, torch.int64, device), (rows, cols), (1,))
    mask = ops.eq(ops.sub(c, r), offset)
    position = r if offset >= 0 else c  # the element's index along the diagonal
    length = shape_of(values)[-1]
    safe = _clamp(position, length)
    lead = shape_of(values)[:-1]
    picked = ops.index_select(values, len(lead), reshape(safe, (as_expr(rows) * as_expr(cols),)))
    picked = reshape(picked, (*lead, rows, cols))
    return ops.where(broadcast_to(mask, shape_of(picked)), picked,
                     False if values.dtype == torch.bool else 0), mask


def _clamp(position, length):
    upper = sympy.Max(as_expr(length) - 1, 0)
    return ops.minimum(position, upper)


def _from_end(x, dim1, dim2):
    """Inverse of _to_end for an output of rank ndim(x): the last two dims go to dim1, dim2."""
    n = ndim_of(x)
    order = [0] * n
    rest = iter(range(n - 2))
    for d in range(n):
        order[d] = n - 2 if d == dim1 else n - 1 if d == dim2 else next(rest)
    return x if order == list(range(n)) else ops.permute(x, tuple(order))


@register_decomposition(torch.diag_embed, T.diag_embed)
def diag_embed(a, offset=0, dim1=-2, dim2=-1):
    n = ndim_of(a) + 1
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    if d1 == d2:
        raise PrimError(f"diag_embed: expected two different dims, found {dim1} and {dim2}")
    size = as_expr(shape_of(a)[-1]) + abs(offset)
    out, _ = _place(a, offset, size, size, a.device)
    return _from_end(out, d1, d2)


@register_decomposition(torch.diag, T.diag)
def diag(a, diagonal_=0):
    if ndim_of(a) == 1:
        return diag_embed(a, diagonal_)
    if ndim_of(a) == 2:
        return diagonal(a, diagonal_)
    raise PrimError(f"diag: expected a 1-D or 2-D tensor, found {ndim_of(a)}-D")


@register_decomposition(torch.diagflat, T.diagflat)
def diagflat(a, offset=0):
    return diag_embed(flatten(a), offset)


@register_decomposition(torch.trace, T.trace)
def trace(a):
    if ndim_of(a) != 2:
        raise PrimError(f"trace: expected a 2-D tensor, found {ndim_of(a)}-D")
    d = diagonal(a)
    dtype = torch.int64 if not a.dtype.is_floating_point else a.dtype
    return ops.sum(convert(d, dtype), (0,))


@register_decomposition(torch.diagonal_scatter, T.diagonal_scatter)
def diagonal_scatter(a, src, offset=0, dim1=0, dim2=1):
    n = ndim_of(a)
    d1, d2 = wrap_dim(dim1, n), wrap_dim(dim2, n)
    x = _to_end(a, d1, d2)
    rows, cols = shape_of(x)[-2:]
    placed, mask = _place(convert(src, a.dtype), offset, rows, cols, a.device)
    out = ops.where(broadcast_to(mask, shape_of(x)), broadcast_to(placed, shape_of(x)), x)
    return _from_end(out, d1, d2)


@register_decomposition(torch.select_scatter, T.select_scatter)
def select_scatter(a, src, dim, index):
    d = wrap_dim(dim, ndim_of(a))
    size = shape_of(a)[d]
    if isinstance(index, int) and index < 0:
        index = as_expr(size) + index
    positions = ops.broadcast_in_dim(ops.iota(size, 0, 1, torch.int64, a.device), shape_of(a),
                                     (d,))
    values = broadcast_to(unsqueeze(convert(src, a.dtype), d), shape_of(a))
    return ops.where(ops.eq(positions, index), values, a)


@register_decomposition(torch.slice_scatter, T.slice_scatter)
def slice_scatter(a, src, dim=0, start=None, end=None, step=1):
    d = wrap_dim(dim, ndim_of(a))
    size = shape_of(a)[d]
    view = slice_dim(ops.iota(size, 0, 1, torch.int64, a.device), 0, start, end, step)
    count = shape_of(view)[0]
    if as_expr(count) == 0:
        return ops.add(a, 0) if a.dtype != torch.bool else ops.logical_or(a, a)
    first = ops.slice(view, 0, 0, 1, 1)
    p = ops.iota(size, 0, 1, torch.int64, a.device)
    rel = ops.sub(p, broadcast_to(first, (size,)))
    step = 1 if step is None else step
    inside = ops.logical_and(ops.ge(rel, 0), ops.lt(rel, as_expr(count) * step))
    inside = ops.logical_and(inside, ops.eq(ops.remainder(rel, step), 0))
    k = ops.minimum(ops.maximum(ops.floor_divide(rel, step), 0), as_expr(count) - 1)
    picked = ops.index_select(convert(src, a.dtype), d, k)
    mask = ops.broadcast_in_dim(inside, shape_of(a), (d,))
    return ops.where(mask, picked, a)
