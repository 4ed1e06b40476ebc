"""Elementwise math written with the pointwise prims: inverse trig and hyperbolic functions,
logs in other bases, logit, xlogy, erfc, ndtr, copysign, fmod, hypot, logaddexp, nan_to_num, ...

Each is one formula over prims (computed in f32 for low-precision floats, ints promoted to the
default float where torch does), so its VJP is the prims' VJPs composed.

    torch.asinh(x) -> sign(x) * log1p(|x| + x^2 / (1 + sqrt(x^2 + 1)))
"""

from __future__ import annotations

import math

import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions.arithmetic import _register_with_inplace
from prims.decompositions.common import convert, is_tensor, pointwise
from prims.decompositions.registry import register_decomposition
from prims.promotion import Promotion

T = torch.Tensor
F_ = Promotion.INT_TO_FLOAT


def _float(fn):
    """A float formula `fn(x, ...)` as a decomposition: promotes (ints -> default float, f16
    computes in f32), broadcasts, casts the result back."""

    def decomposition(*args):
        return pointwise(fn, *args, kind=F_)

    decomposition.__name__ = fn.__name__
    return decomposition


# --------------------------------------------------------------------------- formulas
def _sqrt1m(x):  # sqrt(1 - x^2)
    return ops.sqrt(ops.sub(1.0, ops.mul(x, x)))


def asin(x):
    return ops.atan2(x, _sqrt1m(x))


def acos(x):
    return ops.atan2(_sqrt1m(x), x)


def atan(x):
    one = ops.broadcast_in_dim(ops.full((), 1.0, x.dtype, x.device), tuple(x.shape), ())
    return ops.atan2(x, one)


def asinh(x):
    ax = ops.abs(x)
    sq = ops.mul(x, x)
    inner = ops.add(ax, ops.div(sq, ops.add(ops.sqrt(ops.add(sq, 1.0)), 1.0)))
    return ops.mul(ops.sign(x), ops.log1p(inner))


def acosh(x):
    return ops.log(ops.add(x, ops.sqrt(ops.mul(ops.sub(x, 1.0), ops.add(x, 1.0)))))


def atanh(x):
    return ops.mul(ops.log1p(ops.div(ops.mul(x, 2.0), ops.sub(1.0, x))), 0.5)


def sinh(x):
    return ops.mul(ops.sub(ops.expm1(x), ops.expm1(ops.neg(x))), 0.5)


def cosh(x):
    return ops.mul(ops.add(ops.exp(x), ops.exp(ops.neg(x))), 0.5)


def log10(x):
    return ops.mul(ops.log(x), 1.0 / math.log(10.0))


def deg2rad(x):
    return ops.mul(x, math.pi / 180.0)


def rad2deg(x):
    return ops.mul(x, 180.0 / math.pi)


def sinc(x):
    px = ops.mul(x, math.pi)
    zero = ops.eq(x, 0.0)
    safe = ops.where(zero, 1.0, px)
    return ops.where(zero, 1.0, ops.div(ops.sin(safe), safe))


def erfc(x):
    return ops.sub(1.0, ops.erf(x))


def ndtr(x):
    return ops.mul(ops.add(ops.erf(ops.mul(x, 1.0 / math.sqrt(2.0))), 1.0), 0.5)


def log_sigmoid(x):
    # -softplus(-x) = min(x, 0) - log1p(exp(-|x|))
    return ops.sub(ops.minimum(x, 0.0), ops.log1p(ops.exp(ops.neg(ops.abs(x)))))


def entr(x):
    body = ops.neg(ops.mul(x, ops.log(ops.where(ops.gt(x, 0.0), x, 1.0))))
    out = ops.where(ops.eq(x, 0.0), 0.0, body)
    out = ops.where(ops.lt(x, 0.0), float("-inf"), out)
    return ops.where(ops.isnan(x), x, out)


def xlogy(x, y):
    out = ops.mul(x, ops.log(y))
    out = ops.where(ops.eq(x, 0.0), 0.0, out)
    return ops.where(ops.isnan(y), y, out)


def xlog1py(x, y):
    out = ops.mul(x, ops.log1p(y))
    out = ops.where(ops.eq(x, 0.0), 0.0, out)
    return ops.where(ops.isnan(y), y, out)


def hypot(a, b):
    return ops.sqrt(ops.add(ops.mul(a, a), ops.mul(b, b)))


