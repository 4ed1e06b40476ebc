"""Assorted torch functions written with prims: pixel/channel shuffles, bilinear, trapezoid
rules, cov/corrcoef, linspace/logspace, isclose/isin, sum_to_size, renorm, Tensor.unfold,
bucketize/searchsorted (comparison counts), angle, and the aten forms of layer/group norm and
softmax that return their statistics.

    torch.bucketize(x f32[s0], b f32[s1]) -> sum(lt(b[None, :], x[:, None]), (1,))
"""

from __future__ import annotations

import math

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
    pointwise,
    reshape,
    restore_dims,
    shape_of,
    wrap_dim,
)
from prims.decompositions.registry import register_decomposition
from prims.promotion import Promotion, opmath
from prims.sizes import as_expr, floordiv, guard_true

T = torch.Tensor


# --------------------------------------------------------------------------- shuffles, bilinear
@register_decomposition(F.pixel_shuffle, torch.pixel_shuffle)
def pixel_shuffle(input, upscale_factor):
    r = upscale_factor
    *lead, c, h, w = shape_of(input)
    oc = floordiv(as_expr(c), r * r)
    x = reshape(input, (*lead, oc, r, r, h, w))
    n = len(lead)
    x = ops.permute(x, (*range(n), n, n + 3, n + 1, n + 4, n + 2))
    return reshape(x, (*lead, oc, as_expr(h) * r, as_expr(w) * r))


