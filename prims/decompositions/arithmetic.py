"""Elementwise torch ops: math functions, operators, comparisons, and their in-place forms.

In-place forms (`x.add_(y)`, `x += y`) decompose to the functional result in `x`'s dtype;
capture writes it back.

    torch.add(i32[s0], 2.5)  ->  convert(i32->f32), add(f32[s0], 2.5)
"""

from __future__ import annotations

import operator

import torch
import torch.nn.functional as F

from prims import opcodes, ops
from prims.core import PrimError
from prims.decompositions.common import (
    broadcast_tensors,
    convert,
    is_tensor,
    pointwise,
    unary_float,
)
from prims.decompositions.registry import register_decomposition
from prims.promotion import Promotion, result_type

T = torch.Tensor
B = Promotion.ALWAYS_BOOL


def _tensor_attr(name):
    """`torch.Tensor.<name>` if this torch version has it (in-place dunders vary)."""
    return getattr(T, name, None)


def _methods(name):
    """torch.<name> and torch.Tensor.<name>, when they exist."""
    return tuple(t for t in (getattr(torch, name, None), getattr(T, name, None)) if t is not None)


def _inplace(fn):
    """The functional result of an in-place op, in the dtype of the tensor written to."""

    def inplace(a, *args, **kwargs):
        out = fn(a, *args, **kwargs)
        if out.dtype != a.dtype:
            # torch refuses to write a float result into an int tensor; so do we
            if out.dtype.is_floating_point and not a.dtype.is_floating_point:
                raise PrimError(f"in-place op: result type {out.dtype} can't be cast to "
                                f"{a.dtype}")
            out = convert(out, a.dtype)
        return out

    inplace.__name__ = f"{fn.__name__}_"
    return inplace


def _register_with_inplace(fn, name, extra=(), inplace_extra=()):
    register_decomposition(*_methods(name), *extra)(fn)
    inplace_targets = [getattr(T, f"{name}_", None), *inplace_extra]
    targets = [t for t in inplace_targets if t is not None]
    if targets:
        register_decomposition(*targets)(_inplace(fn))


# --------------------------------------------------------------------------- unary
FLOAT_UNARY = sorted(op.value for op in opcodes.FLOAT_UNARY)  # torch.<name> exists for each
SAME_UNARY = ["abs", "neg", "sign", "floor", "ceil", "trunc"]


def _float_unary(name):
    prim = getattr(ops, name)

    def decomposition(a):
        return unary_float(prim, a)

    decomposition.__name__ = name
    return decomposition


def _same_unary(name):
    prim = getattr(ops, name)

    def decomposition(a):
        if name in ("floor", "ceil", "trunc") and not a.dtype.is_floating_point:
            return a
        return pointwise(prim, a)

    decomposition.__name__ = name
    return decomposition


for _name in FLOAT_UNARY:
    _extra = {"tanh": (F.tanh,), "sigmoid": (F.sigmoid,)}.get(_name, ())
    _special = getattr(torch.special, _name, None)  # torch.special.expm1, ...
    _register_with_inplace(_float_unary(_name), _name,
                           (*_extra, *((_special,) if _special is not None else ())))
for _name in SAME_UNARY:
    _register_with_inplace(_same_unary(_name), _name,
                           (operator.neg, T.__neg__) if _name == "neg" else
                           (operator.abs, T.__abs__) if _name == "abs" else ())
register_decomposition(torch.negative, T.negative)(_same_unary("neg"))


def round_(a, *, decimals=0):
    if not a.dtype.is_floating_point:
        return a
    if decimals:
        scale = 10.0 ** decimals
        return pointwise(ops.div, pointwise(ops.round, pointwise(ops.mul, a, scale)), scale)
    return pointwise(ops.round, a)


_register_with_inplace(round_, "round")


@register_decomposition(torch.logical_not, T.logical_not)
def logical_not(a):
    return ops.logical_not(a)


@register_decomposition(torch.bitwise_not, T.bitwise_not, operator.invert, T.__invert__)
def bitwise_not(a):
    if a.dtype.is_floating_point:
        raise PrimError(f"bitwise_not: expected an integer or bool tensor, found {a.dtype}")
    return ops.logical_not(a) if a.dtype == torch.bool else ops.bitwise_not(a)


@register_decomposition(torch.isnan, T.isnan)
def isnan(a):
    return ops.isnan(a)


@register_decomposition(torch.isinf, T.isinf)
def isinf(a):
    return ops.isinf(a)


def _check_some_tensor(name, *args):
    if not any(is_tensor(a) for a in args):
        raise PrimError(f"{name}: expected a tensor operand, found {args!r}")


# --------------------------------------------------------------------------- binary arithmetic
def add(a, b, *, alpha=1):
    _check_some_tensor("add", a, b)
    if alpha != 1:
        b = pointwise(ops.mul, b, alpha) if is_tensor(b) else b * alpha
    return pointwise(ops.add, a, b)


def sub(a, b, *, alpha=1):
    _check_some_tensor("sub", a, b)
    if alpha != 1:
        b = pointwise(ops.mul, b, alpha) if is_tensor(b) else b * alpha
    return pointwise(ops.sub, a, b)


def mul(a, b):
    _check_some_tensor("mul", a, b)
    return pointwise(ops.mul, a, b)