def logaddexp(a, b):
    m = ops.maximum(a, b)
    d = ops.neg(ops.abs(ops.sub(a, b)))
    out = ops.add(m, ops.log1p(ops.exp(d)))
    same_inf = ops.logical_and(ops.isinf(a), ops.eq(a, b))
    return ops.where(same_inf, a, out)


def logaddexp2(a, b):
    m = ops.maximum(a, b)
    d = ops.neg(ops.abs(ops.sub(a, b)))
    out = ops.add(m, ops.mul(ops.log1p(ops.exp2(d)), 1.0 / math.log(2.0)))
    same_inf = ops.logical_and(ops.isinf(a), ops.eq(a, b))
    return ops.where(same_inf, a, out)


def copysign(a, b):
    negative = ops.logical_or(ops.lt(b, 0.0), _signbit_zero(b))
    mag = ops.abs(a)
    return ops.where(negative, ops.neg(mag), mag)


def _signbit_zero(b):
    """b is -0.0: 1 / b is -inf."""
    return ops.logical_and(ops.eq(b, 0.0), ops.lt(ops.div(1.0, ops.where(ops.eq(b, 0.0), b,
                                                                          1.0)), 0.0))


def _heaviside(a, values):
    one = ops.add(ops.mul(values, 0), 1)
    zero = ops.mul(values, 0)
    return ops.where(ops.eq(a, 0), values, ops.where(ops.gt(a, 0), one, zero))


def fmod(a, b):
    r = ops.remainder(a, b)
    wrong_sign = ops.logical_and(ops.ne(r, 0), ops.ne(ops.lt(r, 0), ops.lt(a, 0)))
    return ops.where(wrong_sign, ops.sub(r, b), r)


def fmax(a, b):
    return ops.where(ops.isnan(b), a, ops.where(ops.isnan(a), b, ops.maximum(a, b)))


def fmin(a, b):
    return ops.where(ops.isnan(b), a, ops.where(ops.isnan(a), b, ops.minimum(a, b)))


def frac(x):
    return ops.sub(x, ops.trunc(x))


# --------------------------------------------------------------------------- registrations
for _fn, _name, _extra in (
    (asin, "asin", (torch.arcsin, T.arcsin)), (acos, "acos", (torch.arccos, T.arccos)),
    (atan, "atan", (torch.arctan, T.arctan)), (asinh, "asinh", (torch.arcsinh, T.arcsinh)),
    (acosh, "acosh", (torch.arccosh, T.arccosh)), (atanh, "atanh", (torch.arctanh, T.arctanh)),
    (sinh, "sinh", ()), (cosh, "cosh", ()), (log10, "log10", ()),
    (deg2rad, "deg2rad", ()), (rad2deg, "rad2deg", ()),
    (sinc, "sinc", (torch.special.sinc,)), (erfc, "erfc", (torch.special.erfc,)),
    (xlogy, "xlogy", (torch.special.xlogy,)), (hypot, "hypot", ()),
    (logaddexp, "logaddexp", ()), (logaddexp2, "logaddexp2", ()),
):
    _register_with_inplace(_float(_fn), _name, _extra)
register_decomposition(torch.special.ndtr)(_float(ndtr))
register_decomposition(torch.special.entr)(_float(entr))
register_decomposition(torch.special.xlog1py)(_float(xlog1py))
register_decomposition(torch.nn.functional.logsigmoid)(_float(log_sigmoid))
register_decomposition(torch.special.expit)(_float(ops.sigmoid))
_register_with_inplace(_float(copysign), "copysign")


def _frac(a):
    if not a.dtype.is_floating_point:
        raise PrimError(f"frac: expected a floating tensor, found {a.dtype}")
    return pointwise(frac, a)


_register_with_inplace(_frac, "frac")


def _same_kind(fn, name):
    def decomposition(a, b):
        if not (is_tensor(a) or is_tensor(b)):
            raise PrimError(f"{name}: expected a tensor operand, found {a!r} and {b!r}")
        return pointwise(fn, a, b)

    decomposition.__name__ = name
    return decomposition


_register_with_inplace(_same_kind(fmod, "fmod"), "fmod")
register_decomposition(torch.fmax, T.fmax)(_same_kind(fmax, "fmax"))
register_decomposition(torch.fmin, T.fmin)(_same_kind(fmin, "fmin"))
_register_with_inplace(_same_kind(_heaviside, "heaviside"), "heaviside")


