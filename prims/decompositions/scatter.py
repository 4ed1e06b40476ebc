"""Scatter-like writes as index_put / where: scatter (src or value, reduce None or 'add'),
scatter_reduce ('sum', 'mean'; 'amax', 'amin' and 'prod' call torch's kernel, an extern row),
index_add, index_copy, index_fill, masked_scatter, take, put,
index_put.

`scatter(a, dim, index, src)` writes src[i][j] at a[i][index[i][j]] (dim=1): index_put with an
iota for every other dim, so its VJP is index_put's (a gather for src, zeros where written for a).
Duplicate indices without accumulation write one of the values, as in eager, where the one
written is also unspecified.

    torch.index_add(a f32[s0, 4], 0, idx i64[s1], src f32[s1, 4]) -> index_put(a, (idx, iota),
                                                                                src, True)
"""

from __future__ import annotations

import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import (
    broadcast_to,
    convert,
    is_tensor,
    ndim_of,
    numel_of,
    reshape,
    shape_of,
    wrap_dim,
)
from prims.decompositions.registry import register_decomposition
from prims.sizes import as_expr, broadcast_shapes, is_one, require_same_shape, require_same_size

T = torch.Tensor


def _grid(shape, dim, index, device):
    """index_put's indices writing along `dim` at `index` (of `shape`), iotas elsewhere."""
    out = []
    for d in range(len(shape)):
        if d == dim:
            out.append(index)
        else:
            out.append(ops.broadcast_in_dim(ops.iota(shape[d], 0, 1, torch.int64, device),
                                            tuple(shape), (d,)))
    return tuple(out)


def _wrap_index(index, size):
    """Negative indices count from the end (eager's scatter/index ops accept them); int64."""
    index = convert(index, torch.int64)
    return ops.where(ops.lt(index, 0), ops.add(index, as_expr(size)), index)


def _src_part(src, shape):
    """src[:shape[0], :shape[1], ...] (scatter reads only the index's extent of src)."""
    out = src
    for d, (have, want) in enumerate(zip(shape_of(src), shape, strict=True)):
        if as_expr(have) != as_expr(want):
            out = ops.slice(out, d, 0, want, 1)
    return out


def _scatter_values(a, index, src_or_value):
    if is_tensor(src_or_value):
        return convert(_src_part(src_or_value, shape_of(index)), a.dtype)
    return ops.full(tuple(shape_of(index)), src_or_value, a.dtype, a.device)


def _scatter(a, dim, index, value, accumulate):
    if ndim_of(a) == 0:
        a1 = reshape(a, (1,))
        out = _scatter(a1, 0, reshape(index, (1,)), reshape(value, (1,)), accumulate)
        return reshape(out, ())
    d = wrap_dim(dim, ndim_of(a))
    idx = _wrap_index(index, shape_of(a)[d])
    return ops.index_put(a, _grid(shape_of(index), d, idx, a.device), value, accumulate)


@register_decomposition(torch.scatter, T.scatter)
def scatter(a, dim, index, src=None, *, value=None, reduce=None):
    source = value if src is None else src
    if source is None:
        raise PrimError("scatter: expected src or value")
    if reduce not in (None, "add"):
        raise PrimError(f"scatter: reduce={reduce!r} is not supported (None or 'add')")
    return _scatter(a, dim, index, _scatter_values(a, index, source), reduce == "add")


@register_decomposition(torch.scatter_reduce, T.scatter_reduce)
def scatter_reduce(a, dim, index, src, reduce, *, include_self=True):
    if reduce in ("amax", "amin", "prod"):   # no scatter-max/min/prod prim: torch's kernel
        from prims.decompositions.extern_ops import call_extern

        return call_extern("scatter_reduce", a, dim, index, src, reduce,
                           include_self=include_self)
    if reduce not in ("sum", "mean"):
        raise PrimError(f"scatter_reduce: expected reduce 'sum', 'mean', 'amax', 'amin' or "
                        f"'prod', found {reduce!r}")
    values = _scatter_values(a, index, src)
    hit = _scatter(ops.full(tuple(shape_of(a)), False, torch.bool, a.device), dim, index,
                   ops.full(tuple(shape_of(index)), True, torch.bool, a.device), False) \
        if not include_self or reduce == "mean" else None
    base = a if include_self else ops.where(hit, 0, a)
    total = _scatter(base, dim, index, values, True)
    if reduce == "sum":
        return total
    ones = ops.full(tuple(shape_of(index)), 1, a.dtype, a.device)
    count = _scatter(ops.full(tuple(shape_of(a)), 1 if include_self else 0, a.dtype, a.device),
                     dim, index, ones, True)
    count = ops.where(ops.eq(count, 0), 1, count)
    if a.dtype.is_floating_point:
        return ops.where(hit, ops.div(total, count), a)
    return ops.where(hit, ops.floor_divide(total, count), a)


