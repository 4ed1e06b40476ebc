"""Scan prims: inclusive cumulative sum and product along one dim, dtype kept.

    cumsum(f32[s0, 8], 0) -> f32[s0, 8]
"""

from __future__ import annotations

import torch

from prims.core import PrimError, PrimKind, register_prim
from prims.sizes import check_dims
from symbolic import TensorMeta


def _scan_meta(name):
    def meta(a, dim):
        check_dims((dim,), a.ndim, name)
        if a.dtype == torch.bool:
            raise PrimError(f"{name}: expected a numeric dtype, found bool (convert first)")
        return TensorMeta.contiguous(a.shape, a.dtype, a.device)

    return meta


def _cumsum_ref(a, dim):
    return torch.cumsum(a, dim, dtype=a.dtype)


def _cumprod_ref(a, dim):
    return torch.cumprod(a, dim, dtype=a.dtype)


register_prim("cumsum", PrimKind.SCAN, _scan_meta("cumsum"), _cumsum_ref,
              doc="inclusive cumulative sum along dim")
register_prim("cumprod", PrimKind.SCAN, _scan_meta("cumprod"), _cumprod_ref,
              doc="inclusive cumulative product along dim")
