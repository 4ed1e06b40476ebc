"""View and layout prims: broadcast_in_dim, reshape, permute, slice, squeeze, flip, cat, pad.

Outputs are described as contiguous (prims graphs are functional; inductor picks layouts).
`slice` takes bounds already clamped by the decomposition (0 <= start <= stop <= size), which
it requires rather than re-clamps, so its size is a plain `ceil((stop - start) / step)`.

    broadcast_in_dim(f32[s1], (s0, s1), (1,)) -> f32[s0, s1]
"""

from __future__ import annotations

import sympy
import torch

from prims.core import PrimError, PrimKind, register_prim
from prims.sizes import (
    _equal_symbolic_sizes,
    as_expr,
    check_dims,
    concrete,
    floordiv,
    is_one,
    prod,
    require,
    require_same_size,
    analyzer,
)
from symbolic import TensorMeta


def _contig(shape, like) -> TensorMeta:
    return TensorMeta.contiguous(tuple(shape), like.dtype, like.device)


def _check_sizes(shape, what):
    for s in shape:
        if not isinstance(s, (int, sympy.Basic)) or isinstance(s, bool):
            raise PrimError(f"{what}: expected int or sympy sizes, found {shape}")
        if isinstance(s, int) and s < 0:
            raise PrimError(f"{what}: expected non-negative sizes, found {shape}")
    return tuple(shape)


# --------------------------------------------------------------------------- broadcast_in_dim
def _broadcast_in_dim_meta(a, shape, broadcast_dims):
    shape = _check_sizes(shape, "broadcast_in_dim")
    broadcast_dims = tuple(broadcast_dims)
    if len(broadcast_dims) != a.ndim:
        raise PrimError(f"broadcast_in_dim: expected {a.ndim} broadcast_dims, found "
                        f"{broadcast_dims}")
    if list(broadcast_dims) != sorted(set(broadcast_dims)) or any(
            not 0 <= d < len(shape) for d in broadcast_dims):
        raise PrimError(f"broadcast_in_dim: expected increasing dims in [0, {len(shape)}), "
                        f"found {broadcast_dims}")
    for i, d in enumerate(broadcast_dims):
        # Equal at the example: the guard `a == b` (a size 1 later still passes it), not `a != 1`.
        an = analyzer()
        if an.equal(a.shape[i], shape[d]) or _equal_symbolic_sizes(an, a.shape[i], shape[d]):
            continue
        if not is_one(a.shape[i]):
            require_same_size(a.shape[i], shape[d], f"broadcast_in_dim: dim {i} of {a}")
    return _contig(shape, a)


def _broadcast_in_dim_ref(a, shape, broadcast_dims):
    shape = tuple(concrete(s) for s in shape)
    view = [1] * len(shape)
    for i, d in enumerate(broadcast_dims):
        view[d] = a.shape[i]
    return a.reshape(view).expand(shape)


# --------------------------------------------------------------------------- reshape, permute
def _reshape_meta(a, shape):
    shape = _check_sizes(shape, "reshape")
    old, new = a.numel(), prod(as_expr(s) for s in shape)
    if not analyzer().equal(old, new):
        require(sympy.Eq(old, new), f"reshape: expected {tuple(shape)} to have the {old} "
                                    f"elements of {a}")
    return _contig(shape, a)


def _reshape_ref(a, shape):
    return a.reshape(tuple(concrete(s) for s in shape))


def _permute_meta(a, dims):
    dims = tuple(dims)
    if sorted(dims) != list(range(a.ndim)):
        raise PrimError(f"permute: expected a permutation of range({a.ndim}), found {dims}")
    return _contig([a.shape[d] for d in dims], a)


def _permute_ref(a, dims):
    return a.permute(tuple(dims))


# --------------------------------------------------------------------------- slice, squeeze
def slice_length(start, stop, step):
    """Elements of range(start, stop, step) for 0 <= start <= stop and step >= 1."""
    return floordiv(as_expr(stop) - as_expr(start) + as_expr(step) - 1, as_expr(step))


