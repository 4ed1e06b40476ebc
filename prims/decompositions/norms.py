"""Norms and normalisation layers: linalg.vector_norm, norm, linalg.norm / matrix_norm (vector,
Frobenius, 1/inf forms; 'nuc' and 2 through torch's singular values), dist, batch_norm (eval, or training without running statistics),
group_norm, instance_norm, local_response_norm.

Running statistics are updated in place by eager batch/instance norm in training mode; a
decomposition has no way to write them: capture rewrites those calls into this normalisation
plus a functional update of the statistics (capture/running_stats.py).

    torch.linalg.vector_norm(x, 3, dim=1) -> pow(sum(pow(abs(x), 3), (1,)), 1/3)
"""

from __future__ import annotations

import math

import sympy
import torch
import torch.nn.functional as F

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import (
    broadcast_to,
    convert,
    ndim_of,
    numel_of,
    restore_dims,
    shape_of,
    wrap_dims,
)
from prims.decompositions.registry import register_decomposition
from prims.promotion import opmath
from prims.sizes import as_expr, floordiv, require
from symbolic import ShapeValueError


def vector_norm(x, ord=2, dims=None, keepdim=False):
    """The `ord`-norm of float `x` over `dims` (None: every dim)."""
    dims = wrap_dims(dims, ndim_of(x)) or tuple(range(ndim_of(x)))
    ord = float(ord)
    a = ops.abs(x)
    if ord == math.inf:
        out = ops.amax(a, dims) if dims else a
    elif ord == -math.inf:
        out = ops.amin(a, dims) if dims else a
    elif ord == 0:  # a count: its gradient is zero (kept connected, as eager's is)
        nonzero = ops.add(convert(ops.ne(x, 0), x.dtype), ops.mul(x, 0.0))
        out = ops.sum(nonzero, dims) if dims else nonzero
    elif ord == 1:
        out = ops.sum(a, dims) if dims else a
    elif ord == 2:
        out = _root(ops.sum(ops.mul(x, x), dims), 2.0) if dims else a
    else:
        powered = _safe_pow(a, ord) if ord > 0 else ops.pow(a, ord)  # 0 ** -p is inf
        out = _root(ops.sum(powered, dims), ord) if dims else a
    return restore_dims(out, shape_of(x), dims) if keepdim and dims else out


def _safe_pow(a, ord):
    """|x| ** ord with a zero gradient at 0 (eager's subgradient; ord < 1 would give inf)."""
    zero = ops.eq(a, 0.0)
    return ops.where(zero, 0.0, ops.pow(ops.where(zero, 1.0, a), ord))


def _root(total, ord):
    """total ** (1 / ord), with a zero gradient where total is 0 (eager's subgradient)."""
    zero = ops.eq(total, 0.0)
    safe = ops.where(zero, 1.0, total)
    root = ops.sqrt(safe) if ord == 2 else ops.pow(safe, 1.0 / ord)
    return ops.where(zero, 0.0, root)


def _float_in(a, dtype=None):
    if dtype is not None:
        a = convert(a, dtype)
    if not a.dtype.is_floating_point:
        raise PrimError(f"norm: expected a floating input, found {a.dtype}")
    return convert(a, opmath(a.dtype)), a.dtype


@register_decomposition(torch.linalg.vector_norm)
def linalg_vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    a, result = _float_in(x, dtype)
    if isinstance(dim, int):
        dim = (dim,)
    if ord in (math.inf, -math.inf) and numel_is_zero(a):
        raise PrimError("vector_norm: inf norm of an empty tensor")
    return convert(vector_norm(a, ord, dim, keepdim), result)


def numel_is_zero(a) -> bool:
    n = as_expr(numel_of(a))
    return bool(n.is_number and n == 0)