@register_decomposition(F.pixel_unshuffle, torch.pixel_unshuffle)
def pixel_unshuffle(input, downscale_factor):
    r = downscale_factor
    *lead, c, h, w = shape_of(input)
    oh, ow = floordiv(as_expr(h), r), floordiv(as_expr(w), r)
    x = reshape(input, (*lead, c, oh, r, ow, r))
    n = len(lead)
    x = ops.permute(x, (*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return reshape(x, (*lead, as_expr(c) * r * r, oh, ow))


@register_decomposition(F.channel_shuffle, torch.channel_shuffle, F.native_channel_shuffle)
def channel_shuffle(input, groups):
    n, c, *rest = shape_of(input)
    per = floordiv(as_expr(c), groups)
    x = reshape(input, (n, groups, per, *rest))
    x = ops.permute(x, (0, 2, 1, *range(3, 3 + len(rest))))
    return reshape(x, (n, c, *rest))


@register_decomposition(F.bilinear, torch.bilinear)
def bilinear(input1, input2, weight, bias=None):
    from prims.decompositions.linalg import matmul

    lead = shape_of(input1)[:-1]
    o, i, j = shape_of(weight)
    batch = 1
    for s in lead:
        batch = batch * as_expr(s)
    x1 = reshape(input1, (batch, i))
    x2 = reshape(input2, (batch, j))
    w = reshape(ops.permute(weight, (1, 0, 2)), (i, as_expr(o) * as_expr(j)))
    t = reshape(matmul(x1, w), (batch, o, j))
    out = ops.sum(ops.mul(t, ops.broadcast_in_dim(x2, (batch, o, j), (0, 2))), (2,))
    if bias is not None:
        out = ops.add(out, ops.broadcast_in_dim(bias, (batch, o), (1,)))
    return reshape(out, (*lead, o))


# --------------------------------------------------------------------------- trapezoid rules
def _trapezoid_parts(y, x, dx, dim):
    d = wrap_dim(dim, ndim_of(y))
    size = shape_of(y)[d]
    left = ops.slice(y, d, 0, as_expr(size) - 1, 1)
    right = ops.slice(y, d, 1, size, 1)
    avg = pointwise(ops.div, pointwise(ops.add, left, right), 2.0, kind=Promotion.INT_TO_FLOAT)
    if x is None:
        return pointwise(ops.mul, avg, 1.0 if dx is None else dx), d
    if ndim_of(x) == 1:
        step = ops.sub(ops.slice(x, 0, 1, shape_of(x)[0], 1),
                       ops.slice(x, 0, 0, as_expr(shape_of(x)[0]) - 1, 1))
        step = ops.broadcast_in_dim(step, shape_of(avg), (d,))
    else:
        step = pointwise(ops.sub, ops.slice(x, d, 1, shape_of(x)[d], 1),
                         ops.slice(x, d, 0, as_expr(shape_of(x)[d]) - 1, 1))
    return pointwise(ops.mul, avg, step), d


@register_decomposition(torch.trapezoid)
def trapezoid(y, x=None, *, dx=None, dim=-1):
    if x is not None and not is_tensor(x):
        x, dx = None, x
    parts, d = _trapezoid_parts(y, x, dx, dim)
    return ops.sum(parts, (d,))


@register_decomposition(torch.trapz)
def trapz(y, x=None, *, dx=None, dim=-1):
    return trapezoid(y, x, dx=dx, dim=dim)


@register_decomposition(torch.cumulative_trapezoid)
def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    if x is not None and not is_tensor(x):
        x, dx = None, x
    parts, d = _trapezoid_parts(y, x, dx, dim)
    return ops.cumsum(parts, d)


# --------------------------------------------------------------------------- statistics
@register_decomposition(torch.cov, T.cov)
def cov(input, *, correction=1, fweights=None, aweights=None):
    from prims.decompositions.linalg import matmul

    if ndim_of(input) > 2:
        raise PrimError(f"cov: expected a 1-D or 2-D input, found {ndim_of(input)}-D")
    x = reshape(input, (1, shape_of(input)[0])) if ndim_of(input) < 2 else input
    if ndim_of(input) == 0:
        x = reshape(input, (1, 1))
    dtype = x.dtype if x.dtype.is_floating_point else torch.get_default_dtype()
    x = convert(x, dtype)
    n = shape_of(x)[1]
    w = None
    if fweights is not None:
        w = convert(fweights, dtype)
    if aweights is not None:
        w = convert(aweights, dtype) if w is None else ops.mul(w, convert(aweights, dtype))
    if w is None:
        avg = ops.div(ops.sum(x, (1,)), n)
        norm = as_expr(n) - correction
        norm = ops.maximum(ops.full((), norm, dtype, x.device), 0.0)
    else:
        w_sum = ops.sum(w, (0,))
        avg = pointwise(ops.div, ops.sum(ops.mul(x, ops.broadcast_in_dim(w, shape_of(x), (1,))),
                                         (1,)), w_sum)
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = ops.sub(w_sum, float(correction))
        else:
            extra = ops.div(ops.sum(ops.mul(w, convert(aweights, dtype)), (0,)), w_sum)
            norm = ops.sub(w_sum, ops.mul(extra, float(correction)))
        norm = ops.maximum(norm, 0.0)
    xm = ops.sub(x, ops.broadcast_in_dim(avg, shape_of(x), (0,)))
    xw = xm if w is None else ops.mul(xm, ops.broadcast_in_dim(w, shape_of(x), (1,)))
    c = matmul(xm, ops.permute(xw, (1, 0)))
    c = ops.div(c, ops.broadcast_in_dim(norm, shape_of(c), ()))
    if ndim_of(input) < 2 or guard_true(sympy.Eq(as_expr(shape_of(x)[0]), 1), "cov"):
        return reshape(c, ())  # one variable: eager squeezes the 1x1 matrix
    return c


@register_decomposition(torch.corrcoef, T.corrcoef)
def corrcoef(input):
    c = cov(input)
    if ndim_of(c) == 0:
        return ops.div(c, c)
    from prims.decompositions.diagonal import diagonal

    d = diagonal(c)
    stddev = ops.sqrt(d)
    n = shape_of(c)[0]
    c = ops.div(c, ops.broadcast_in_dim(stddev, (n, n), (0,)))
    c = ops.div(c, ops.broadcast_in_dim(stddev, (n, n), (1,)))
    return ops.minimum(ops.maximum(c, -1.0), 1.0)


# --------------------------------------------------------------------------- creation
def _scalar(value, dtype, device):
    if is_tensor(value):
        if ndim_of(value) != 0:
            raise PrimError("linspace: expected 0-dim start/end tensors")
        return convert(value, dtype)
    return ops.full((), value, dtype, device)


@register_decomposition(torch.linspace)
def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             pin_memory=False, requires_grad=False):
    if not isinstance(steps, int) or steps < 0:
        raise PrimError(f"linspace: expected a non-negative int steps, found {steps!r}")
    dtype = dtype or torch.get_default_dtype()
    if not dtype.is_floating_point:
        raise PrimError(f"linspace: integer dtypes are not supported, found {dtype}")
    device = torch.device(device or (start.device if is_tensor(start) else "cpu"))
    compute = opmath(dtype)
    if steps == 0:
        return ops.full((0,), 0.0, dtype, device)
    a, b = _scalar(start, compute, device), _scalar(end, compute, device)
    if steps == 1:
        return convert(reshape(a, (1,)), dtype)
    step = ops.div(ops.sub(b, a), float(steps - 1))
    i = convert(ops.iota(steps, 0, 1, torch.int64, device), compute)
    shape = (steps,)
    a_, b_, step_ = (ops.broadcast_in_dim(v, shape, ()) for v in (a, b, step))
    low = ops.add(a_, ops.mul(step_, i))
    high = ops.sub(b_, ops.mul(step_, ops.sub(float(steps - 1), i)))
    out = ops.where(ops.lt(i, float(steps // 2)), low, high)
    return convert(out, dtype)


@register_decomposition(torch.logspace)
def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             pin_memory=False, requires_grad=False):
    dtype = dtype or torch.get_default_dtype()
    exps = linspace(start, end, steps, dtype=opmath(dtype), device=device)
    return convert(ops.pow(ops.broadcast_in_dim(ops.full((), float(base), exps.dtype,
                                                         exps.device), shape_of(exps), ()),
                           exps), dtype)


@register_decomposition(torch.scalar_tensor)
def scalar_tensor(s, *, dtype=None, layout=None, device=None, pin_memory=False,
                  requires_grad=False):
    return ops.full((), s, dtype or torch.get_default_dtype(), torch.device(device or "cpu"))


@register_decomposition(T.new_empty_strided)
def new_empty_strided(a, size, stride, *, dtype=None, layout=None, device=None,
                      pin_memory=False, requires_grad=False):
    return ops.full(tuple(size), 0, dtype or a.dtype, torch.device(device or a.device))


@register_decomposition(torch.empty_permuted)
def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   pin_memory=False, requires_grad=False):
    return ops.full(tuple(size), 0, dtype or torch.get_default_dtype(),
                    torch.device(device or "cpu"))


# --------------------------------------------------------------------------- comparisons
@register_decomposition(torch.isclose, T.isclose)
def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = broadcast_tensors(a, b)
    if a.dtype != b.dtype:
        raise PrimError(f"isclose: expected one dtype, found {a.dtype} and {b.dtype}")
    if a.dtype == torch.bool:
        return ops.eq(a, b)
    if not a.dtype.is_floating_point:
        a, b = convert(a, torch.float64), convert(b, torch.float64)
    equal = ops.eq(a, b)
    if equal_nan:
        equal = ops.logical_or(equal, ops.logical_and(ops.isnan(a), ops.isnan(b)))
    diff = ops.abs(ops.sub(a, b))
    bound = ops.add(ops.mul(ops.abs(b), float(rtol)), float(atol))
    finite = ops.logical_not(ops.logical_or(ops.isinf(a), ops.isinf(b)))
    close = ops.logical_and(ops.le(diff, bound), finite)
    return ops.logical_or(equal, close)


@register_decomposition(torch.isin)
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    if not is_tensor(elements):
        elements = ops.full((), elements, test_elements.dtype, test_elements.device)
    if not is_tensor(test_elements):
        test_elements = ops.full((1,), test_elements, elements.dtype, elements.device)
    tests = reshape(test_elements, (numel_of(test_elements),))
    x, t = elements, tests
    dtype = torch.promote_types(x.dtype, t.dtype)
    x, t = convert(x, dtype), convert(t, dtype)
    m = shape_of(t)[0]
    shape = (*shape_of(x), m)
    hits = ops.eq(ops.broadcast_in_dim(x, shape, tuple(range(ndim_of(x)))),
                  ops.broadcast_in_dim(t, shape, (ndim_of(x),)))
    found = ops.any(hits, (ndim_of(x),))
    return ops.logical_not(found) if invert else found


def _count_before(sequence, values, right):
    """For each value, how many elements of the last dim of `sequence` are < (<= if right)."""
    if ndim_of(sequence) == 1:
        m = shape_of(sequence)[0]
        shape = (*shape_of(values), m)
        seq = ops.broadcast_in_dim(sequence, shape, (len(shape) - 1,))
    else:
        m = shape_of(sequence)[-1]
        shape = (*shape_of(values), m)
        lead = tuple(range(ndim_of(values) - 1))
        seq = ops.broadcast_in_dim(sequence, shape, (*lead, len(shape) - 1))
    vals = ops.broadcast_in_dim(values, shape, tuple(range(ndim_of(values))))
    dtype = torch.promote_types(seq.dtype, vals.dtype)
    seq, vals = convert(seq, dtype), convert(vals, dtype)
    below = ops.le(seq, vals) if right else ops.lt(seq, vals)
    return ops.sum(convert(below, torch.int64), (len(shape) - 1,))


@register_decomposition(torch.bucketize)
def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    if not is_tensor(input):
        input = ops.full((), input, boundaries.dtype, boundaries.device)
    out = _count_before(boundaries, input, right)
    return convert(out, torch.int32) if out_int32 else out


@register_decomposition(torch.searchsorted)
def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 out=None, sorter=None):
    if side is not None:
        right = side == "right"
    if sorter is not None:
        sorted_sequence = ops.gather(sorted_sequence, ndim_of(sorted_sequence) - 1, sorter)
    scalar = not is_tensor(input)
    if scalar:
        input = ops.full((1,), input, sorted_sequence.dtype, sorted_sequence.device)
    out = _count_before(sorted_sequence, input, right)
    if scalar:
        out = reshape(out, ())
    return convert(out, torch.int32) if out_int32 else out


@register_decomposition(torch.angle, T.angle)
def angle(a):
    if a.dtype.is_complex:
        raise PrimError("angle: complex tensors are not supported")
    x = a if a.dtype.is_floating_point else convert(a, torch.get_default_dtype())
    out = ops.where(ops.lt(x, 0), math.pi, ops.mul(x, 0.0))
    return ops.where(ops.isnan(x), x, out)


# --------------------------------------------------------------------------- sizes
@register_decomposition(T.sum_to_size)
def sum_to_size(a, *size):
    size = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (list, tuple, torch.Size)) \
        else tuple(size)
    lead = ndim_of(a) - len(size)
    dims = list(range(lead))
    dims += [lead + i for i, s in enumerate(size)
             if as_expr(s) == 1 and as_expr(shape_of(a)[lead + i]) != 1]
    if not dims:
        return a
    out = ops.sum(a, tuple(dims))
    return reshape(out, size)


