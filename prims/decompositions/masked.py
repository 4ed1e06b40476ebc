"""torch.masked's strided reductions and normalisations: masked-out elements become the
operation's identity (0 for sum, 1 for prod, -inf for amax/argmax/logsumexp/softmax, +inf for
amin/argmin/softmin), then the plain op runs; mean, var and std divide by the masked count.

Eager's versions are Python functions (an autograd.Function defined per call, layout checks)
that capture cannot trace; these are their strided semantics written with the decompositions
of the plain ops, so the VJPs are those ops' (zero gradient at masked-out elements, as eager).

    torch.masked.sum(x, 1, mask=m) -> sum(where(m, x, 0), (1,))
"""

from __future__ import annotations

import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions import reductions
from prims.decompositions.common import broadcast_to, convert, ndim_of, shape_of
from prims.decompositions.norms import linalg_vector_norm
from prims.decompositions.registry import register_decomposition

M = torch.masked
SMALL_INTS = (torch.uint8, torch.bool, torch.int8, torch.int16, torch.int32)


def _dims(dim, ndim):
    if dim is None or dim == ():
        return tuple(range(ndim))
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    return tuple(sorted(d % max(ndim, 1) for d in dims))


def _identity(kind, a):
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    if a.dtype.is_floating_point:
        return float("-inf") if kind == "max" else float("inf")
    info = torch.iinfo(a.dtype)
    return info.min if kind == "max" else info.max


def _fill(a, mask, kind):
    """`a` with masked-out elements replaced by the `kind` reduction's identity."""
    if mask is None:
        return a
    if ndim_of(mask) > ndim_of(a):
        raise PrimError("masked: the mask has more dims than the input")
    keep = broadcast_to(convert(mask, torch.bool), shape_of(a))
    return ops.where(keep, a, _identity(kind, a))


def _sum_dtype(a, dtype):
    if dtype is not None:
        return dtype
    return torch.int64 if a.dtype in SMALL_INTS else a.dtype


@register_decomposition(M.sum)
def masked_sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return reductions.sum_(_fill(input, mask, "sum"), _dims(dim, ndim_of(input)),
                           bool(keepdim), dtype=_sum_dtype(input, dtype))


@register_decomposition(M.prod)
def masked_prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    x = convert(_fill(input, mask, "prod"), _sum_dtype(input, dtype))
    for d in reversed(_dims(dim, ndim_of(input))):
        x = reductions.prod_(x, d, bool(keepdim))
    return x


@register_decomposition(M.cumsum)
def masked_cumsum(input, dim, *, dtype=None, mask=None):
    d = _dims(dim, ndim_of(input))[0]
    return reductions.cumsum(_fill(input, mask, "sum"), d, dtype=dtype or input.dtype)


@register_decomposition(M.cumprod)
def masked_cumprod(input, dim, *, dtype=None, mask=None):
    d = _dims(dim, ndim_of(input))[0]
    return reductions.cumprod(_fill(input, mask, "prod"), d, dtype=dtype or input.dtype)


@register_decomposition(M.amax)
def masked_amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    out = reductions.amax(_fill(input, mask, "max"), _dims(dim, ndim_of(input)), bool(keepdim))
    return convert(out, dtype or input.dtype)


@register_decomposition(M.amin)
def masked_amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    out = reductions.amin(_fill(input, mask, "min"), _dims(dim, ndim_of(input)), bool(keepdim))
    return convert(out, dtype or input.dtype)


@register_decomposition(M.argmax)
def masked_argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    out = reductions.argmax(_fill(input, mask, "max"), dim, bool(keepdim))
    return convert(out, dtype or input.dtype)


@register_decomposition(M.argmin)
def masked_argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    out = reductions.argmin(_fill(input, mask, "min"), dim, bool(keepdim))
    return convert(out, dtype or input.dtype)


def _count(input, mask, dim, keepdim):
    if mask is None:
        ones = ops.full(tuple(shape_of(input)), 1, torch.int64, input.device)
        return masked_sum(ones, dim, keepdim=keepdim)
    keep = broadcast_to(convert(mask, torch.bool), shape_of(input))
    return reductions.sum_(keep, _dims(dim, ndim_of(input)), bool(keepdim))


