"""Reduction prims: the output drops `dims` (distinct ints in [0, ndim)); dtype is kept.

sum/prod/amax/amin keep the input dtype (decompositions upcast ints and f16 first); any/all give
bool; argmax/argmin reduce one dim to int64; var_mean uses Welford and returns (var, mean).

    sum(f32[s0, s1, 8], (1,)) -> f32[s0, 8]
"""

from __future__ import annotations

import math

import torch

from prims.core import PrimError, PrimKind, register_prim
from prims.sizes import check_dims
from symbolic import TensorMeta


def reduced_shape(shape, dims) -> tuple:
    return tuple(s for i, s in enumerate(shape) if i not in dims)


def _reduction_meta(name, out_dtype=None, no_bool=False):
    def meta(a, dims):
        dims = check_dims(dims, a.ndim, name)
        if no_bool and a.dtype == torch.bool:
            raise PrimError(f"{name}: expected a numeric dtype, found bool (convert first)")
        dtype = out_dtype or a.dtype
        return TensorMeta.contiguous(reduced_shape(a.shape, dims), dtype, a.device)

    return meta


def _sum_ref(a, dims):
    return a.clone() if not dims else torch.sum(a, dims, dtype=a.dtype)


def _prod_ref(a, dims):
    out = a
    for d in sorted(dims, reverse=True):
        out = torch.prod(out, d, dtype=a.dtype)
    return out.clone() if not dims else out


def _amax_ref(a, dims):
    return _extreme_ref(torch.amax, a, dims, lowest=True)


def _amin_ref(a, dims):
    return _extreme_ref(torch.amin, a, dims, lowest=False)


def _extreme_ref(fn, a, dims, lowest: bool):
    """amax/amin; over no elements (softmax of an empty dim) the identity, -inf or +inf (the
    dtype's extreme for ints), like the generated kernels, where torch would raise."""
    if not dims or a.ndim == 0:
        return a.clone()
    if all(a.shape[d] for d in dims):
        return fn(a, dims)
    shape = [s for i, s in enumerate(a.shape) if i not in dims]
    if a.dtype.is_floating_point:
        value = -math.inf if lowest else math.inf
    elif a.dtype == torch.bool:
        value = not lowest
    else:
        info = torch.iinfo(a.dtype)
        value = info.min if lowest else info.max
    return torch.full(shape, value, dtype=a.dtype, device=a.device)


def _any_ref(a, dims):
    out = a != 0
    for d in sorted(dims, reverse=True):
        out = torch.any(out, d) if a.ndim else out
    return out


def _all_ref(a, dims):
    out = a != 0
    for d in sorted(dims, reverse=True):
        out = torch.all(out, d) if a.ndim else out
    return out


def _arg_meta(name):
    def meta(a, dim):
        if not isinstance(dim, int) or not 0 <= dim < max(a.ndim, 1):
            raise PrimError(f"{name}: expected a dim in [0, {a.ndim}), found {dim!r}")
        shape = reduced_shape(a.shape, (dim,)) if a.ndim else ()
        return TensorMeta.contiguous(shape, torch.int64, a.device)

    return meta


def _argmax_ref(a, dim):
    return torch.argmax(a, dim) if a.ndim else torch.zeros((), dtype=torch.int64)


def _argmin_ref(a, dim):
    return torch.argmin(a, dim) if a.ndim else torch.zeros((), dtype=torch.int64)


def _var_mean_meta(a, dims, correction):
    dims = check_dims(dims, a.ndim, "var_mean")
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        raise PrimError(f"var_mean: expected a floating dtype, found {a.dtype}")
    out = TensorMeta.contiguous(reduced_shape(a.shape, dims), a.dtype, a.device)
    return (out, out)


def _var_mean_ref(a, dims, correction):
    if not dims:
        return torch.zeros_like(a) * float("nan") if correction else torch.zeros_like(a), a.clone()
    var, mean = torch.var_mean(a, dims, correction=correction)
    return var, mean


for _name, _ref, _out, _no_bool in (
    ("sum", _sum_ref, None, True),
    ("prod", _prod_ref, None, True),
    ("amax", _amax_ref, None, False),
    ("amin", _amin_ref, None, False),
    ("any", _any_ref, torch.bool, False),
    ("all", _all_ref, torch.bool, False),
):
    register_prim(_name, PrimKind.REDUCTION, _reduction_meta(_name, _out, _no_bool), _ref,
                  doc=f"{_name} over dims")

register_prim("argmax", PrimKind.REDUCTION, _arg_meta("argmax"), _argmax_ref,
              doc="index of the first maximum along dim")
register_prim("argmin", PrimKind.REDUCTION, _arg_meta("argmin"), _argmin_ref,
              doc="index of the first minimum along dim")
register_prim("var_mean", PrimKind.REDUCTION, _var_mean_meta, _var_mean_ref,
              doc="(variance with `correction`, mean) over dims, Welford")

__all__ = ["reduced_shape"]