def _matrix_norm(a, ord, dims, keepdim):
    d0, d1 = dims
    if ord == "fro":
        return vector_norm(a, 2, dims, keepdim)
    if ord in (math.inf, -math.inf, 1, -1):
        reduce_dim, over = (d1, d0) if ord in (math.inf, -math.inf) else (d0, d1)
        sums = ops.sum(ops.abs(a), (reduce_dim,))
        over_after = over if over < reduce_dim else over - 1
        pick = ops.amax if ord > 0 else ops.amin
        out = pick(sums, (over_after,))
        return restore_dims(out, shape_of(a), tuple(sorted(dims))) if keepdim else out
    if ord in ("nuc", 2, -2):
        return _singular_value_norm(a, ord, dims, keepdim)
    raise PrimError(f"matrix_norm: expected ord 'fro', 'nuc', inf, -inf, 1, -1, 2 or -2, found "
                    f"{ord!r}")


def _singular_value_norm(a, ord, dims, keepdim):
    """The sum ('nuc'), max (2) or min (-2) of the singular values over `dims`: torch's
    linalg.svdvals (an extern) on the matrices moved last, its VJP torch's."""
    from prims.decompositions.extern_ops import call_extern

    d0, d1 = dims
    order = (*(d for d in range(ndim_of(a)) if d not in dims), d0, d1)
    moved = a if order == tuple(range(ndim_of(a))) else ops.permute(a, order)
    values = call_extern("linalg.svdvals", moved)
    last = (ndim_of(values) - 1,)
    out = {"nuc": ops.sum, 2: ops.amax, -2: ops.amin}[ord](values, last)
    return restore_dims(out, shape_of(a), tuple(sorted(dims))) if keepdim else out


@register_decomposition(torch.linalg.matrix_norm)
def linalg_matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    a, result = _float_in(A, dtype)
    dims = tuple(d % ndim_of(a) for d in dim)
    return convert(_matrix_norm(a, ord, dims, keepdim), result)


@register_decomposition(torch.linalg.norm)
def linalg_norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    a, result = _float_in(A, dtype)
    if isinstance(dim, int):
        dim = (dim,)
    if ord is None:
        return convert(vector_norm(a, 2, dim, keepdim), result)
    if dim is None:
        if ndim_of(a) == 1:
            return convert(vector_norm(a, ord, None, keepdim), result)
        if ndim_of(a) != 2:
            raise PrimError(f"linalg.norm: ord={ord!r} without dim needs a 1-D or 2-D input, "
                            f"found {ndim_of(a)}-D")
        dim = (0, 1)
    if len(dim) == 1:
        return convert(vector_norm(a, ord, dim, keepdim), result)
    dims = tuple(d % ndim_of(a) for d in dim)
    return convert(_matrix_norm(a, ord, dims, keepdim), result)


@register_decomposition(torch.norm, torch.Tensor.norm)
def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    a, result = _float_in(input, dtype)
    if isinstance(dim, int):
        dim = (dim,)
    if p == "nuc":
        if dim is None and ndim_of(a) != 2:
            raise PrimError(f"norm: p='nuc' without dim needs a 2-D input, found "
                            f"{ndim_of(a)}-D")
        dims = (0, 1) if dim is None else tuple(d % ndim_of(a) for d in dim)
        return convert(_singular_value_norm(a, "nuc", dims, keepdim), result)
    if p == "fro" and (dim is None or len(dim) <= 2):
        return convert(vector_norm(a, 2, dim, keepdim), result)
    if isinstance(p, str):
        raise PrimError(f"norm: p={p!r} is not supported")
    return convert(vector_norm(a, p, dim, keepdim), result)


@register_decomposition(torch.dist)
def dist(input, other, p=2):
    from prims.decompositions.arithmetic import sub

    diff = sub(input, other)
    a, result = _float_in(diff)
    return convert(vector_norm(a, p, None, False), result)


# --------------------------------------------------------------------------- normalisation layers
def _normalize(x, dims, eps):
    """(x - mean) * rsqrt(var + eps) over `dims` (biased variance), in x's dtype."""
    var, mean = ops.var_mean(x, dims, 0)
    mean = restore_dims(mean, shape_of(x), dims)
    rstd = restore_dims(ops.rsqrt(ops.add(var, float(eps))), shape_of(x), dims)
    return ops.mul(ops.sub(x, broadcast_to(mean, shape_of(x))), broadcast_to(rstd, shape_of(x)))