@register_decomposition(M.mean)
def masked_mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    dtype = dtype or input.dtype
    if not dtype.is_floating_point:
        raise PrimError(f"masked.mean: expected a floating dtype, found {dtype}")
    total = masked_sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    count = _count(input, mask, dim, keepdim)
    return ops.div(total, convert(count, total.dtype))


def _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, take_sqrt):
    c = 1.0 if unbiased is None else (1.0 if unbiased else 0.0)
    if correction is not None:
        c = float(correction)
    if dtype is None:
        dtype = input.dtype if input.dtype.is_floating_point else torch.float32
    count = _count(input, mask, dim, True)
    total = masked_sum(input, dim, keepdim=True, dtype=dtype, mask=mask)
    mean = ops.div(total, convert(count, total.dtype))
    x = ops.sub(convert(input, dtype), broadcast_to(mean, shape_of(input)))
    sq = masked_sum(ops.mul(x, x), dim, keepdim=keepdim, dtype=dtype, mask=mask)
    n = convert(_count(input, mask, dim, keepdim), dtype)
    if c != 0:
        n = ops.maximum(ops.sub(n, c), 0.0)
    out = ops.div(sq, n)
    return ops.sqrt(out) if take_sqrt else out


@register_decomposition(M.var)
def masked_var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
               mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, False)


@register_decomposition(M.std)
def masked_std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
               mask=None):
    return _std_var(input, dim, unbiased, correction, keepdim, dtype, mask, True)


@register_decomposition(M.logsumexp)
def masked_logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    out = reductions.logsumexp(_fill(input, mask, "max"), _dims(dim, ndim_of(input)),
                               bool(keepdim))
    return convert(out, dtype or input.dtype)


@register_decomposition(M.logaddexp)
def masked_logaddexp(input, other, *, dtype=None, input_mask=None, other_mask=None):
    from prims.decompositions.special import logaddexp, pointwise
    from prims.promotion import Promotion

    a, b = _fill(input, input_mask, "max"), _fill(other, other_mask, "max")
    return convert(pointwise(logaddexp, a, b, kind=Promotion.INT_TO_FLOAT),
                   dtype or input.dtype)


@register_decomposition(M.norm)
def masked_norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    x = _fill(input, mask, "min" if ord == float("-inf") else "sum")
    return linalg_vector_norm(x, ord, _dims(dim, ndim_of(input)), bool(keepdim),
                              dtype=dtype or input.dtype)


def _normalization(fn, kind):
    def decomposition(input, dim, *, dtype=None, mask=None):
        d = _dims(dim, ndim_of(input))[0]
        return fn(_fill(input, mask, kind), d, dtype=dtype or input.dtype)

    return decomposition


register_decomposition(M.softmax)(_normalization(reductions.softmax, "max"))
register_decomposition(M.log_softmax)(_normalization(reductions.log_softmax, "max"))


@register_decomposition(M.softmin)
def masked_softmin(input, dim, *, dtype=None, mask=None):
    from prims.decompositions.activations import softmin

    d = _dims(dim, ndim_of(input))[0]
    return softmin(_fill(input, mask, "min"), d, dtype=dtype or input.dtype)


@register_decomposition(M.normalize)
def masked_normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    dtype = dtype or input.dtype
    norm = masked_norm(input, ord, dim, keepdim=True, dtype=dtype, mask=mask)
    denom = ops.maximum(norm, float(eps))
    x = _fill(input, mask, "sum")
    return ops.div(convert(x, dtype), broadcast_to(denom, shape_of(x)))



@register_decomposition(M.median)
def masked_median(input, dim=-1, *, keepdim=False, dtype=None, mask=None):
    """nanmedian with masked-out elements as NaN (eager's definition)."""
    from prims.decompositions.order import nanmedian

    dtype = dtype or input.dtype
    x = input if input.dtype.is_floating_point else convert(input, torch.float32)
    if mask is not None:
        keep = broadcast_to(convert(mask, torch.bool), shape_of(x))
        x = ops.where(keep, x, float("nan"))
    values, _ = nanmedian(x, _dims(dim, ndim_of(input))[0], bool(keepdim))
    return convert(values, dtype)
