"""Order statistics and reductions over the sort extern and the reduction prims: kthvalue,
median, nanmedian, msort, aminmax, count_nonzero, nansum, nanmean, logcumsumexp.

Order statistics sort with the `sort` extern prim (inductor calls torch.sort, as torch.compile
calls its sort kernel: a documented extern, see prims/externs.py) and gather the element they
need, so values and indices are eager's for distinct values (ties: eager leaves the index
unspecified). Their VJPs are gather's (an index_put accumulate) through sort's values.

    torch.median(x f32[s0, s1], 1) -> sort(x, 1); gather at (s1 - 1) // 2 (NaNs sort last)
"""

from __future__ import annotations

import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import (
    convert,
    ndim_of,
    numel_of,
    reshape,
    restore_dims,
    shape_of,
    unsqueeze,
    wrap_dim,
    wrap_dims,
)
from prims.decompositions.registry import register_decomposition
from prims.promotion import opmath
from prims.sizes import as_expr, floordiv, require

T = torch.Tensor


def _pick(values, indices, position, d, keepdim):
    """values/indices at `position` (an int64 tensor of the reduced shape) along dim d."""
    where = unsqueeze(position, d)
    v = ops.gather(values, d, where)
    i = ops.gather(indices, d, where)
    if keepdim:
        return v, i
    return ops.squeeze(v, (d,)), ops.squeeze(i, (d,))


def _along(a, dim):
    """(a as at least 1-d, wrapped dim, was 0-d)."""
    if ndim_of(a) == 0:
        return reshape(a, (1,)), 0, True
    return a, wrap_dim(dim, ndim_of(a)), False


@register_decomposition(torch.kthvalue, T.kthvalue)
def kthvalue(a, k, dim=-1, keepdim=False):
    x, d, scalar = _along(a, dim)
    size = shape_of(x)[d]
    require(as_expr(k) >= 1, f"kthvalue: expected k >= 1, found {k}")
    require(as_expr(k) <= as_expr(size), f"kthvalue: expected k <= {size}, found {k}")
    values, indices = ops.sort(x, d, False)
    v = ops.slice(values, d, k - 1, k, 1)
    i = ops.slice(indices, d, k - 1, k, 1)
    if scalar:
        return reshape(v, ()), reshape(i, ())
    if keepdim:
        return v, i
    return ops.squeeze(v, (d,)), ops.squeeze(i, (d,))


def _median_position(values, d, ignore_nan):
    """The lower median's position in sorted `values` along d (NaNs sort last): with NaNs,
    median gives the first NaN; nanmedian the median of the others."""
    size = as_expr(shape_of(values)[d])
    nans = ops.sum(convert(ops.isnan(values), torch.int64), (d,)) if values.dtype.is_floating_point \
        else None
    if nans is None:
        reduced = tuple(s for k, s in enumerate(shape_of(values)) if k != d)
        return ops.full(reduced, floordiv(size - 1, 2), torch.int64, values.device)
    count = ops.sub(size, nans)
    if ignore_nan:
        return ops.maximum(ops.floor_divide(ops.sub(count, 1), 2), 0)
    middle = ops.full(tuple(shape_of(nans)), floordiv(size - 1, 2), torch.int64, values.device)
    return ops.where(ops.gt(nans, 0), count, middle)


def _median(a, dim, keepdim, ignore_nan):
    if dim is None:
        flat = reshape(a, (numel_of(a),))
        require(as_expr(numel_of(a)) > 0, "median: expected a non-empty tensor")
        values, indices = ops.sort(flat, 0, False)
        v, _ = _pick(values, indices, _median_position(values, 0, ignore_nan), 0, False)
        return v
    x, d, scalar = _along(a, dim)
    require(as_expr(shape_of(x)[d]) > 0, "median: expected a non-empty dim")
    values, indices = ops.sort(x, d, False)
    v, i = _pick(values, indices, _median_position(values, d, ignore_nan), d, keepdim)
    if scalar:
        return reshape(v, ()), reshape(i, ())
    return v, i


@register_decomposition(torch.median, T.median)
def median(a, dim=None, keepdim=False):
    return _median(a, dim, keepdim, ignore_nan=False)


@register_decomposition(torch.nanmedian, T.nanmedian)
def nanmedian(a, dim=None, keepdim=False):
    return _median(a, dim, keepdim, ignore_nan=True)


@register_decomposition(torch.msort, T.msort)
def msort(a):
    if ndim_of(a) == 0:
        return a
    return ops.sort(a, 0, False)[0]


@register_decomposition(torch.aminmax, T.aminmax)
def aminmax(a, *, dim=None, keepdim=False):
    dims = wrap_dims(dim, ndim_of(a))
    require(as_expr(numel_of(a)) > 0, "aminmax: expected a non-empty tensor")
    lo = ops.amin(a, dims) if dims else a
    hi = ops.amax(a, dims) if dims else a
    if keepdim and dims:
        lo, hi = restore_dims(lo, shape_of(a), dims), restore_dims(hi, shape_of(a), dims)
    elif keepdim and dim is None and ndim_of(a):
        lo, hi = reshape(lo, (1,) * ndim_of(a)), reshape(hi, (1,) * ndim_of(a))
    return lo, hi