def _slice_meta(a, dim, start, stop, step=1):
    check_dims((dim,), a.ndim, "slice")
    if isinstance(step, int) and step < 1:
        raise PrimError(f"slice: expected a positive step, found {step}")
    size = a.shape[dim]
    start, stop, step = as_expr(start), as_expr(stop), as_expr(step)
    for cond in (sympy.Ge(start, 0), sympy.Le(start, stop), sympy.Le(stop, size),
                 sympy.Ge(step, 1)):
        require(cond, f"slice: expected 0 <= start <= stop <= {size} and step >= 1, found "
                      f"start={start}, stop={stop}, step={step}")
    shape = list(a.shape)
    shape[dim] = slice_length(start, stop, step)
    return _contig(shape, a)


def _slice_ref(a, dim, start, stop, step=1):
    index = (slice(None),) * dim + (slice(concrete(start), concrete(stop), concrete(step)),)
    return a[index]


def _squeeze_meta(a, dims):
    dims = check_dims(dims, a.ndim, "squeeze")
    for d in dims:
        if not analyzer().equal(a.shape[d], 1):
            require(sympy.Eq(as_expr(a.shape[d]), 1),
                    f"squeeze: expected size 1 at dim {d} of {a}")
    return _contig([s for i, s in enumerate(a.shape) if i not in dims], a)


def _squeeze_ref(a, dims):
    shape = [s for i, s in enumerate(a.shape) if i not in dims]
    return a.reshape(shape)


# --------------------------------------------------------------------------- flip, cat, pad
def _flip_meta(a, dims):
    check_dims(dims, a.ndim, "flip")
    return _contig(a.shape, a)


def _flip_ref(a, dims):
    return torch.flip(a, tuple(dims)) if dims else a.clone()


def _cat_meta(tensors, dim):
    tensors = tuple(tensors)
    if not tensors:
        raise PrimError("cat: expected at least one tensor, found none")
    first = tensors[0]
    check_dims((dim,), first.ndim, "cat")
    total = sympy.Integer(0)
    for i, t in enumerate(tensors):
        if t.dtype != first.dtype or t.ndim != first.ndim:
            raise PrimError(f"cat: expected tensors like {first}, found {t} at position {i}")
        for d in range(first.ndim):
            if d != dim:
                require_same_size(first.shape[d], t.shape[d], f"cat: dim {d} of tensor {i}")
        total = total + as_expr(t.shape[dim])
    shape = list(first.shape)
    shape[dim] = total
    return _contig(shape, first)


def _cat_ref(tensors, dim):
    return torch.cat(list(tensors), dim)


def _pad_meta(a, pads, value):
    pads = tuple(tuple(p) for p in pads)
    if len(pads) != a.ndim or any(len(p) != 2 for p in pads):
        raise PrimError(f"pad: expected {a.ndim} (lo, hi) pairs, found {pads}")
    shape = []
    for size, (lo, hi) in zip(a.shape, pads):
        for pad in (lo, hi):
            require(sympy.Ge(as_expr(pad), 0), f"pad: expected non-negative pads, found {pads}")
        shape.append(as_expr(size) + as_expr(lo) + as_expr(hi))
    return _contig(shape, a)


def _pad_ref(a, pads, value):
    flat = []
    for lo, hi in reversed(pads):
        flat += [concrete(lo), concrete(hi)]
    return torch.nn.functional.pad(a, flat, mode="constant", value=concrete(value))


for _name, _meta, _ref, _doc in (
    ("broadcast_in_dim", _broadcast_in_dim_meta, _broadcast_in_dim_ref,
     "operand dim i goes to output dim broadcast_dims[i]; size-1 dims stretch"),
    ("reshape", _reshape_meta, _reshape_ref, "same elements, new shape (row-major)"),
    ("permute", _permute_meta, _permute_ref, "output dim i is input dim dims[i]"),
    ("slice", _slice_meta, _slice_ref, "a[start:stop:step] along dim, bounds pre-clamped"),
    ("squeeze", _squeeze_meta, _squeeze_ref, "drop dims of size 1"),
    ("flip", _flip_meta, _flip_ref, "reverse along dims"),
    ("cat", _cat_meta, _cat_ref, "concatenate along dim"),
    ("pad", _pad_meta, _pad_ref, "constant padding, ((lo, hi), ...) per dim"),
):
    register_prim(_name, PrimKind.VIEW, _meta, _ref, doc=_doc)
