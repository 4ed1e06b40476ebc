"""Indexing: `x[...]` (ints, slices with symbolic bounds, None, Ellipsis, int tensors),
`x[...] = v` (functional), masked_fill, gather, index_select, scatter_add, embedding;
`operator.getitem` on tuples.

    x[:, 1:s0-1] on f32[4, s1]  ->  slice(x, 1, 1, Min(s0 - 1, s1), 1)
"""

from __future__ import annotations

import operator

import sympy
import torch
import torch.nn.functional as F

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import (
    broadcast_tensors,
    broadcast_to,
    convert,
    is_tensor,
    ndim_of,
    numel_of,
    reshape,
    shape_of,
    unsqueeze,
    wrap_dim,
)
from prims.decompositions.registry import register_decomposition
from prims.decompositions.shapes import clamp_index, slice_dim
from prims.sizes import (
    as_expr,
    broadcast_shapes,
    guard_true,
    known_true,
    prod,
    require,
    sym_min,
)
from prims.views import slice_length

T = torch.Tensor


def _select(a, dim, index):
    """a[..., index, ...] at `dim` for an int or sympy index (negative counts from the end)."""
    size = shape_of(a)[dim]
    if isinstance(index, int) and index < 0:
        index = size + index
    elif isinstance(index, sympy.Basic) and not known_true(sympy.Ge(index, 0)):
        if not guard_true(sympy.Ge(index, 0), "index"):
            index = as_expr(size) + index
    require(sympy.And(sympy.Ge(as_expr(index), 0), sympy.Lt(as_expr(index), as_expr(size))),
            f"index: expected an index in [0, {size}), found {index}")
    return ops.squeeze(ops.slice(a, dim, index, index + 1, 1), (dim,))


def _list_index(item, device):
    """A list of ints as an index (x[[0, 2]]): the int64 tensor eager makes of it."""
    from prims.decompositions.literals import tensor as literal

    index = literal(item, device=device)
    if index.dtype != torch.int64:
        raise PrimError(f"index: expected a list of ints, found a list of {index.dtype}")
    return index


def _expand_ellipsis(index, ndim):
    consumed = sum(1 if not (item is None or item is Ellipsis)
                   else 0 for item in index)
    if sum(item is Ellipsis for item in index) > 1:
        raise PrimError("index: expected at most one Ellipsis, found several")
    if consumed > ndim:
        raise PrimError(f"index: too many indices ({consumed}) for a tensor of {ndim} dims")
    out = []
    for item in index:
        if item is Ellipsis:
            out.extend([slice(None)] * (ndim - consumed))
        else:
            out.append(item)
    if Ellipsis not in index:
        out.extend([slice(None)] * (ndim - consumed))
    return out


def _normalise_index_tensor(index, size):
    """Int64 indices with negative values counted from the end (torch allows both)."""
    if index.dtype == torch.bool or index.dtype.is_floating_point:
        raise PrimError(f"index: expected an int64 index tensor, found {index.dtype} (boolean "
                        f"masks give data-dependent shapes)")
    index = convert(index, torch.int64)
    return ops.where(ops.lt(index, 0), ops.add(index, size), index)


def _out_of_range_to_negative(index, size, total):
    """A wrapped index outside [0, size) becomes -total, so that the linear index it adds to
    (each other term in [0, total)) is negative and the gather raises IndexError, as eager
    does for `x[i, j]` with `j` past its dim even when the linear position would fit."""
    bad = ops.logical_or(ops.lt(index, 0), ops.ge(index, size))
    return ops.where(bad, ops.sub(ops.mul(index, 0), total), index)


