"""Type promotion agrees with torch.result_type over a table of operand mixes."""

from __future__ import annotations

import pytest
import sympy
import torch

from prims.promotion import Promotion, elementwise_dtypes, result_type

F16, F32, F64, BF16 = torch.float16, torch.float32, torch.float64, torch.bfloat16
I8, I32, I64, U8, BOOL = torch.int8, torch.int32, torch.int64, torch.uint8, torch.bool


def t(dtype, ndim=1):
    return torch.zeros((2,) * ndim, dtype=dtype)


CASES = [
    (t(F32), t(F16)), (t(F16), 2.5), (t(I32), 2.5), (t(I32), 2), (t(BOOL), 2), (t(BOOL), True),
    (t(I32), t(F64, 0)), (t(F16), t(F64, 0)), (t(I8), t(I64, 0)), (t(U8), t(I8)),
    (t(BF16), t(F16)), (t(I64), t(F16, 0)), (t(BOOL), t(U8, 0)), (t(F16, 0), 2.5),
    (t(I32, 0), t(F16, 0)), (t(BF16), 1), (t(BOOL), 1.5), (t(I64), True),
]


@pytest.mark.parametrize("operands", CASES, ids=lambda ops: " ".join(
    str(o.dtype if isinstance(o, torch.Tensor) else o) + (
        "[]" if isinstance(o, torch.Tensor) and o.ndim == 0 else "") for o in ops))
def test_result_type_matches_torch(operands):
    assert result_type(*operands) == torch.result_type(*operands)


def test_sympy_sizes_promote_as_ints():
    s0 = sympy.Symbol("s0", integer=True, positive=True)
    assert result_type(t(I32), s0) == I32
    assert result_type(t(F16), s0 * 2) == F16


@pytest.mark.parametrize("operands, kind, expected", [
    ((t(F16), t(F16)), Promotion.DEFAULT, (F32, F16)),
    ((t(BF16), 1.0), Promotion.DEFAULT, (F32, BF16)),
    ((t(I32),), Promotion.INT_TO_FLOAT, (F32, F32)),
    ((t(F16), 0.0), Promotion.ALWAYS_BOOL, (F16, BOOL)),
    ((t(BOOL),), Promotion.BOOL_TO_LONG, (I64, I64)),
    ((t(F16),), Promotion.NO_OPMATH, (F16, F16)),
])
def test_elementwise_dtypes_compute_and_result(operands, kind, expected):
    assert elementwise_dtypes(*operands, kind=kind) == expected