def _index_grid(a, dim, index):
    """index_put's indices for index_add/index_copy: `index` along dim, iotas elsewhere."""
    d = wrap_dim(dim, ndim_of(a)) if ndim_of(a) else 0
    index = reshape(index, (numel_of(index),)) if ndim_of(index) == 0 else index
    shape = list(shape_of(a)) if ndim_of(a) else [1]
    shape[d] = shape_of(index)[0]
    idx = ops.broadcast_in_dim(_wrap_index(index, (shape_of(a) or (1,))[d]), tuple(shape), (d,))
    return _grid(shape, d, idx, a.device), tuple(shape)


def _index_write(a, dim, index, source, accumulate):
    flat = ndim_of(a) == 0
    base = reshape(a, (1,)) if flat else a
    indices, shape = _index_grid(base, dim, index)
    values = reshape(convert(source, a.dtype), shape)
    out = ops.index_put(base, indices, values, accumulate)
    return reshape(out, ()) if flat else out


@register_decomposition(torch.index_add, T.index_add)
def index_add(a, dim, index, source, *, alpha=1):
    if alpha != 1:
        source = ops.mul(source, alpha)
    return _index_write(a, dim, index, source, True)


@register_decomposition(torch.index_copy, T.index_copy)
def index_copy(a, dim, index, source):
    return _index_write(a, dim, index, source, False)


@register_decomposition(torch.index_fill, T.index_fill)
def index_fill(a, dim, index, value):
    if ndim_of(a) == 0:
        mask = ops.full((), True, torch.bool, a.device)
    else:
        d = wrap_dim(dim, ndim_of(a))
        size = shape_of(a)[d]
        flat = reshape(index, (numel_of(index),))
        flat = _wrap_index(flat, size)
        p = ops.iota(size, 0, 1, torch.int64, a.device)
        n = shape_of(flat)[0]
        hits = ops.eq(ops.broadcast_in_dim(p, (size, n), (0,)),
                      ops.broadcast_in_dim(flat, (size, n), (1,)))
        mask = ops.broadcast_in_dim(ops.any(hits, (1,)), shape_of(a), (d,))
    if is_tensor(value):
        if ndim_of(value) != 0:
            raise PrimError("index_fill: expected a 0-dim value tensor")
        value = ops.broadcast_in_dim(convert(value, a.dtype), shape_of(a), ())
    return ops.where(mask, value, a)


@register_decomposition(torch.masked_scatter, T.masked_scatter)
def masked_scatter(a, mask, source):
    if mask.dtype != torch.bool:
        raise PrimError(f"masked_scatter: expected a bool mask, found {mask.dtype}")
    shape = broadcast_shapes(shape_of(a), shape_of(mask))
    a, mask = broadcast_to(a, shape), broadcast_to(mask, shape)
    n = numel_of(a)
    flat_mask = reshape(mask, (n,))
    position = ops.sub(ops.cumsum(convert(flat_mask, torch.int64), 0), 1)
    position = ops.maximum(position, 0)
    src = reshape(convert(source, a.dtype), (numel_of(source),))
    picked = reshape(ops.index_select(src, 0, position), shape)
    return ops.where(mask, picked, a)


@register_decomposition(torch.take, T.take)
def take(a, index):
    n = numel_of(a)
    flat = reshape(a, (n,))
    idx = _wrap_index(reshape(index, (numel_of(index),)), n)
    return reshape(ops.index_select(flat, 0, idx), shape_of(index))


@register_decomposition(torch.put, T.put)
def put(a, index, source, accumulate=False):
    n = numel_of(a)
    flat = reshape(a, (n,))
    idx = _wrap_index(reshape(index, (numel_of(index),)), n)
    require_same_size(numel_of(source), numel_of(index), "put: expected as many source "
                      "elements as indices")
    values = reshape(convert(source, a.dtype), shape_of(idx))
    return reshape(ops.index_put(flat, (idx,), values, bool(accumulate)), shape_of(a))