def _advanced(a, positions, indices):
    """a indexed at dims `positions` by broadcast int tensors `indices` (torch semantics)."""
    indices = broadcast_tensors(*indices)
    index_shape = shape_of(indices[0])
    n = ndim_of(a)
    rest = [d for d in range(n) if d not in positions]
    moved = ops.permute(a, (*positions, *rest)) if list(positions) + rest != list(range(n)) else a
    sizes = [shape_of(a)[p] for p in positions]
    linear = None
    for i, idx in enumerate(indices):
        term = _normalise_index_tensor(idx, sizes[i])
        if len(indices) > 1:  # the gather checks the linear index only: check each dim here
            term = _out_of_range_to_negative(term, sizes[i], prod(sizes))
        stride = prod(sizes[i + 1:])
        term = ops.mul(term, stride) if stride != 1 else term
        linear = term if linear is None else ops.add(linear, term)
    rest_shape = [shape_of(a)[d] for d in rest]
    flat = reshape(moved, (prod(sizes), *rest_shape))
    picked = ops.index_select(flat, 0, reshape(linear, (numel_of(indices[0]),)))
    out = reshape(picked, (*index_shape, *rest_shape))
    consecutive = list(positions) == list(range(positions[0], positions[0] + len(positions)))
    if consecutive and positions[0] > 0:
        k, first = len(index_shape), positions[0]
        order = (*range(k, k + first), *range(k), *range(k + first, ndim_of(out)))
        out = ops.permute(out, order)
    return out


@register_decomposition(T.__getitem__)
def tensor_getitem(a, index):
    if isinstance(index, list) and any(item is None or item is Ellipsis or is_tensor(item)
                                       or isinstance(item, slice) for item in index):
        index = tuple(index)  # eager reads such a list as a tuple of indices
    if not isinstance(index, tuple):
        index = (index,)
    index = tuple(_list_index(item, a.device) if isinstance(item, list) else item
                  for item in index)
    out = a
    dim = 0
    tensor_positions, tensor_indices = [], []
    for item in _expand_ellipsis(index, ndim_of(a)):
        if item is None:
            out = unsqueeze(out, dim)
            dim += 1
        elif isinstance(item, slice):
            out = slice_dim(out, dim, item.start, item.stop, item.step)
            dim += 1
        elif is_tensor(item):
            tensor_positions.append(dim)
            tensor_indices.append(item)
            dim += 1
        elif isinstance(item, (int, sympy.Basic)) and not isinstance(item, bool):
            out = _select(out, dim, item)
        else:
            raise PrimError(f"index: unsupported index {item!r}")
    if tensor_indices:
        out = _advanced(out, tensor_positions, tensor_indices)
    return out


@register_decomposition(operator.getitem)
def getitem(value, index):
    """`x[i]` on a tensor indexes it; on a tuple/list (multi-output ops) picks an element."""
    if is_tensor(value):
        return tensor_getitem(value, index)
    return value[index]


@register_decomposition(torch.masked_fill, T.masked_fill, T.masked_fill_)
def masked_fill(a, mask, value):
    if mask.dtype != torch.bool:
        raise PrimError(f"masked_fill: expected a bool mask, found {mask.dtype}")
    if is_tensor(value):
        if ndim_of(value) != 0:
            raise PrimError(f"masked_fill: expected a 0-dim value tensor, found {value}")
        value = broadcast_to(convert(value, a.dtype), shape_of(a))
    mask = broadcast_to(mask, shape_of(a))
    return ops.where(mask, value, a)


@register_decomposition(torch.gather, T.gather)
def gather(a, dim, index, *, sparse_grad=False):
    return ops.gather(a, wrap_dim(dim, ndim_of(a)), index)


@register_decomposition(torch.index_select, T.index_select)
def index_select(a, dim, index):
    if ndim_of(a) == 0:  # a scalar: eager takes exactly one index (which must be 0)
        require(sympy.Eq(as_expr(numel_of(index)), 1),
                f"index_select: expected one index into a 0-d tensor, found {numel_of(index)}")
    return ops.index_select(a, wrap_dim(dim, max(ndim_of(a), 1)), index)


@register_decomposition(torch.scatter_add, T.scatter_add)
def scatter_add(a, dim, index, src):
    return ops.scatter_add(a, wrap_dim(dim, ndim_of(a)), index, src)


@register_decomposition(torch.take_along_dim, T.take_along_dim)
def take_along_dim(a, indices, dim):
    d = wrap_dim(dim, ndim_of(a))
    a_shape, i_shape = list(shape_of(a)), list(shape_of(indices))
    a_shape[d], i_shape[d] = 1, 1
    common = broadcast_shapes(tuple(a_shape), tuple(i_shape))
    index_shape = (*common[:d], shape_of(indices)[d], *common[d + 1:])
    value_shape = (*common[:d], shape_of(a)[d], *common[d + 1:])
    return ops.gather(broadcast_to(a, value_shape), d, broadcast_to(indices, index_shape))


