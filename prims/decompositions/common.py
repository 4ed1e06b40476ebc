"""Helpers every decomposition uses: tensor tests, dims, broadcasting, casts, keepdim.

They call prims only, so they work on real tensors, TensorMetas and TracedTensors alike.

    pointwise(ops.add, x, 1.0)   # promote (f16 computes in f32), broadcast, add, cast back
"""

from __future__ import annotations

import sympy
import torch

from prims import ops
from prims.core import PrimError
from prims.promotion import Promotion, elementwise_dtypes
from prims.sizes import analyzer, broadcast_shapes, known_true, normalize_dim
from prims.trace import TracedTensor
from symbolic import TensorMeta

TENSOR_TYPES = (torch.Tensor, TensorMeta, TracedTensor)


def is_tensor(value) -> bool:
    return isinstance(value, TENSOR_TYPES)


def shape_of(a) -> tuple:
    return tuple(a.shape)


def ndim_of(a) -> int:
    return len(a.shape)


def numel_of(a):
    out = 1
    for s in a.shape:
        out = out * s
    return out


def device_of(a):
    return a.device


def wrap_dim(dim: int, ndim: int) -> int:
    return normalize_dim(dim, ndim)


def wrap_dims(dims, ndim: int) -> tuple[int, ...]:
    """`dim` arguments of reductions: None / int / sequence -> sorted distinct dims."""
    if dims is None:
        return tuple(range(ndim))
    if isinstance(dims, int):
        dims = (dims,)
    if ndim == 0:  # reducing a 0-dim tensor over dim 0 / -1 leaves it as it is
        return ()
    return tuple(sorted({wrap_dim(d, ndim) for d in dims}))


def convert(a, dtype):
    """`a` in `dtype` (no node when it already is)."""
    if dtype is None or a.dtype == dtype:
        return a
    return ops.convert_element_type(a, dtype)


def broadcast_to(a, shape):
    """`a` broadcast to `shape` (torch semantics: align on the right)."""
    shape = tuple(shape)
    a_shape = shape_of(a)
    if len(a_shape) == len(shape) and all(map(analyzer().equal, a_shape, shape)):
        return a
    if len(a_shape) > len(shape):
        raise PrimError(f"expand: expected at most {len(shape)} dims, found {a_shape}")
    offset = len(shape) - len(a_shape)
    return ops.broadcast_in_dim(a, shape, tuple(range(offset, len(shape))))


def broadcast_tensors(*values):
    """Tensors broadcast to their common shape; scalars left alone."""
    shapes = [shape_of(v) for v in values if is_tensor(v)]
    shape = broadcast_shapes(*shapes)
    return tuple(broadcast_to(v, shape) if is_tensor(v) else v for v in values)


def pointwise(prim, *args, kind: Promotion = Promotion.DEFAULT):
    """Promote, broadcast, call `prim`, cast to the result dtype."""
    compute, result = elementwise_dtypes(*args, kind=kind)
    args = tuple(convert(a, compute) if is_tensor(a) else a for a in args)
    args = broadcast_tensors(*args)
    out = prim(*args)
    return convert(out, result)


def unary_float(prim, a):
    """A float-only unary prim on `a`: ints become the default float, f16 computes in f32."""
    return pointwise(prim, a, kind=Promotion.INT_TO_FLOAT)


def keepdim_shape(shape, dims) -> tuple:
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def restore_dims(out, shape, dims):
    """Re-insert reduced `dims` as size-1 dims (keepdim=True)."""
    kept = tuple(i for i in range(len(shape)) if i not in dims)
    return ops.broadcast_in_dim(out, keepdim_shape(shape, dims), kept)


def unsqueeze(a, dim: int):
    shape = list(shape_of(a))
    dim = normalize_dim(dim, len(shape) + 1)
    new = (*shape[:dim], 1, *shape[dim:])
    kept = tuple(i for i in range(len(new)) if i != dim)
    return ops.broadcast_in_dim(a, new, kept)


def reshape(a, shape):
    shape = tuple(shape)
    if len(shape) == ndim_of(a) and all(map(analyzer().equal, shape_of(a), shape)):
        return a
    if known_true(sympy.Eq(numel_of(a), 0)):
        return _empty_reshape(a, shape)
    return ops.reshape(a, shape)


def _empty_reshape(a, shape):
    """A reshape of a tensor with no elements: nothing to index (a kernel's index arithmetic
    would divide by the zero size), so the result is built, not viewed; a floating input stays
    connected through its (zero) sum so its gradient is zeros, as in eager."""
    if not a.dtype.is_floating_point:
        return ops.full(shape, 0, a.dtype, a.device)
    return ops.broadcast_in_dim(ops.sum(a, tuple(range(ndim_of(a)))), shape, ())


def parse_size(args) -> tuple:
    """`f(2, 3)`, `f((2, 3))`, `f([2, 3])`, `f(torch.Size(...))` -> (2, 3)."""
    if len(args) == 1 and isinstance(args[0], (tuple, list, torch.Size)):
        return tuple(args[0])
    return tuple(args)
