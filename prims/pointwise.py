"""Pointwise prims: unary math, binary arithmetic/comparison/logic, where, convert_element_type.

Binary prims take operands of one shape and one dtype (decompositions broadcast and promote
first); either operand may be a Python or sympy scalar, which takes the tensor's dtype.

    add(f32[s0, 4], 1.0) -> f32[s0, 4];  lt(f32[s0], f32[s0]) -> b8[s0]
"""

from __future__ import annotations

import sympy
import torch

from prims.core import PrimError, PrimKind, register_prim
from prims.sizes import concrete, require_same_shape
from symbolic import TensorMeta

FLOAT_ONLY = "float"  # floating (or complex) inputs only
NUMERIC = "numeric"  # anything but bool
INTEGRAL = "integral"  # ints and bool
ANY = "any"


def is_tensor_like(value) -> bool:
    return hasattr(value, "dtype") and hasattr(value, "shape") and not isinstance(
        value, (int, float, bool, sympy.Basic))


def _check_dtype(name: str, dtype: torch.dtype, allowed: str) -> None:
    ok = {
        FLOAT_ONLY: dtype.is_floating_point or dtype.is_complex,
        NUMERIC: dtype != torch.bool,
        INTEGRAL: not dtype.is_floating_point and not dtype.is_complex,
        ANY: True,
    }[allowed]
    if not ok:
        raise PrimError(f"{name}: expected a {allowed} dtype, found {dtype}")


# --------------------------------------------------------------------------- unary
UNARY_RULES = {
    # name: (torch function, allowed input dtypes, output is bool)
    "abs": (torch.abs, NUMERIC, False),
    "neg": (torch.neg, NUMERIC, False),
    "exp": (torch.exp, FLOAT_ONLY, False),
    "exp2": (torch.exp2, FLOAT_ONLY, False),
    "log": (torch.log, FLOAT_ONLY, False),
    "log2": (torch.log2, FLOAT_ONLY, False),
    "log1p": (torch.log1p, FLOAT_ONLY, False),
    "expm1": (torch.expm1, FLOAT_ONLY, False),
    "sqrt": (torch.sqrt, FLOAT_ONLY, False),
    "rsqrt": (torch.rsqrt, FLOAT_ONLY, False),
    "sin": (torch.sin, FLOAT_ONLY, False),
    "cos": (torch.cos, FLOAT_ONLY, False),
    "tan": (torch.tan, FLOAT_ONLY, False),
    "tanh": (torch.tanh, FLOAT_ONLY, False),
    "erf": (torch.erf, FLOAT_ONLY, False),
    "sigmoid": (torch.sigmoid, FLOAT_ONLY, False),
    "reciprocal": (torch.reciprocal, FLOAT_ONLY, False),
    "sign": (torch.sign, NUMERIC, False),
    "floor": (torch.floor, NUMERIC, False),
    "ceil": (torch.ceil, NUMERIC, False),
    "round": (torch.round, NUMERIC, False),
    "trunc": (torch.trunc, NUMERIC, False),
    "logical_not": (torch.logical_not, ANY, True),
    "bitwise_not": (torch.bitwise_not, INTEGRAL, False),
    "isnan": (torch.isnan, ANY, True),
    "isinf": (torch.isinf, ANY, True),
    # the value unchanged, no gradient through it (Tensor.detach); inductor: a no-op
    "stop_gradient": (torch.Tensor.detach, ANY, False),
}


def _unary_meta(name, allowed, to_bool):
    def meta(a):
        if not is_tensor_like(a):
            raise PrimError(f"{name}: expected a tensor, found {type(a).__name__}")
        _check_dtype(name, a.dtype, allowed)
        return TensorMeta.contiguous(a.shape, torch.bool if to_bool else a.dtype, a.device)

    return meta


def _unary_ref(fn):
    def ref(a):
        return fn(a)

    return ref


for _name, (_fn, _allowed, _to_bool) in UNARY_RULES.items():
    register_prim(_name, PrimKind.POINTWISE, _unary_meta(_name, _allowed, _to_bool),
                  _unary_ref(_fn), doc=f"elementwise {_name}", tags={"unary"})


