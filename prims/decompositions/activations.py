"""torch.nn.functional activations beyond nn.py's: elu, selu, celu, hardswish, hardsigmoid,
relu6, softsign, tanhshrink, threshold, soft/hard shrink, glu, prelu, rrelu, softmin,
cosine_similarity and pairwise_distance.

Each is a formula over pointwise prims computed in f32 for low-precision floats, so its VJP is
the prims' VJPs composed (the subgradient at a kink is the one `where` picks, as in eager).

    F.elu(x, alpha) -> where(x > 0, x, alpha * expm1(x))
"""

from __future__ import annotations

import sympy
import torch
import torch.nn.functional as F

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import (
    broadcast_tensors,
    convert,
    ndim_of,
    shape_of,
    wrap_dim,
)
from prims.decompositions.norms import vector_norm
from prims.decompositions.random_draws import uniform01
from prims.decompositions.reductions import softmax
from prims.decompositions.registry import register_decomposition
from prims.promotion import opmath
from prims.sizes import as_expr, floordiv, require

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _activation(formula, *targets):
    """Register `formula(x, **kwargs)` on f32-computed `x` (cast back) for `targets`."""

    def decomposition(a, *args, **kwargs):
        kwargs.pop("inplace", None)
        if not a.dtype.is_floating_point:
            raise PrimError(f"{formula.__name__}: expected a floating tensor, found {a.dtype}")
        return convert(formula(convert(a, opmath(a.dtype)), *args, **kwargs), a.dtype)

    decomposition.__name__ = formula.__name__
    register_decomposition(*targets)(decomposition)
    return decomposition


def elu(x, alpha=1.0, inplace=False):
    return ops.where(ops.gt(x, 0.0), x, ops.mul(ops.expm1(x), float(alpha)))


def selu(x, inplace=False):
    return ops.mul(elu(x, SELU_ALPHA), SELU_SCALE)


def celu(x, alpha=1.0, inplace=False):
    return ops.where(ops.gt(x, 0.0), x, ops.mul(ops.expm1(ops.div(x, float(alpha))),
                                                float(alpha)))


def relu6(x, inplace=False):
    return ops.minimum(ops.maximum(x, 0.0), 6.0)


def hardsigmoid(x, inplace=False):
    return ops.div(relu6(ops.add(x, 3.0)), 6.0)


def hardswish(x, inplace=False):
    return ops.mul(x, hardsigmoid(x))


def softsign(x):
    return ops.div(x, ops.add(ops.abs(x), 1.0))


def tanhshrink(x):
    return ops.sub(x, ops.tanh(x))


def threshold(x, threshold, value, inplace=False):
    return ops.where(ops.gt(x, float(threshold)), x, float(value))


def softshrink(x, lambd=0.5):
    lambd = float(lambd)
    return ops.where(ops.gt(x, lambd), ops.sub(x, lambd),
                     ops.where(ops.lt(x, -lambd), ops.add(x, lambd), 0.0))


def hardshrink(x, lambd=0.5):
    lambd = float(lambd)
    return ops.where(ops.gt(ops.abs(x), lambd), x, 0.0)


def rrelu(x, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Negative inputs times a slope: drawn per element from U(lower, upper) in training (the
    graph's random stream, prims/random.py), the mean slope in eval."""
    if training:
        u = convert(uniform01(x.shape, x.dtype, x.device), x.dtype)
        slope = ops.add(ops.mul(u, float(upper) - float(lower)), float(lower))
    else:
        slope = (float(lower) + float(upper)) / 2
    return ops.where(ops.ge(x, 0.0), x, ops.mul(x, slope))


_activation(elu, F.elu, getattr(F, "elu_", None))
_activation(selu, F.selu, torch.selu, getattr(F, "selu_", None))
_activation(celu, F.celu, torch.celu, getattr(F, "celu_", None))
_activation(relu6, F.relu6)
_activation(hardsigmoid, F.hardsigmoid)
_activation(hardswish, F.hardswish)
_activation(softsign, F.softsign)
_activation(tanhshrink, F.tanhshrink)
_activation(threshold, F.threshold, torch.threshold)
_activation(softshrink, F.softshrink)
_activation(hardshrink, F.hardshrink, torch.hardshrink, torch.Tensor.hardshrink)
_activation(rrelu, F.rrelu, torch.rrelu)


@register_decomposition(F.glu)
def glu(input, dim=-1):
    d = wrap_dim(dim, ndim_of(input))
    size = as_expr(shape_of(input)[d])
    half = floordiv(size, 2)
    require(sympy.Eq(2 * half, size), f"glu: halving dimension {dim} needs an even size, found {size}")
    x = convert(input, opmath(input.dtype))
    a = ops.slice(x, d, 0, half, 1)
    b = ops.slice(x, d, half, size, 1)
    return convert(ops.mul(a, ops.sigmoid(b)), input.dtype)


@register_decomposition(F.prelu, torch.prelu)
def prelu(input, weight):
    x = convert(input, opmath(input.dtype))
    w = convert(weight, x.dtype)
    if ndim_of(x) == 0:
        w = ops.reshape(w, ()) if ndim_of(w) else w
    elif ndim_of(w) == 0:
        w = ops.broadcast_in_dim(w, shape_of(x), ())
    else:
        channel = 0 if ndim_of(x) == 1 else 1
        if as_expr(shape_of(w)[0]) == 1:
            w = ops.broadcast_in_dim(ops.reshape(w, ()), shape_of(x), ())
        else:
            w = ops.broadcast_in_dim(w, shape_of(x), (channel,))
    return convert(ops.where(ops.gt(x, 0.0), x, ops.mul(w, x)), input.dtype)


@register_decomposition(F.softmin)
def softmin(input, dim=None, _stacklevel=3, dtype=None):
    return softmax(ops.neg(input) if dtype is None else ops.neg(convert(input, dtype)), dim)


@register_decomposition(F.cosine_similarity, torch.cosine_similarity)
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    a, b = broadcast_tensors(convert(x1, opmath(x1.dtype)), convert(x2, opmath(x2.dtype)))
    d = wrap_dim(dim, ndim_of(a))
    kept = tuple(i for i in range(ndim_of(a)) if i != d)
    na = ops.broadcast_in_dim(ops.maximum(vector_norm(a, 2, (d,)), float(eps)), shape_of(a),
                              kept)
    nb = ops.broadcast_in_dim(ops.maximum(vector_norm(b, 2, (d,)), float(eps)), shape_of(b),
                              kept)
    return convert(ops.sum(ops.mul(ops.div(a, na), ops.div(b, nb)), (d,)), x1.dtype)


@register_decomposition(F.pairwise_distance, torch.pairwise_distance)
def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    from prims.decompositions.arithmetic import add, sub

    diff = add(sub(x1, x2), eps)
    if ndim_of(diff) == 0:
        return vector_norm(diff, p, (), keepdim)
    return vector_norm(diff, p, (ndim_of(diff) - 1,), keepdim)