@register_decomposition(torch.count_nonzero, T.count_nonzero)
def count_nonzero(a, dim=None):
    dims = wrap_dims(dim, ndim_of(a))
    nonzero = convert(ops.ne(a, False if a.dtype == torch.bool else 0), torch.int64)
    return ops.sum(nonzero, dims) if dims else nonzero


@register_decomposition(torch.nansum, T.nansum)
def nansum(a, dim=None, keepdim=False, *, dtype=None):
    from prims.decompositions.reductions import sum_

    if a.dtype.is_floating_point:
        a = ops.where(ops.isnan(a), 0.0, a)
    return sum_(a, dim, keepdim, dtype=dtype)


@register_decomposition(torch.nanmean, T.nanmean)
def nanmean(a, dim=None, keepdim=False, *, dtype=None):
    if not a.dtype.is_floating_point:
        raise PrimError(f"nanmean: expected a floating tensor, found {a.dtype}")
    x = convert(a, dtype or a.dtype)
    x = convert(x, opmath(x.dtype))
    dims = wrap_dims(dim, ndim_of(x))
    valid = ops.logical_not(ops.isnan(x))
    total = ops.sum(ops.where(valid, x, 0.0), dims) if dims else ops.where(valid, x, 0.0)
    count = ops.sum(convert(valid, x.dtype), dims) if dims else convert(valid, x.dtype)
    out = ops.div(total, count)
    if keepdim and dims:
        out = restore_dims(out, shape_of(x), dims)
    return convert(out, dtype or a.dtype)


@register_decomposition(torch.logcumsumexp, T.logcumsumexp)
def logcumsumexp(a, dim):
    """log(cumsum(exp(x - m))) + m with m the max along dim (no gradient through m: the result
    does not depend on it). Computed in float64 for f32 and narrower, so a prefix underflows only
    when all its elements are more than ~700 below the maximum of the dim."""
    if not a.dtype.is_floating_point:
        raise PrimError(f"logcumsumexp: expected a floating tensor, found {a.dtype}")
    if ndim_of(a) == 0:
        return a
    d = wrap_dim(dim, ndim_of(a))
    x = convert(a, torch.float64)
    m = ops.stop_gradient(ops.amax(x, (d,)))
    m = ops.where(ops.isinf(m), 0.0, m)
    m = ops.broadcast_in_dim(m, shape_of(x), tuple(k for k in range(ndim_of(x)) if k != d))
    out = ops.add(ops.log(ops.cumsum(ops.exp(ops.sub(x, m)), d)), m)
    return convert(out, a.dtype)



def _cumulative_extreme(a, dim, largest):
    """(values, indices) of the running max/min along dim: every prefix masked out of an
    (..., n, n) tensor (quadratic in the dim's size; eager's kernel is a linear scan). Ties
    pick the latest index, as eager's."""
    if ndim_of(a) == 0:
        return a, ops.full((), 0, torch.int64, a.device)
    d = wrap_dim(dim, ndim_of(a))
    n = shape_of(a)[d]
    last = ndim_of(a) - 1
    x = ops.permute(a, (*range(d), *range(d + 1, ndim_of(a)), d)) if d != last else a
    lead = shape_of(x)[:-1]
    square = (*lead, n, n)  # (..., i, j): element j of prefix i
    values = ops.broadcast_in_dim(x, square, (*range(len(lead)), len(lead) + 1))
    i = ops.broadcast_in_dim(ops.iota(n, 0, 1, torch.int64, a.device), square, (len(lead),))
    j = ops.broadcast_in_dim(ops.iota(n, 0, 1, torch.int64, a.device), square, (len(lead) + 1,))
    inside = ops.le(j, i)
    if a.dtype.is_floating_point:
        fill = float("-inf") if largest else float("inf")
    elif a.dtype == torch.bool:
        fill = not largest
    else:
        info = torch.iinfo(a.dtype)
        fill = info.min if largest else info.max
    masked = ops.where(inside, values, fill)
    reduce = ops.amax if largest else ops.amin
    best = reduce(masked, (len(lead) + 1,))
    hit = ops.logical_and(inside, ops.eq(values, ops.broadcast_in_dim(
        best, square, tuple(range(len(lead) + 1)))))
    if a.dtype.is_floating_point:  # a NaN wins from where it appears, as in eager
        nan_seen = ops.any(ops.logical_and(inside, ops.isnan(values)), (len(lead) + 1,))
        first_nan = ops.amin(ops.where(ops.logical_and(inside, ops.isnan(values)), j, n),
                             (len(lead) + 1,))
        best = ops.where(nan_seen, float("nan"), best)
    index = ops.amax(ops.where(hit, j, -1), (len(lead) + 1,))
    if a.dtype.is_floating_point:
        index = ops.where(nan_seen, first_nan, index)
    if d != last:
        back = [0] * ndim_of(a)
        order = (*range(d), *range(d + 1, ndim_of(a)), d)
        for pos, src in enumerate(order):
            back[src] = pos
        best, index = ops.permute(best, tuple(back)), ops.permute(index, tuple(back))
    return best, index


@register_decomposition(torch.cummax, T.cummax)
def cummax(a, dim):
    return _cumulative_extreme(a, dim, True)


@register_decomposition(torch.cummin, T.cummin)
def cummin(a, dim):
    return _cumulative_extreme(a, dim, False)