@register_decomposition(F.embedding)
def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    if max_norm is not None:
        raise PrimError("embedding: max_norm renormalises the weight in place; not supported")
    if scale_grad_by_freq or sparse:
        raise PrimError("embedding: expected scale_grad_by_freq=False and sparse=False (their "
                        "gradients are not supported), found True")
    flat = convert(reshape(input, (numel_of(input),)), torch.int64)
    rows = ops.index_select(weight, 0, flat)
    if padding_idx is not None:
        rows = _without_grad_at(rows, flat, _padding_row(padding_idx, shape_of(weight)[0]))
    return reshape(rows, (*shape_of(input), shape_of(weight)[1]))


def _padding_row(padding_idx: int, rows):
    if not isinstance(padding_idx, int):
        raise PrimError(f"embedding: expected an int padding_idx, found {padding_idx!r}")
    return padding_idx + rows if padding_idx < 0 else padding_idx


def _without_grad_at(rows, flat, padding_row):
    """The looked-up rows, unchanged, but no gradient reaches the weight's padding row (eager's
    embedding backward skips indices equal to padding_idx)."""
    keep = ops.broadcast_in_dim(ops.ne(flat, padding_row), shape_of(rows), (0,))
    return ops.where(keep, rows, ops.stop_gradient(rows))


@register_decomposition(torch.embedding)
def torch_embedding(weight, input, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    # aten's embedding takes an already normalised padding_idx; -1 means none
    padding = padding_idx if isinstance(padding_idx, int) and padding_idx >= 0 else None
    return embedding(input, weight, padding, scale_grad_by_freq=scale_grad_by_freq,
                     sparse=sparse)


def _slice_positions(size, item, device):
    """Indices a slice selects along a dim of `size`, as an int64 iota."""
    start = clamp_index(item.start, size)
    stop = clamp_index(item.stop, size)
    start = 0 if start is None else start
    stop = size if stop is None else stop
    step = 1 if item.step is None else item.step
    if not known_true(sympy.Le(as_expr(start), as_expr(stop))):
        start = sym_min(start, stop)
    return ops.iota(slice_length(start, stop, step), start, step, torch.int64, device)


@register_decomposition(operator.setitem, T.__setitem__)
def setitem(a, index, value):
    """`a[index] = value` as the functional result (capture writes it back into `a`).

    Supports ints, slices and Ellipsis (an index grid per dim), or int tensor indices with
    whole-dim slices elsewhere (`a[:, idx] = v`).
    """
    items = _expand_ellipsis(index if isinstance(index, tuple) else (index,), ndim_of(a))
    if any(item is None for item in items):
        raise PrimError("setitem: expected no None in the index, found one")
    tensors = [item for item in items if is_tensor(item)]
    value_dtype_ok = convert(value, a.dtype) if is_tensor(value) else value
    if tensors:
        if any(isinstance(item, slice) and item != slice(None) for item in items) or any(
                not isinstance(item, slice) and not is_tensor(item) for item in items):
            raise PrimError("setitem: tensor indices mix only with whole-dim slices `:`")
        size_of = dict(enumerate(shape_of(a)))
        indices = tuple(None if isinstance(item, slice) else
                        _normalise_index_tensor(item, size_of[d]) for d, item in enumerate(items))
        present = broadcast_tensors(*(i for i in indices if i is not None))
        it = iter(present)
        indices = tuple(None if i is None else next(it) for i in indices)
        first = next(d for d, i in enumerate(indices) if i is not None)
        target = (*shape_of(a)[:first], *shape_of(present[0]),
                  *shape_of(a)[first + len(present):])
    else:
        grids, target = [], []
        for d, item in enumerate(items):
            size = shape_of(a)[d]
            if isinstance(item, slice):
                grids.append((_slice_positions(size, item, a.device), len(target)))
                target.append(shape_of(grids[-1][0])[0])
            else:
                position = item + size if isinstance(item, int) and item < 0 else item
                grids.append((ops.full((), position, torch.int64, a.device), None))
        target = tuple(target)
        indices = tuple(ops.broadcast_in_dim(g, target, () if axis is None else (axis,))
                        for g, axis in grids)
    values = broadcast_to(value_dtype_ok, target) if is_tensor(value_dtype_ok) else ops.full(
        target, value, a.dtype, a.device)
    return ops.index_put(a, indices, values, False)