def _affine(out, weight, bias, channel=1):
    if weight is not None:
        out = ops.mul(out, ops.broadcast_in_dim(convert(weight, out.dtype), shape_of(out),
                                                (channel,)))
    if bias is not None:
        out = ops.add(out, ops.broadcast_in_dim(convert(bias, out.dtype), shape_of(out),
                                                (channel,)))
    return out


def _require_more_than_one(x, dims, message):
    """Eager's ValueError for statistics over a single element (F.batch_norm / instance_norm
    check it in Python): a runtime assert raising ValueError, not a guard."""
    count = sympy.Integer(1)
    for d in dims:
        count = count * as_expr(shape_of(x)[d])
    require(sympy.Gt(count, 1), f"{message}, got input size {tuple(shape_of(x))}",
            ShapeValueError)


@register_decomposition(F.batch_norm)
def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    x = convert(input, opmath(input.dtype))
    channel = 1 if ndim_of(x) > 1 else 0
    if training:
        if running_mean is not None or running_var is not None:
            raise PrimError("batch_norm: training with running statistics updates them in "
                            "place; symc decomposes eval mode or training without them")
        dims = tuple(i for i in range(ndim_of(x)) if i != channel)
        batch = (0, *range(2, ndim_of(x)))   # eager's count: size[0] * prod(size[2:])
        _require_more_than_one(x, batch, "Expected more than 1 value per channel when training")
        out = _normalize(x, dims, eps)
    else:
        if running_mean is None or running_var is None:
            raise PrimError("batch_norm: eval mode needs running_mean and running_var")
        shape = shape_of(x)
        mean = ops.broadcast_in_dim(convert(running_mean, x.dtype), shape, (channel,))
        rstd = ops.broadcast_in_dim(ops.rsqrt(ops.add(convert(running_var, x.dtype),
                                                      float(eps))), shape, (channel,))
        out = ops.mul(ops.sub(x, mean), rstd)
    return convert(_affine(out, weight, bias, channel), input.dtype)


@register_decomposition(F.instance_norm)
def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    if not use_input_stats:
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum, eps)
    if running_mean is not None or running_var is not None:
        raise PrimError("instance_norm: use_input_stats with running statistics updates them in "
                        "place; symc decomposes it without them")
    x = convert(input, opmath(input.dtype))
    _require_more_than_one(x, tuple(range(2, ndim_of(x))),
                           "Expected more than 1 spatial element when training")
    out = _normalize(x, tuple(range(2, ndim_of(x))), eps)
    return convert(_affine(out, weight, bias), input.dtype)


@register_decomposition(F.group_norm)
def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    x = convert(input, opmath(input.dtype))
    shape = shape_of(x)
    n, c = shape[0], as_expr(shape[1])
    per = floordiv(c, num_groups)
    require(sympy.Eq(per * num_groups, c), f"group_norm: expected channels divisible by num_groups={num_groups}, found {c}")
    rest = 1
    for s in shape[2:]:
        rest = rest * s
    grouped = ops.reshape(x, (n, num_groups, per * rest))
    out = ops.reshape(_normalize(grouped, (2,), eps), shape)
    return convert(_affine(out, weight, bias), input.dtype)


@register_decomposition(F.local_response_norm)
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    if ndim_of(input) < 3:
        raise PrimError(f"local_response_norm: expected 3 or more dims, found {ndim_of(input)}")
    x = convert(input, opmath(input.dtype))
    sq = ops.mul(x, x)
    pads = [(0, 0)] * ndim_of(x)
    pads[1] = (size // 2, (size - 1) // 2)
    padded = ops.pad(sq, tuple(pads), 0.0)
    c = shape_of(x)[1]
    total = None
    for j in range(size):
        part = ops.slice(padded, 1, j, as_expr(c) + j, 1)
        total = part if total is None else ops.add(total, part)
    div = ops.pow(ops.add(ops.mul(ops.div(total, float(size)), float(alpha)), float(k)),
                  float(beta))
    return convert(ops.div(x, div), input.dtype)
