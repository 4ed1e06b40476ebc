"""Whole-tensor comparisons whose torch result is a Python bool: allclose, equal.

Each decomposes to a 0-d bool tensor; capture reads it as the Python bool after the graph ran
(prims.return_types.python_scalar_type names these calls). Shapes that differ make `equal`
the constant False for every size the shape guards admit.

    torch.equal(a f32[s0], b f32[s0]) -> all(eq(a, b), (0,)) : bool[]  (read as a bool)
"""

from __future__ import annotations

import sympy
import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import convert, ndim_of, reshape, shape_of
from prims.decompositions.misc import isclose
from prims.decompositions.registry import register_decomposition
from prims.promotion import result_type
from prims.sizes import as_expr, guard_true

T = torch.Tensor


def _all(flags):
    """One bool: every element of `flags` is true (an empty tensor included)."""
    n = ndim_of(flags)
    return ops.all(flags, tuple(range(n))) if n else flags


@register_decomposition(torch.allclose, T.allclose)
def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if a.dtype != b.dtype:
        raise PrimError(f"allclose: expected one dtype, found {a.dtype} and {b.dtype}")
    return _all(isclose(a, b, rtol, atol, equal_nan))


@register_decomposition(torch.equal, T.equal)
def equal(a, b):
    """Same shape and the same values (NaN differs from itself), after type promotion."""
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) != len(sb) or not all(
            guard_true(sympy.Eq(as_expr(x), as_expr(y)), "equal") for x, y in zip(sa, sb)):
        return False
    if a.device != b.device:
        raise PrimError(f"equal: expected one device, found {a.device} and {b.device}")
    dtype = result_type(a, b)
    a, b = convert(a, dtype), convert(b, dtype)
    return _all(ops.eq(a, reshape(b, sa) if sa != sb else b))