@register_decomposition(torch.renorm, T.renorm)
def renorm(input, p, dim, maxnorm):
    from prims.decompositions.norms import vector_norm

    x = convert(input, opmath(input.dtype))
    d = wrap_dim(dim, ndim_of(x))
    dims = tuple(i for i in range(ndim_of(x)) if i != d)
    norm = vector_norm(x, p, dims, False) if dims else ops.abs(x)
    factor = ops.where(ops.gt(norm, float(maxnorm)),
                       ops.div(float(maxnorm), ops.add(norm, 1e-7)), 1.0)
    factor = ops.broadcast_in_dim(factor, shape_of(x), (d,)) if dims else factor
    return convert(ops.mul(x, factor), input.dtype)


@register_decomposition(T.unfold, torch.unfold_copy)
def unfold(a, dimension, size, step):
    if ndim_of(a) == 0:
        return reshape(a, (1,))
    d = wrap_dim(dimension, ndim_of(a))
    length = as_expr(shape_of(a)[d])
    count = floordiv(length - size, step) + 1
    starts = ops.mul(ops.iota(count, 0, 1, torch.int64, a.device), step)
    offsets = ops.iota(size, 0, 1, torch.int64, a.device)
    index = ops.add(ops.broadcast_in_dim(starts, (count, size), (0,)),
                    ops.broadcast_in_dim(offsets, (count, size), (1,)))
    picked = ops.index_select(a, d, reshape(index, (count * size,)))
    shape = list(shape_of(a))
    split = (*shape[:d], count, size, *shape[d + 1:])
    picked = reshape(picked, split)
    order = (*range(d + 1), *range(d + 2, len(split)), d + 1)
    return ops.permute(picked, order)


