"""Creation and conversion: arange, zeros/ones/full/empty and their *_like forms, triu/tril,
dtype conversions (to, type, float, half, bfloat16, double, long, int, bool).

    torch.arange(s0) -> iota(s0, 0, 1, int64, cpu);  x.float() -> convert_element_type(x, f32)
"""

from __future__ import annotations

import math

import sympy
import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import (
    broadcast_to,
    convert,
    ndim_of,
    parse_size,
    shape_of,
)
from prims.decompositions.registry import register_decomposition
from prims.devices import default_device
from prims.sizes import as_expr, floordiv, known_true

T = torch.Tensor


def _device(device):
    """An explicit device, else torch's default device (`torch.set_default_device`), as eager."""
    return default_device() if device is None else torch.device(device)


def _is_integral(value) -> bool:
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (isinstance(value, sympy.Basic) and value.is_integer)


@register_decomposition(torch.arange)
def arange(start, end=None, step=1, *, dtype=None, device=None, layout=None,
           requires_grad=False, pin_memory=False, out=None):
    if end is None:
        start, end = 0, start
    integral = all(_is_integral(v) for v in (start, end, step))
    dtype = dtype or (torch.int64 if integral else torch.get_default_dtype())
    if integral:
        if isinstance(step, int) and step <= 0:
            if step == 0:
                raise PrimError("arange: expected a non-zero step, found 0")
            length = floordiv(as_expr(start) - as_expr(end) - step - 1, -step)
        else:
            length = floordiv(as_expr(end) - as_expr(start) + step - 1, step)
        if isinstance(length, sympy.Basic) and length.is_number:
            length = max(int(length), 0)
        elif not isinstance(length, int) and not known_true(sympy.Ge(length, 0)):
            length = sympy.Max(length, 0)
        elif isinstance(length, int):
            length = max(length, 0)
    else:
        length = max(math.ceil((float(end) - float(start)) / float(step)), 0)
    return ops.iota(length, start, step, dtype, _device(device))


def _full(size, value, dtype, device):
    dtype = dtype or (torch.get_default_dtype() if isinstance(value, float) else
                      torch.bool if isinstance(value, bool) else
                      torch.int64 if isinstance(value, int) else torch.get_default_dtype())
    return ops.full(tuple(size), value, dtype, _device(device))


@register_decomposition(torch.full)
def full(size, fill_value, *, dtype=None, device=None, layout=None, requires_grad=False,
         pin_memory=False, out=None):
    return _full(size, fill_value, dtype, device)


def _constant(value):
    def create(*size, dtype=None, device=None, layout=None, requires_grad=False,
               pin_memory=False, out=None, memory_format=None):
        return ops.full(parse_size(size), value, dtype or torch.get_default_dtype(),
                        _device(device))

    return create


register_decomposition(torch.zeros)(_constant(0))
register_decomposition(torch.ones)(_constant(1))
register_decomposition(torch.empty)(_constant(0))


def _like(value):
    def create(a, *, dtype=None, device=None, layout=None, requires_grad=False,
               pin_memory=False, memory_format=None):
        return ops.full(shape_of(a), value, dtype or a.dtype, _device(device or a.device))

    return create


register_decomposition(torch.zeros_like)(_like(0))
register_decomposition(torch.ones_like)(_like(1))
register_decomposition(torch.empty_like)(_like(0))


@register_decomposition(torch.full_like)
def full_like(a, fill_value, *, dtype=None, device=None, layout=None, requires_grad=False,
              pin_memory=False, memory_format=None):
    return ops.full(shape_of(a), fill_value, dtype or a.dtype, _device(device or a.device))


def _new(value):
    def create(a, *size, dtype=None, device=None, layout=None, requires_grad=False,
               pin_memory=False):
        return ops.full(parse_size(size), value, dtype or a.dtype, _device(device or a.device))

    return create