# --------------------------------------------------------------------------- binary
BINARY_RULES = {
    "add": (torch.add, NUMERIC, False),
    "sub": (torch.sub, NUMERIC, False),
    "mul": (torch.mul, NUMERIC, False),
    "div": (torch.true_divide, FLOAT_ONLY, False),
    "floor_divide": (torch.floor_divide, NUMERIC, False),
    "remainder": (torch.remainder, NUMERIC, False),
    "pow": (torch.pow, NUMERIC, False),
    "maximum": (torch.maximum, ANY, False),
    "minimum": (torch.minimum, ANY, False),
    "atan2": (torch.atan2, FLOAT_ONLY, False),
    "eq": (torch.eq, ANY, True),
    "ne": (torch.ne, ANY, True),
    "lt": (torch.lt, ANY, True),
    "le": (torch.le, ANY, True),
    "gt": (torch.gt, ANY, True),
    "ge": (torch.ge, ANY, True),
    "logical_and": (torch.logical_and, ANY, True),
    "logical_or": (torch.logical_or, ANY, True),
    "logical_xor": (torch.logical_xor, ANY, True),
    "bitwise_and": (torch.bitwise_and, INTEGRAL, False),
    "bitwise_or": (torch.bitwise_or, INTEGRAL, False),
    "bitwise_xor": (torch.bitwise_xor, INTEGRAL, False),
}


def binary_meta_of(name: str, a, b, allowed: str = ANY, to_bool: bool = False) -> TensorMeta:
    ta, tb = is_tensor_like(a), is_tensor_like(b)
    if not (ta or tb):
        raise PrimError(f"{name}: expected at least one tensor operand, found {a!r} and {b!r}")
    for scalar in (x for x, t in ((a, ta), (b, tb)) if not t):
        if not isinstance(scalar, (int, float, bool, sympy.Basic)):
            raise PrimError(f"{name}: expected a tensor or scalar, found {type(scalar).__name__}")
    if ta and tb:
        if a.dtype != b.dtype:
            raise PrimError(f"{name}: expected operands of one dtype, found {a.dtype} and "
                            f"{b.dtype} (promote in the decomposition)")
        require_same_shape(a.shape, b.shape, name)
    t = a if ta else b
    _check_dtype(name, t.dtype, allowed)
    return TensorMeta.contiguous(t.shape, torch.bool if to_bool else t.dtype, t.device)


def _binary_meta(name, allowed, to_bool):
    def meta(a, b):
        return binary_meta_of(name, a, b, allowed, to_bool)

    return meta


def _as_operand(value, other):
    """A scalar operand as a 0-dim tensor of the other operand's dtype (the prim's semantics)."""
    if is_tensor_like(value):
        return value
    return torch.tensor(concrete(value), device=other.device).to(other.dtype)


def _binary_ref(fn, to_bool):
    def ref(a, b):
        t = a if is_tensor_like(a) else b
        out = fn(_as_operand(a, t), _as_operand(b, t))
        dtype = torch.bool if to_bool else t.dtype
        return out if out.dtype == dtype else out.to(dtype)

    return ref


for _name, (_fn, _allowed, _to_bool) in BINARY_RULES.items():
    register_prim(_name, PrimKind.POINTWISE, _binary_meta(_name, _allowed, _to_bool),
                  _binary_ref(_fn, _to_bool), doc=f"elementwise {_name}", tags={"binary"})


# --------------------------------------------------------------------------- where, convert
def _where_meta(cond, a, b):
    if not is_tensor_like(cond) or cond.dtype != torch.bool:
        raise PrimError(f"where: expected a bool tensor condition, found {cond!r}")
    values = [v for v in (a, b) if is_tensor_like(v)]
    if not values:
        raise PrimError("where: expected at least one tensor value, found two scalars")
    if len(values) == 2 and a.dtype != b.dtype:
        raise PrimError(f"where: expected values of one dtype, found {a.dtype} and {b.dtype}")
    for v in values:
        require_same_shape(cond.shape, v.shape, "where")
    return TensorMeta.contiguous(cond.shape, values[0].dtype, values[0].device)


def _where_ref(cond, a, b):
    t = a if is_tensor_like(a) else b
    out = torch.where(cond, _as_operand(a, t), _as_operand(b, t))
    return out if out.dtype == t.dtype else out.to(t.dtype)


def _convert_meta(a, dtype):
    if not isinstance(dtype, torch.dtype):
        raise PrimError(f"convert_element_type: expected a torch.dtype, found {dtype!r}")
    return TensorMeta.contiguous(a.shape, dtype, a.device)


def _convert_ref(a, dtype):
    return a.to(dtype)


register_prim("where", PrimKind.POINTWISE, _where_meta, _where_ref,
              doc="cond ? a : b elementwise")
register_prim("convert_element_type", PrimKind.POINTWISE, _convert_meta, _convert_ref,
              doc="cast to dtype")