# --------------------------------------------------------------------------- aten statistics
@register_decomposition(torch.native_layer_norm)
def native_layer_norm(input, normalized_shape, weight, bias, eps):
    k = len(tuple(normalized_shape))
    dims = tuple(range(ndim_of(input) - k, ndim_of(input)))
    x = convert(input, opmath(input.dtype))
    var, mean = ops.var_mean(x, dims, 0)
    rstd = ops.rsqrt(ops.add(var, float(eps)))
    mean_k, rstd_k = restore_dims(mean, shape_of(x), dims), restore_dims(rstd, shape_of(x), dims)
    out = ops.mul(ops.sub(x, broadcast_to(mean_k, shape_of(x))),
                  broadcast_to(rstd_k, shape_of(x)))
    if weight is not None:
        out = ops.mul(out, broadcast_to(convert(weight, x.dtype), shape_of(x)))
    if bias is not None:
        out = ops.add(out, broadcast_to(convert(bias, x.dtype), shape_of(x)))
    # eager's backward reads only the output's cotangent: mean and rstd pass no gradient
    return convert(out, input.dtype), ops.stop_gradient(mean_k), ops.stop_gradient(rstd_k)


@register_decomposition(torch.native_group_norm)
def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    x = convert(input, opmath(input.dtype))
    grouped = reshape(x, (N, group, floordiv(as_expr(C), group) * as_expr(HxW)))
    var, mean = ops.var_mean(grouped, (2,), 0)
    rstd = ops.rsqrt(ops.add(var, float(eps)))
    out = ops.mul(ops.sub(grouped, ops.broadcast_in_dim(mean, shape_of(grouped), (0, 1))),
                  ops.broadcast_in_dim(rstd, shape_of(grouped), (0, 1)))
    out = reshape(out, shape_of(x))
    if weight is not None:
        out = ops.mul(out, ops.broadcast_in_dim(convert(weight, x.dtype), shape_of(x), (1,)))
    if bias is not None:
        out = ops.add(out, ops.broadcast_in_dim(convert(bias, x.dtype), shape_of(x), (1,)))
    return convert(out, input.dtype), mean, rstd