register_decomposition(T.new_zeros)(_new(0))
register_decomposition(T.new_ones)(_new(1))
register_decomposition(T.new_empty)(_new(0))


@register_decomposition(T.new_full)
def new_full(a, size, fill_value, *, dtype=None, device=None, layout=None,
             requires_grad=False, pin_memory=False):
    return ops.full(tuple(size), fill_value, dtype or a.dtype, _device(device or a.device))


def _triangle(a, diagonal, upper):
    if ndim_of(a) < 2:
        raise PrimError(f"{'triu' if upper else 'tril'}: expected at least 2 dims, found "
                        f"{ndim_of(a)}")
    rows, cols = shape_of(a)[-2:]
    r = ops.broadcast_in_dim(ops.iota(rows, 0, 1, torch.int64, a.device), (rows, cols), (0,))
    c = ops.broadcast_in_dim(ops.iota(cols, 0, 1, torch.int64, a.device), (rows, cols), (1,))
    offset = ops.sub(c, r)
    keep = ops.ge(offset, diagonal) if upper else ops.le(offset, diagonal)
    keep = broadcast_to(keep, shape_of(a))
    zero = False if a.dtype == torch.bool else 0
    return ops.where(keep, a, zero)


@register_decomposition(torch.triu, T.triu, T.triu_)
def triu(a, diagonal=0):
    return _triangle(a, diagonal, True)


@register_decomposition(torch.tril, T.tril, T.tril_)
def tril(a, diagonal=0):
    return _triangle(a, diagonal, False)


# --------------------------------------------------------------------------- in-place fills
@register_decomposition(T.zero_)
def zero_(a):
    return ops.full(shape_of(a), False if a.dtype == torch.bool else 0, a.dtype, a.device)


@register_decomposition(T.fill_)
def fill_(a, value):
    if hasattr(value, "shape"):
        return broadcast_to(convert(value, a.dtype), shape_of(a))
    return ops.full(shape_of(a), value, a.dtype, a.device)


@register_decomposition(T.copy_)
def copy_(a, src, non_blocking=False):
    return broadcast_to(convert(src, a.dtype), shape_of(a))


# --------------------------------------------------------------------------- conversions
def _same_device(a, device):
    if device is not None and torch.device(device) != torch.device(a.device):
        if not (torch.device(device).type == torch.device(a.device).type and
                torch.device(device).index is None):
            raise PrimError(f"to: moving {a.device} -> {device} is not a prim; move inputs "
                            f"before compiling")


@register_decomposition(T.to)
def to(a, *args, **kwargs):
    dtype = kwargs.get("dtype")
    _same_device(a, kwargs.get("device"))
    for arg in args:
        if isinstance(arg, torch.dtype):
            dtype = arg
        elif isinstance(arg, (str, torch.device)):
            _same_device(a, arg)
        elif hasattr(arg, "dtype") and hasattr(arg, "shape"):
            dtype = arg.dtype
            _same_device(a, arg.device)
    return convert(a, dtype)


@register_decomposition(T.type)
def type_(a, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        raise PrimError("type(): expected a dtype; x.type() returns a string, not a tensor")
    if isinstance(dtype, str):
        raise PrimError(f"type: expected a torch.dtype, found the string {dtype!r}")
    return convert(a, dtype)


@register_decomposition(T.type_as)
def type_as(a, other):
    return convert(a, other.dtype)


def _cast(dtype):
    def cast(a, memory_format=None):
        return convert(a, dtype)

    cast.__name__ = str(dtype).replace("torch.", "")
    return cast


for _method, _dtype in (("float", torch.float32), ("half", torch.float16),
                        ("bfloat16", torch.bfloat16), ("double", torch.float64),
                        ("long", torch.int64), ("int", torch.int32), ("bool", torch.bool),
                        ("short", torch.int16), ("char", torch.int8), ("byte", torch.uint8)):
    register_decomposition(getattr(T, _method))(_cast(_dtype))
