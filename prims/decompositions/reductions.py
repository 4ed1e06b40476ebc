"""Reductions and scans: sum, mean, prod, max/min, argmax, any/all, var/std, softmax,
log_softmax, logsumexp, cumsum/cumprod, topk, sort.

Low-precision floats accumulate in f32 and are cast back; ints and bools sum in int64 (torch's
rules). `keepdim=True` re-inserts the reduced dims as size 1.

    x.mean(-1, keepdim=True) on f32[s0, s1] -> div(sum(x, (1,)), s1) -> f32[s0, 1]
"""

from __future__ import annotations

import math

import sympy
import torch
import torch.nn.functional as F

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import (
    convert,
    is_tensor,
    ndim_of,
    numel_of,
    pointwise,
    reshape,
    restore_dims,
    shape_of,
    wrap_dim,
    wrap_dims,
)
from prims.decompositions.registry import register_decomposition
from prims.promotion import opmath
from prims.sizes import as_expr, known_true, prod

T = torch.Tensor


def _finish(out, a, dims, keepdim):
    return restore_dims(out, shape_of(a), dims) if keepdim and dims else out


def _accumulate_dtype(a, dtype):
    if dtype is not None:
        return dtype, dtype
    if a.dtype == torch.bool or not (a.dtype.is_floating_point or a.dtype.is_complex):
        return torch.int64, torch.int64
    return opmath(a.dtype), a.dtype


def _reduce(prim, a, dim, keepdim, dtype=None):
    compute, result = _accumulate_dtype(a, dtype)
    dims = wrap_dims(dim, ndim_of(a))
    out = prim(convert(a, compute), dims) if dims else convert(a, compute)
    return convert(_finish(out, a, dims, keepdim), result)


@register_decomposition(torch.sum, T.sum)
def sum_(a, dim=None, keepdim=False, *, dtype=None):
    return _reduce(ops.sum, a, dim, keepdim, dtype)


@register_decomposition(torch.prod, T.prod)
def prod_(a, dim=None, keepdim=False, *, dtype=None):
    return _reduce(ops.prod, a, dim, keepdim, dtype)


@register_decomposition(torch.mean, T.mean)
def mean(a, dim=None, keepdim=False, *, dtype=None):
    dtype = dtype or a.dtype
    if not (dtype.is_floating_point or dtype.is_complex):
        raise PrimError(f"mean: expected a floating dtype, found {dtype}")
    dims = wrap_dims(dim, ndim_of(a))
    total = _reduce(ops.sum, convert(a, opmath(dtype)), dim, keepdim)
    count = prod(shape_of(a)[d] for d in dims)
    return convert(ops.div(total, count), dtype)


def _extreme(prim, arg_prim, a, dim, keepdim):
    if dim is None:
        _require_nonempty(prim, a, None)
        return _reduce_keep_dtype(prim, a, None, False)
    d = wrap_dim(dim, ndim_of(a))
    _require_nonempty(prim, a, d)
    values = _reduce_keep_dtype(prim, a, dim, keepdim)
    indices = _arg(arg_prim, a, d, keepdim)
    return values, indices


def _require_nonempty(prim, a, dim):
    """max/min/argmax over no elements have no value: eager raises, so the decomposition refuses
    (a size-0 dim is always static, so this never guards; the op then runs eagerly and raises
    eager's own error). A `dim` of None means the whole tensor."""
    dims = tuple(range(ndim_of(a))) if dim is None else wrap_dims(dim, ndim_of(a))
    for d in dims:
        if known_true(sympy.Eq(as_expr(shape_of(a)[d]), 0)):
            raise PrimError(f"{prim.name}: expected a non-empty reduction, found size 0 in dim "
                            f"{d} of {tuple(shape_of(a))} (eager raises)")


def _reduce_keep_dtype(prim, a, dim, keepdim):
    dims = wrap_dims(dim, ndim_of(a))
    out = prim(a, dims) if dims else a
    return _finish(out, a, dims, keepdim)


def _arg(prim, a, dim, keepdim):
    _require_nonempty(prim, a, dim)
    if dim is None:
        flat = reshape(a, (numel_of(a),))
        out = prim(flat, 0)
        return reshape(out, (1,) * ndim_of(a)) if keepdim else out
    if ndim_of(a) == 0:
        return ops.full((), 0, torch.int64, a.device)
    d = wrap_dim(dim, ndim_of(a))
    return _finish(prim(a, d), a, (d,), keepdim)