@register_decomposition(torch._softmax_backward_data, torch.ops.aten._softmax_backward_data,
                        torch.ops.aten._softmax_backward_data.default)
def softmax_backward_data(grad_output, output, dim, input_dtype):
    g, y = convert(grad_output, opmath(grad_output.dtype)), convert(output,
                                                                   opmath(output.dtype))
    d = wrap_dim(dim, ndim_of(y))
    dot = ops.sum(ops.mul(g, y), (d,))
    out = ops.mul(y, ops.sub(g, broadcast_to(restore_dims(dot, shape_of(y), (d,)),
                                             shape_of(y))))
    return convert(out, input_dtype)


@register_decomposition(torch.ops.aten._safe_softmax.default)
def safe_softmax(x, dim, dtype=None):
    from prims.decompositions.reductions import softmax

    d = wrap_dim(dim, ndim_of(x))
    masked = ops.all(ops.eq(x, float("-inf")), (d,)) if ndim_of(x) else ops.eq(x, float("-inf"))
    if ndim_of(x):
        masked = ops.broadcast_in_dim(masked, shape_of(x), tuple(i for i in range(ndim_of(x))
                                                                  if i != d))
    # rows of -inf only give zeros; softmax reads 0 there, so no nan reaches the gradient
    out = softmax(ops.where(masked, 0.0, x), dim, dtype=dtype)
    return ops.where(masked, 0.0, out)

