"""Type promotion: torch's rules for the result dtype of an elementwise op, in one place.

Operands are ranked: tensors with dims, then 0-dim tensors, then Python/sympy scalars. A lower
rank changes the result only when its *category* (bool < int < float < complex) is higher; a
scalar then contributes the default dtype of its category.

    result_type(i32[s0], 2.5) -> float32;  result_type(f16[s0], f32[]) -> float16
"""

from __future__ import annotations

import enum
import functools

import sympy
import torch

from prims.core import PrimError

_BOOL, _INT, _FLOAT, _COMPLEX = range(4)
LOW_PRECISION = (torch.float16, torch.bfloat16)


class Promotion(enum.Enum):
    DEFAULT = "default"  # result_type; compute low-precision floats in f32
    INT_TO_FLOAT = "int_to_float"  # like DEFAULT, but ints and bools give the default float
    ALWAYS_BOOL = "always_bool"  # comparisons: compute in result_type, return bool
    BOOL_TO_LONG = "bool_to_long"  # sums: bool gives int64
    NO_OPMATH = "no_opmath"  # compute in the result dtype itself


def category(dtype: torch.dtype) -> int:
    if dtype == torch.bool:
        return _BOOL
    if dtype.is_complex:
        return _COMPLEX
    if dtype.is_floating_point:
        return _FLOAT
    return _INT


def _is_tensor(value) -> bool:
    return hasattr(value, "dtype") and hasattr(value, "shape") and not isinstance(
        value, sympy.Basic)


def scalar_category(value) -> int:
    if isinstance(value, bool) or value in (sympy.true, sympy.false):
        return _BOOL
    if isinstance(value, int):
        return _INT
    if isinstance(value, float):
        return _FLOAT
    if isinstance(value, complex):
        return _COMPLEX
    if isinstance(value, sympy.Basic):
        return _INT if value.is_integer else _FLOAT
    raise PrimError(f"type promotion: expected a tensor or a scalar, found {value!r}")


def default_dtype(cat: int) -> torch.dtype:
    return {
        _BOOL: torch.bool,
        _INT: torch.int64,
        _FLOAT: torch.get_default_dtype(),
        _COMPLEX: torch.complex64 if torch.get_default_dtype() == torch.float32
        else torch.complex128,
    }[cat]


def _combine(dtypes) -> torch.dtype:
    return functools.reduce(torch.promote_types, dtypes)


def result_type(*operands) -> torch.dtype:
    """The dtype torch gives an elementwise op on `operands` (tensors and scalars)."""
    dims = [o.dtype for o in operands if _is_tensor(o) and len(o.shape) > 0]
    zero_dims = [o.dtype for o in operands if _is_tensor(o) and len(o.shape) == 0]
    scalars = [o for o in operands if not _is_tensor(o) and o is not None]
    result = None
    for group in (dims, zero_dims):
        if group:
            candidate = _combine(group)
            if result is None or category(candidate) > category(result):
                result = candidate
    if scalars:
        cat = max(scalar_category(s) for s in scalars)
        if result is None or cat > category(result):
            result = default_dtype(cat)
            if result_is_complex_from_float(result, dims + zero_dims):
                result = torch.complex128
    if result is None:
        raise PrimError("type promotion: expected at least one operand, found none")
    return result


def result_is_complex_from_float(result, dtypes) -> bool:
    """A complex scalar with a float64 tensor gives complex128."""
    return result.is_complex and torch.float64 in dtypes


def opmath(dtype: torch.dtype) -> torch.dtype:
    """The dtype to compute in: low-precision floats are computed in float32."""
    return torch.float32 if dtype in LOW_PRECISION else dtype


def elementwise_dtypes(*operands, kind: Promotion = Promotion.DEFAULT):
    """(compute dtype, result dtype) of an elementwise op on `operands` under `kind`."""
    result = result_type(*operands)
    if kind is Promotion.INT_TO_FLOAT and category(result) < _FLOAT:
        result = torch.get_default_dtype()
    if kind is Promotion.BOOL_TO_LONG and result == torch.bool:
        result = torch.int64
    if kind is Promotion.ALWAYS_BOOL:
        return result, torch.bool
    if kind is Promotion.NO_OPMATH:
        return result, result
    return opmath(result), result
