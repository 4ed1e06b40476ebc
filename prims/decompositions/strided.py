"""as_strided, as_strided_copy and as_strided_scatter as index arithmetic over the flat input.

The element at position (i0, i1, ...) of `as_strided(a, size, stride, offset)` is storage
element `offset + i0 * stride0 + i1 * stride1 + ...`. Capture lets these ops through only for an
input that is its whole storage in order (contiguous, offset 0, guarded: capture/layout.py), so
the storage index is the flat index of `a`; a gather of it reads, an index_put writes, and their
VJPs are the scatter-add / gather eager's as_strided backward computes.

    torch.as_strided(a f32[3, 3], (2, 2), (1, 2), 1)
        -> reshape(index_select(reshape(a, (9,)), 0, reshape(1 + iota*1 + iota*2, (4,))), (2, 2))
"""

from __future__ import annotations

import sympy
import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import convert, numel_of, reshape, shape_of
from prims.decompositions.registry import register_decomposition
from prims.sizes import as_expr, require, require_same_size

T = torch.Tensor


def _storage_index(a, size, stride, storage_offset, what: str):
    """(flat i64 index of every element of the strided view, its shape); bounds asserted."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise PrimError(f"{what}: expected as many strides as sizes, found {len(stride)} strides "
                        f"for {len(size)} sizes")
    offset = 0 if storage_offset is None else storage_offset
    for value, name in ((offset, "storage offset"), *((s, "stride") for s in stride)):
        if not isinstance(value, int) or value < 0:
            raise PrimError(f"{what}: expected a non-negative int {name}, found {value!r}")
    numel = 1
    last = as_expr(offset)
    for n, s in zip(size, stride, strict=True):
        numel = numel * as_expr(n)
        last = last + (as_expr(n) - 1) * s
    # eager checks the view fits the storage (here: the input's elements)
    require(sympy.Or(sympy.Eq(numel, 0), sympy.Lt(last, numel_of(a))),
            f"{what}: the view of sizes {size}, strides {stride} and offset {offset} reads past "
            f"the input's {numel_of(a)} elements")
    index = ops.full((), offset, torch.int64, a.device)
    for d, (n, s) in enumerate(zip(size, stride, strict=True)):
        step = ops.broadcast_in_dim(ops.iota(n, 0, s, torch.int64, a.device), size, (d,))
        index = ops.add(ops.broadcast_in_dim(index, size, tuple(range(d))), step) \
            if d == 0 else ops.add(index, step)
    return reshape(index, (numel,)), size


@register_decomposition(torch.as_strided, T.as_strided, torch.as_strided_copy)
def as_strided(a, size, stride, storage_offset=None):
    index, shape = _storage_index(a, size, stride, storage_offset, "as_strided")
    flat = reshape(a, (numel_of(a),))
    return reshape(ops.index_select(flat, 0, index), shape)


@register_decomposition(torch.as_strided_scatter, T.as_strided_scatter)
def as_strided_scatter(a, src, size, stride, storage_offset=None):
    index, shape = _storage_index(a, size, stride, storage_offset, "as_strided_scatter")
    if len(shape_of(src)) != len(shape):
        raise PrimError(f"as_strided_scatter: expected src of shape {shape}, found "
                        f"{shape_of(src)}")
    for got, want in zip(shape_of(src), shape, strict=True):
        require_same_size(got, want, f"as_strided_scatter: expected src of shape {shape}, "
                                     f"found {shape_of(src)}")
    values = reshape(convert(src, a.dtype), shape_of(index))
    out = ops.index_put(reshape(a, (numel_of(a),)), (index,), values, False)
    return reshape(out, shape_of(a))