def _put_at_mask(a, mask, values, accumulate):
    """`a[mask] = values` (or `+=`) with one value per selected row broadcast to every row
    (values of shape `a.shape[mask.ndim:]`, or with a leading 1): a `where`, whatever the
    number of selected rows. Values with one row per selected row depend on that count (data-
    dependent): refused."""
    k = ndim_of(mask)
    rest = shape_of(a)[k:]
    require_same_shape(shape_of(mask), shape_of(a)[:k], "index_put (bool mask vs indexed dims)")
    vals = convert(values, a.dtype)
    if ndim_of(vals) == len(rest) + 1 and is_one(shape_of(vals)[0]):
        vals = reshape(vals, shape_of(vals)[1:])
    if ndim_of(vals) > len(rest):
        raise PrimError(f"index_put: values {tuple(shape_of(values))} give one row per selected "
                        "element of the bool mask (a data-dependent count)")
    vals = broadcast_to(vals, shape_of(a))
    where = ops.broadcast_in_dim(mask, shape_of(a), tuple(range(k)))
    if accumulate:
        return ops.add(a, ops.where(where, vals, 0.0 if a.dtype.is_floating_point else 0))
    return ops.where(where, vals, a)


@register_decomposition(torch.index_put, T.index_put)
def index_put(a, indices, values, accumulate=False):
    indices = list(indices)
    if len(indices) == 1 and is_tensor(indices[0]) and indices[0].dtype == torch.bool:
        return _put_at_mask(a, indices[0], values, accumulate)
    if any(i is None or i.dtype == torch.bool for i in indices):
        raise PrimError("index_put: expected int64 index tensors or one bool mask, found "
                        f"{[None if i is None else i.dtype for i in indices]}")
    common = broadcast_shapes(*(shape_of(i) for i in indices))
    indices = [broadcast_to(_wrap_index(i, shape_of(a)[d]), common)
               for d, i in enumerate(indices)]
    target = (*common, *shape_of(a)[len(indices):])
    vals = broadcast_to(convert(values, a.dtype), target)
    if len(indices) < ndim_of(a):  # index the remaining dims with iotas
        rest = list(range(len(indices), ndim_of(a)))
        full_indices = [ops.broadcast_in_dim(i, target, tuple(range(len(common))))
                        for i in indices]
        for d in rest:
            full_indices.append(ops.broadcast_in_dim(
                ops.iota(shape_of(a)[d], 0, 1, torch.int64, a.device), target,
                (len(common) + d - len(indices),)))
        indices = full_indices
    return ops.index_put(a, tuple(indices), vals, bool(accumulate))



def _clamped_indices(a, indices):
    """Indices clamped into range (the unsafe ops promise nothing where the mask is false)."""
    out = []
    for d, index in enumerate(indices):
        if index is None:
            out.append(slice(None))
            continue
        size = as_expr(shape_of(a)[d])
        out.append(ops.minimum(ops.maximum(convert(index, torch.int64), -size), size - 1))
    return tuple(out)


@register_decomposition(torch._unsafe_masked_index)
def unsafe_masked_index(a, mask, indices, fill):
    from prims.decompositions.indexing import tensor_getitem

    picked = tensor_getitem(a, _clamped_indices(a, indices))
    shape = broadcast_shapes(shape_of(picked), shape_of(mask))
    fill = convert(fill, a.dtype) if is_tensor(fill) else fill
    return ops.where(broadcast_to(mask, shape), broadcast_to(picked, shape),
                     broadcast_to(fill, shape) if is_tensor(fill) else fill)


@register_decomposition(torch._unsafe_masked_index_put_accumulate)
def unsafe_masked_index_put_accumulate(a, mask, indices, values):
    if any(i is None for i in indices):
        raise PrimError("_unsafe_masked_index_put_accumulate: None indices are not supported")
    clamped = _clamped_indices(a, indices)
    common = broadcast_shapes(*(shape_of(i) for i in clamped))
    target = (*common, *shape_of(a)[len(clamped):])
    vals = broadcast_to(convert(values, a.dtype), target)
    vals = ops.where(broadcast_to(mask, target), vals, 0)
    return index_put(a, clamped, vals, True)