@register_decomposition(torch.logit, T.logit, torch.special.logit)
def logit(a, eps=None):
    def fn(x):
        if eps is not None:
            x = ops.minimum(ops.maximum(x, float(eps)), 1.0 - float(eps))
        return ops.log(ops.div(x, ops.sub(1.0, x)))

    return pointwise(fn, a, kind=F_)


@register_decomposition(torch.ldexp, T.ldexp)
def ldexp(a, other):
    def fn(x, e):
        return ops.mul(x, ops.exp2(e))

    return pointwise(fn, a, other, kind=F_)


@register_decomposition(torch.float_power, T.float_power)
def float_power(a, exponent):
    def f64(v):
        return convert(v, torch.float64) if is_tensor(v) else float(v)

    return ops.pow(*_broadcast_pair(f64(a), f64(exponent)))


def _broadcast_pair(a, b):
    from prims.decompositions.common import broadcast_tensors

    return broadcast_tensors(a, b)


@register_decomposition(torch.nan_to_num, T.nan_to_num)
def nan_to_num(a, nan=0.0, posinf=None, neginf=None):
    if not a.dtype.is_floating_point:
        return ops.add(a, 0)
    info = torch.finfo(a.dtype)
    out = ops.where(ops.isnan(a), 0.0 if nan is None else float(nan), a)
    out = ops.where(ops.logical_and(ops.isinf(a), ops.gt(a, 0)),
                    info.max if posinf is None else float(posinf), out)
    return ops.where(ops.logical_and(ops.isinf(a), ops.lt(a, 0)),
                     info.min if neginf is None else float(neginf), out)


@register_decomposition(torch.isfinite, T.isfinite)
def isfinite(a):
    if not a.dtype.is_floating_point:
        return ops.eq(a, a)
    return ops.logical_not(ops.logical_or(ops.isnan(a), ops.isinf(a)))


@register_decomposition(torch.isposinf, T.isposinf)
def isposinf(a):
    if not a.dtype.is_floating_point:
        return ops.ne(a, a)
    return ops.logical_and(ops.isinf(a), ops.gt(a, 0))


@register_decomposition(torch.isneginf, T.isneginf)
def isneginf(a):
    if not a.dtype.is_floating_point:
        return ops.ne(a, a)
    return ops.logical_and(ops.isinf(a), ops.lt(a, 0))


@register_decomposition(torch.isreal, T.isreal)
def isreal(a):
    return ops.eq(a, a) if not a.dtype.is_floating_point else ops.eq(ops.isnan(a), ops.isnan(a))


@register_decomposition(torch.signbit, T.signbit)
def signbit(a):
    if not a.dtype.is_floating_point:
        return ops.lt(a, 0)
    return ops.logical_or(ops.lt(a, 0.0), _signbit_zero(a))


@register_decomposition(torch.sgn, T.sgn)
def sgn(a):
    return ops.sign(a) if a.dtype != torch.bool else a


@register_decomposition(torch.positive, T.positive, torch.conj, T.conj, torch.resolve_conj,
                        T.resolve_conj, torch.resolve_neg, T.resolve_neg, torch.real)
def identity(a):
    if a.dtype.is_complex:
        raise PrimError(f"complex tensors are not supported, found {a.dtype}")
    return a


@register_decomposition(torch.conj_physical, T.conj_physical)
def conj_physical(a):
    return ops.add(identity(a), 0) if a.dtype != torch.bool else ops.logical_or(a, a)


@register_decomposition(torch.addcmul, T.addcmul)
def addcmul(a, t1, t2, *, value=1):
    from prims.decompositions.arithmetic import add, mul

    prod = mul(t1, t2)
    return add(a, mul(prod, value) if value != 1 else prod)


@register_decomposition(torch.addcdiv, T.addcdiv)
def addcdiv(a, t1, t2, *, value=1):
    from prims.decompositions.arithmetic import add, div, mul

    if not (t1.dtype.is_floating_point or t2.dtype.is_floating_point):
        raise PrimError("addcdiv: integer division of tensors is not supported; found "
                        f"{t1.dtype} and {t2.dtype}")
    q = div(t1, t2)
    return add(a, mul(q, value) if value != 1 else q)