@register_decomposition(torch.max, T.max)
def max_(a, dim=None, keepdim=False):
    if is_tensor(dim):
        return pointwise(ops.maximum, a, dim)
    return _extreme(ops.amax, ops.argmax, a, dim, keepdim)


@register_decomposition(torch.min, T.min)
def min_(a, dim=None, keepdim=False):
    if is_tensor(dim):
        return pointwise(ops.minimum, a, dim)
    return _extreme(ops.amin, ops.argmin, a, dim, keepdim)


@register_decomposition(torch.amax, T.amax)
def amax(a, dim=(), keepdim=False):
    _require_nonempty(ops.amax, a, None if dim == () else dim)
    return _reduce_keep_dtype(ops.amax, a, None if dim == () else dim, keepdim)


@register_decomposition(torch.amin, T.amin)
def amin(a, dim=(), keepdim=False):
    _require_nonempty(ops.amin, a, None if dim == () else dim)
    return _reduce_keep_dtype(ops.amin, a, None if dim == () else dim, keepdim)


@register_decomposition(torch.argmax, T.argmax)
def argmax(a, dim=None, keepdim=False):
    return _arg(ops.argmax, a, dim, keepdim)


@register_decomposition(torch.argmin, T.argmin)
def argmin(a, dim=None, keepdim=False):
    return _arg(ops.argmin, a, dim, keepdim)


@register_decomposition(torch.any, T.any)
def any_(a, dim=None, keepdim=False):
    return _logical_reduce(ops.any, a, dim, keepdim)


@register_decomposition(torch.all, T.all)
def all_(a, dim=None, keepdim=False):
    return _logical_reduce(ops.all, a, dim, keepdim)


def _logical_reduce(prim, a, dim, keepdim):
    """any/all give bool (uint8 for uint8 input), also when no dim is reduced (a 0-dim input,
    `dim=()`): then each element is tested against zero."""
    dims = wrap_dims(dim, ndim_of(a))
    out = _finish(prim(a, dims), a, dims, keepdim) if dims else ops.ne(a, 0)
    return convert(out, torch.uint8) if a.dtype == torch.uint8 else out


def _correction(unbiased, correction):
    if correction is not None:
        return correction
    return 1 if unbiased is None or unbiased else 0


@register_decomposition(torch.var_mean)
def var_mean(a, dim=None, unbiased=None, keepdim=False, *, correction=None):
    if isinstance(dim, bool):  # var_mean(x, unbiased)
        dim, unbiased = None, dim
    dims = wrap_dims(dim, ndim_of(a))
    compute = opmath(a.dtype) if a.dtype.is_floating_point else torch.get_default_dtype()
    var, mean_ = ops.var_mean(convert(a, compute), dims, _correction(unbiased, correction))
    if known_true(sympy.Eq(prod(shape_of(a)[d] for d in dims), 0)):  # eager: NaN, not -0
        nan = ops.full(shape_of(var), math.nan, compute, a.device)
        var, mean_ = ops.add(ops.mul(var, 0.0), nan), ops.add(ops.mul(mean_, 0.0), nan)
    result = a.dtype if a.dtype.is_floating_point else compute
    return (convert(_finish(var, a, dims, keepdim), result),
            convert(_finish(mean_, a, dims, keepdim), result))