def div(a, b, *, rounding_mode=None):
    _check_some_tensor("div", a, b)
    if rounding_mode is None:
        return pointwise(ops.div, a, b, kind=Promotion.INT_TO_FLOAT)
    if rounding_mode == "floor":
        return floor_divide(a, b)
    if rounding_mode == "trunc":
        dtype = result_type(a, b)
        if dtype.is_floating_point:
            return pointwise(ops.trunc, pointwise(ops.div, a, b))
        # exact in int64 (a float quotient rounds past 2**53) and a zero divisor raises like
        # eager: truncation is the floor plus one where the quotient is negative and inexact
        quotient = floor_divide(a, b)
        inexact = pointwise(ops.ne, remainder(a, b), 0)
        fix = pointwise(ops.logical_and, inexact, pointwise(ops.lt, quotient, 0))
        return pointwise(ops.add, quotient, convert(fix, dtype))
    raise PrimError(f"div: expected rounding_mode None, 'floor' or 'trunc', found "
                    f"{rounding_mode!r}")


def floor_divide(a, b):
    _check_some_tensor("floor_divide", a, b)
    return pointwise(ops.floor_divide, a, b)


def remainder(a, b):
    _check_some_tensor("remainder", a, b)
    return pointwise(ops.remainder, a, b)


def pow_(a, b):
    _check_some_tensor("pow", a, b)
    if not is_tensor(b) and b == 2:
        return pointwise(ops.mul, a, a)
    return pointwise(ops.pow, a, b)


def _swap(fn):
    def reflected(a, b):
        return fn(b, a)

    reflected.__name__ = f"r{fn.__name__}"
    return reflected


_register_with_inplace(add, "add", (operator.add, T.__add__), (operator.iadd, _tensor_attr("__iadd__")))
_register_with_inplace(sub, "sub", (operator.sub, T.__sub__, torch.subtract, T.subtract),
                       (operator.isub, _tensor_attr("__isub__")))
_register_with_inplace(mul, "mul", (operator.mul, T.__mul__, torch.multiply, T.multiply),
                       (operator.imul, _tensor_attr("__imul__")))
_register_with_inplace(div, "div", (operator.truediv, T.__truediv__, torch.true_divide,
                                    T.true_divide, torch.divide, T.divide),
                       (operator.itruediv, _tensor_attr("__itruediv__")))
_register_with_inplace(floor_divide, "floor_divide", (operator.floordiv, T.__floordiv__),
                       (operator.ifloordiv, _tensor_attr("__ifloordiv__")))
_register_with_inplace(remainder, "remainder", (operator.mod, T.__mod__),
                       (operator.imod, _tensor_attr("__imod__")))
_register_with_inplace(pow_, "pow", (operator.pow, T.__pow__), (operator.ipow, _tensor_attr("__ipow__")))
register_decomposition(T.__radd__)(_swap(add))
register_decomposition(T.__rsub__, torch.rsub)(_swap(sub))
register_decomposition(T.__rmul__)(_swap(mul))
register_decomposition(T.__rtruediv__)(_swap(div))
register_decomposition(T.__rfloordiv__)(_swap(floor_divide))
register_decomposition(T.__rmod__)(_swap(remainder))
register_decomposition(T.__rpow__)(_swap(pow_))


def _binary(prim, kind=Promotion.DEFAULT):
    def decomposition(a, b):
        _check_some_tensor(prim.name, a, b)
        return pointwise(prim, a, b, kind=kind)

    decomposition.__name__ = prim.name
    return decomposition


_register_with_inplace(_binary(ops.maximum), "maximum")
_register_with_inplace(_binary(ops.minimum), "minimum")
_register_with_inplace(_binary(ops.atan2, Promotion.INT_TO_FLOAT), "atan2")
for _name, _op, _dunder, _idunder in (
    ("eq", operator.eq, T.__eq__, None), ("ne", operator.ne, T.__ne__, None),
    ("lt", operator.lt, T.__lt__, None), ("le", operator.le, T.__le__, None),
    ("gt", operator.gt, T.__gt__, None), ("ge", operator.ge, T.__ge__, None),
):
    _register_with_inplace(_binary(getattr(ops, _name), B), _name, (_op, _dunder))
for _name in ("logical_and", "logical_or", "logical_xor"):
    _register_with_inplace(_binary(getattr(ops, _name), B), _name)
for _name, _op, _dunder, _iop, _idunder in (
    ("bitwise_and", operator.and_, T.__and__, operator.iand, _tensor_attr("__iand__")),
    ("bitwise_or", operator.or_, T.__or__, operator.ior, _tensor_attr("__ior__")),
    ("bitwise_xor", operator.xor, T.__xor__, operator.ixor, _tensor_attr("__ixor__")),
):
    _register_with_inplace(_binary(getattr(ops, _name), Promotion.NO_OPMATH), _name,
                           (_op, _dunder), (_iop, _idunder))


# --------------------------------------------------------------------------- clamp, where, lerp
def clamp(a, min=None, max=None):
    if min is None and max is None:
        raise PrimError("clamp: expected min or max, found neither")
    out = a
    if min is not None:
        out = pointwise(ops.maximum, out, min)
    if max is not None:
        out = pointwise(ops.minimum, out, max)
    return out


_register_with_inplace(clamp, "clamp", (torch.clip, T.clip))


@register_decomposition(torch.clamp_min, T.clamp_min)
def clamp_min(a, min):
    return clamp(a, min=min)


@register_decomposition(torch.clamp_max, T.clamp_max)
def clamp_max(a, max):
    return clamp(a, max=max)


@register_decomposition(T.where)
def tensor_where(a, condition, other):
    return where(condition, a, other)


@register_decomposition(torch.where)
def where(condition, input, other):
    _check_some_tensor("where", input, other)
    result = result_type(input, other)
    values = tuple(convert(v, result) if is_tensor(v) else v for v in (input, other))
    condition, *values = broadcast_tensors(convert(condition, torch.bool), *values)
    return ops.where(condition, *values)


@register_decomposition(torch.lerp, T.lerp)
def lerp(start, end, weight):
    return add(start, mul(weight, sub(end, start)))


@register_decomposition(torch.square, T.square)
def square(a):
    return pointwise(ops.mul, a, a)
