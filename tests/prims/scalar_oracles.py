"""Independent oracles for the pointwise prims: each element through Python's own arithmetic
(`math`, `operator`, ints of unbounded size), never the torch function a prim's reference calls.

    expected = elementwise(UNARY_ORACLES["sigmoid"], torch.float32, x)
"""

from __future__ import annotations

import math
import operator

import torch


def _sign(x):
    return (x > 0) - (x < 0)


def _sigmoid(x):
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _not(x):
    return not x if isinstance(x, bool) else ~x


UNARY_ORACLES = {
    "abs": abs, "neg": operator.neg, "exp": math.exp, "exp2": lambda x: 2.0 ** x,
    "log": math.log, "log2": math.log2, "log1p": math.log1p, "expm1": math.expm1,
    "sqrt": math.sqrt, "rsqrt": lambda x: 1.0 / math.sqrt(x), "sin": math.sin, "cos": math.cos,
    "tan": math.tan, "tanh": math.tanh, "erf": math.erf, "sigmoid": _sigmoid,
    "reciprocal": lambda x: 1.0 / x, "sign": _sign, "floor": math.floor, "ceil": math.ceil,
    "round": round,  # Python rounds half to even, as torch.round does
    "trunc": math.trunc, "logical_not": lambda x: not x, "bitwise_not": _not,
    "isnan": lambda x: isinstance(x, float) and math.isnan(x),
    "isinf": lambda x: isinstance(x, float) and math.isinf(x),
    "stop_gradient": lambda x: x,
}

BINARY_ORACLES = {
    "add": operator.add, "sub": operator.sub, "mul": operator.mul, "div": operator.truediv,
    "floor_divide": lambda a, b: math.floor(a / b) if isinstance(a, float) else a // b,
    "remainder": lambda a, b: a - math.floor(a / b) * b if isinstance(a, float) else a % b,
    "pow": operator.pow, "maximum": max, "minimum": min, "atan2": math.atan2,
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge,
    "logical_and": lambda a, b: bool(a) and bool(b), "logical_or": lambda a, b: bool(a) or bool(b),
    "logical_xor": lambda a, b: bool(a) != bool(b),
    "bitwise_and": operator.and_, "bitwise_or": operator.or_, "bitwise_xor": operator.xor,
}


def _python(value, dtype):
    """Elements as Python scalars of the operand dtype's kind (float, int or bool)."""
    if dtype == torch.bool:
        return bool(value)
    return float(value) if dtype.is_floating_point else int(value)


def elementwise(fn, out_dtype, *operands):
    """Apply a scalar function to broadcast tensor/scalar operands; a tensor of `out_dtype`.

    The operands' elements are computed in Python (float64 or exact ints) and then rounded
    once to `out_dtype`."""
    tensors = [o for o in operands if isinstance(o, torch.Tensor)]
    dtype = tensors[0].dtype
    shape = torch.broadcast_shapes(*(t.shape for t in tensors))
    columns = [[_python(v, dtype) for v in o.expand(shape).reshape(-1).tolist()]
               if isinstance(o, torch.Tensor) else None for o in operands]
    count = math.prod(shape)
    rows = zip(*(c if c is not None else [_python(o, dtype)] * count
                 for c, o in zip(columns, operands, strict=True)), strict=True)
    values = [fn(*row) for row in rows]
    exact = torch.float64 if out_dtype.is_floating_point else out_dtype
    return torch.tensor(values, dtype=exact).reshape(shape).to(out_dtype)
