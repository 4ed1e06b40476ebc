"""Creation prims: iota (an arithmetic sequence) and full (a constant tensor).

    iota(s0, 0, 1, torch.int64, cpu) -> i64[s0]
    full((s0, 4), 0.0, torch.float32, cpu) -> f32[s0, 4]
"""

from __future__ import annotations

import sympy
import torch

from prims.core import PrimError, PrimKind, register_prim
from prims.sizes import concrete
from symbolic import TensorMeta


def _check_size(size, what):
    if isinstance(size, bool) or not isinstance(size, (int, sympy.Basic)):
        raise PrimError(f"{what}: expected an int or sympy size, found {size!r}")
    if isinstance(size, int) and size < 0:
        raise PrimError(f"{what}: expected a non-negative size, found {size}")


def _iota_meta(length, start, step, dtype, device):
    _check_size(length, "iota")
    if not isinstance(dtype, torch.dtype) or dtype == torch.bool:
        raise PrimError(f"iota: expected a numeric torch.dtype, found {dtype!r}")
    return TensorMeta.contiguous((length,), dtype, device)


def _iota_ref(length, start, step, dtype, device):
    wide = torch.float64 if dtype.is_floating_point else torch.int64
    base = torch.arange(concrete(length), dtype=wide, device=device)
    return (base * concrete(step) + concrete(start)).to(dtype)


def _full_meta(shape, value, dtype, device):
    for s in shape:
        _check_size(s, "full")
    if not isinstance(dtype, torch.dtype):
        raise PrimError(f"full: expected a torch.dtype, found {dtype!r}")
    return TensorMeta.contiguous(tuple(shape), dtype, device)


def _full_ref(shape, value, dtype, device):
    return torch.full(tuple(concrete(s) for s in shape), concrete(value), dtype=dtype,
                      device=device)


register_prim("iota", PrimKind.CREATION, _iota_meta, _iota_ref,
              doc="start + step * [0, 1, ..., length-1]")
register_prim("full", PrimKind.CREATION, _full_meta, _full_ref, doc="a tensor filled with value")