@register_decomposition(torch.var, T.var)
def var(a, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return var_mean(a, dim, unbiased, keepdim, correction=correction)[0]


@register_decomposition(torch.std, T.std)
def std(a, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _sqrt_of_var(var(a, dim, unbiased, keepdim, correction=correction))


@register_decomposition(torch.std_mean)
def std_mean(a, dim=None, unbiased=None, keepdim=False, *, correction=None):
    v, m = var_mean(a, dim, unbiased, keepdim, correction=correction)
    return _sqrt_of_var(v), m


def _sqrt_of_var(v):
    """sqrt(v) whose gradient is 0 where v == 0 (eager's std backward), not 0 * inf = NaN: the
    sqrt runs on 1 there, so neither branch of the where differentiates through sqrt(0)."""
    x = convert(v, opmath(v.dtype))
    is_zero = ops.eq(x, 0.0)
    root = ops.sqrt(ops.where(is_zero, 1.0, x))
    return convert(ops.where(is_zero, 0.0, root), v.dtype)


def _float_input(a, dtype):
    """The dtype softmax-like ops compute in and return."""
    result = dtype or (a.dtype if a.dtype.is_floating_point else torch.get_default_dtype())
    return opmath(result), result


@register_decomposition(torch.softmax, T.softmax, F.softmax)
def softmax(a, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        raise PrimError("softmax: expected a dim, found None")
    compute, result = _float_input(a, dtype)
    x = convert(a, compute)
    if ndim_of(x) == 0:
        return convert(ops.div(x, x), result)
    d = wrap_dim(dim, ndim_of(x))
    # softmax does not depend on the shift: no gradient through the max (no amax VJP pass)
    m = ops.broadcast_in_dim(ops.stop_gradient(ops.amax(x, (d,))), shape_of(x),
                             tuple(i for i in range(ndim_of(x)) if i != d))
    e = ops.exp(ops.sub(x, m))
    s = ops.broadcast_in_dim(ops.sum(e, (d,)), shape_of(x),
                             tuple(i for i in range(ndim_of(x)) if i != d))
    return convert(ops.div(e, s), result)


def safe_row_max(x, dims):
    """The shift of a log-sum-exp over `dims`: the max, 0 where it is infinite (a row of -inf
    then stays -inf instead of nan). The result does not depend on the shift, so no gradient
    flows through it (stop_gradient: no amax VJP, an extra pass over the row, in backward)."""
    m = ops.stop_gradient(ops.amax(x, dims))
    return ops.where(ops.isinf(m), 0.0, m)


def _log_softmax(x, d):
    kept = tuple(i for i in range(ndim_of(x)) if i != d)
    m = safe_row_max(x, (d,))
    shifted = ops.sub(x, ops.broadcast_in_dim(m, shape_of(x), kept))
    lse = ops.log(ops.sum(ops.exp(shifted), (d,)))
    return ops.sub(shifted, ops.broadcast_in_dim(lse, shape_of(x), kept))


@register_decomposition(torch.log_softmax, T.log_softmax, F.log_softmax)
def log_softmax(a, dim=None, _stacklevel=3, dtype=None):
    if dim is None:
        raise PrimError("log_softmax: expected a dim, found None")
    compute, result = _float_input(a, dtype)
    x = convert(a, compute)
    if ndim_of(x) == 0:
        return convert(ops.sub(x, x), result)
    return convert(_log_softmax(x, wrap_dim(dim, ndim_of(x))), result)


@register_decomposition(torch.logsumexp, T.logsumexp)
def logsumexp(a, dim, keepdim=False):
    compute, result = _float_input(a, None)
    x = convert(a, compute)
    dims = wrap_dims(dim, ndim_of(x))
    if not dims:
        return convert(x, result)
    kept = tuple(i for i in range(ndim_of(x)) if i not in dims)
    m = safe_row_max(x, dims)
    shifted = ops.sub(x, ops.broadcast_in_dim(m, shape_of(x), kept))
    out = ops.add(ops.log(ops.sum(ops.exp(shifted), dims)), m)
    return convert(_finish(out, x, dims, keepdim), result)


def _scan(prim, a, dim, dtype):
    compute, result = _accumulate_dtype(a, dtype)
    if ndim_of(a) == 0:
        return convert(a, result)
    out = prim(convert(a, compute), wrap_dim(dim, ndim_of(a)))
    return convert(out, result)


@register_decomposition(torch.cumsum, T.cumsum)
def cumsum(a, dim, *, dtype=None):
    return _scan(ops.cumsum, a, dim, dtype)


@register_decomposition(torch.cumprod, T.cumprod)
def cumprod(a, dim, *, dtype=None):
    return _scan(ops.cumprod, a, dim, dtype)


@register_decomposition(torch.topk, T.topk)
def topk(a, k, dim=-1, largest=True, sorted=True):
    if not sorted:
        raise PrimError("topk: expected sorted=True, found False (order would be unspecified)")
    return ops.topk(a, k, wrap_dim(dim, ndim_of(a)), bool(largest))


@register_decomposition(torch.sort, T.sort)
def sort(a, dim=-1, descending=False, stable=False):
    return ops.sort(a, wrap_dim(dim, ndim_of(a)), bool(descending))


@register_decomposition(torch.argsort, T.argsort)
def argsort(a, dim=-1, descending=False, stable=False):
    return sort(a, dim, descending)[1]
