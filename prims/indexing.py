"""Indexing prims: gather, index_select, scatter_add, index_put. Indices are int64 tensors.

    index_select(f32[s0, 8], 0, i64[s1]) -> f32[s1, 8]
    gather(f32[s0, 8], 1, i64[s0, 3]) -> f32[s0, 3]
"""

from __future__ import annotations

import torch

from prims.core import PrimError, PrimKind, register_prim
from prims.sizes import check_dims, require_same_shape
from symbolic import TensorMeta


def _check_index(name, index, ndim=None):
    if index.dtype not in (torch.int64, torch.int32):
        raise PrimError(f"{name}: expected an int64 index, found {index.dtype}")
    if ndim is not None and index.ndim != ndim:
        raise PrimError(f"{name}: expected a {ndim}-d index, found {index}")


def _gather_meta(a, dim, index):
    check_dims((dim,), a.ndim, "gather")
    _check_index("gather", index, max(a.ndim, 1) if a.ndim else 0)
    return TensorMeta.contiguous(index.shape, a.dtype, a.device)


def _gather_ref(a, dim, index):
    return torch.gather(a, dim, index)


def _index_select_meta(a, dim, index):
    check_dims((dim,), a.ndim, "index_select")
    if index.ndim > 1:
        raise PrimError(f"index_select: expected a 0-d or 1-d index, found {index}")
    _check_index("index_select", index)
    shape = list(a.shape)
    if a.ndim:
        shape[dim] = index.shape[0] if index.ndim else 1
    return TensorMeta.contiguous(shape, a.dtype, a.device)


def _index_select_ref(a, dim, index):
    return torch.index_select(a, dim, index)


def _scatter_add_meta(a, dim, index, src):
    check_dims((dim,), a.ndim, "scatter_add")
    _check_index("scatter_add", index, a.ndim)
    if src.dtype != a.dtype:
        raise PrimError(f"scatter_add: expected src of dtype {a.dtype}, found {src.dtype}")
    require_same_shape(index.shape, src.shape, "scatter_add (index vs src)")
    return TensorMeta.contiguous(a.shape, a.dtype, a.device)


def _scatter_add_ref(a, dim, index, src):
    return torch.scatter_add(a, dim, index, src)


def _index_put_meta(a, indices, values, accumulate):
    indices = tuple(indices)
    if len(indices) > a.ndim:
        raise PrimError(f"index_put: expected at most {a.ndim} indices, found {len(indices)}")
    present = [i for i in indices if i is not None]
    if not present:
        raise PrimError("index_put: expected at least one index tensor, found only None")
    for i in present:
        _check_index("index_put", i)
        require_same_shape(present[0].shape, i.shape, "index_put (indices must be broadcast)")
    if values.dtype != a.dtype:
        raise PrimError(f"index_put: expected values of dtype {a.dtype}, found {values.dtype}")
    return TensorMeta.contiguous(a.shape, a.dtype, a.device)


def _index_put_ref(a, indices, values, accumulate):
    # the aten op takes None entries (whole dims); torch.index_put's Python binding does not
    return torch.ops.aten.index_put(a, list(indices), values, bool(accumulate))


for _name, _meta, _ref, _doc in (
    ("gather", _gather_meta, _gather_ref, "out[i][j] = a[i][index[i][j]] (dim=1)"),
    ("index_select", _index_select_meta, _index_select_ref, "rows of a along dim"),
    ("scatter_add", _scatter_add_meta, _scatter_add_ref, "a with src added at index along dim"),
    ("index_put", _index_put_meta, _index_put_ref, "a with values written (or added) at indices"),
):
    register_prim(_name, PrimKind.INDEXING, _meta, _ref, doc=_doc)
