"""Shape functions built from shapes.py's: atleast_Nd, h/v/d/column_stack, tensor_split and
h/v/dsplit, split_with_sizes, fliplr/flipud/rot90, movedim, ravel, select, broadcast_tensors,
meshgrid, cartesian_prod, block_diag, and the `*_copy` forms of views (a copy is the view's
value: prims are functional, nothing aliases).

    torch.hstack([a f32[s0], b f32[s1]]) -> cat((a, b), 0) -> f32[s0 + s1]
"""

from __future__ import annotations

import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions import creation, shapes
from prims.decompositions.common import (
    broadcast_tensors as _broadcast,
)
from prims.decompositions.common import (
    convert,
    ndim_of,
    numel_of,
    reshape,
    shape_of,
    wrap_dim,
)
from prims.decompositions.indexing import _select
from prims.decompositions.registry import register_decomposition
from prims.promotion import result_type
from prims.sizes import as_expr, floordiv

T = torch.Tensor


def _tensors(args):
    """f(a, b) or f([a, b]) -> [a, b]."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        return list(args[0])
    return list(args)


def _atleast(n):
    def one(a):
        if ndim_of(a) >= n:
            return a
        if ndim_of(a) == 0:
            return reshape(a, (1,) * n)
        if ndim_of(a) == 1:  # (k,) -> (1, k) -> (1, k, 1)
            return reshape(a, ((1, *shape_of(a)) if n == 2 else (1, *shape_of(a), 1)))
        return reshape(a, (*shape_of(a), 1))  # 2-d -> (r, c, 1)

    def decomposition(*args):
        if len(args) == 1 and not isinstance(args[0], (list, tuple)):
            return one(args[0])
        return tuple(one(a) for a in _tensors(args))

    decomposition.__name__ = f"atleast_{n}d"
    return decomposition


atleast_1d, atleast_2d, atleast_3d = _atleast(1), _atleast(2), _atleast(3)
register_decomposition(torch.atleast_1d)(atleast_1d)
register_decomposition(torch.atleast_2d)(atleast_2d)
register_decomposition(torch.atleast_3d)(atleast_3d)


@register_decomposition(torch.hstack)
def hstack(tensors):
    tensors = [atleast_1d(t) for t in tensors]
    return shapes.cat(tensors, 0 if ndim_of(tensors[0]) == 1 else 1)


@register_decomposition(torch.vstack, torch.row_stack)
def vstack(tensors):
    return shapes.cat([atleast_2d(t) for t in tensors], 0)


@register_decomposition(torch.dstack)
def dstack(tensors):
    return shapes.cat([atleast_3d(t) for t in tensors], 2)


@register_decomposition(torch.column_stack)
def column_stack(tensors):
    cols = [reshape(t, (numel_of(t), 1)) if ndim_of(t) <= 1 else t for t in tensors]
    return shapes.cat(cols, 1)


def _clamped(index, size):
    return shapes.clamp_index(index, size)


@register_decomposition(torch.tensor_split, T.tensor_split)
def tensor_split(a, indices_or_sections, dim=0):
    d = wrap_dim(dim, ndim_of(a))
    size = shape_of(a)[d]
    if not isinstance(indices_or_sections, (list, tuple)):
        if not isinstance(indices_or_sections, int):
            raise PrimError("tensor_split: a tensor of indices reads data; pass ints")
        n = indices_or_sections
        if n <= 0:
            raise PrimError(f"tensor_split: expected sections > 0, found {n}")
        total = shapes.guard_int(size)
        base, extra = divmod(total, n)
        bounds, start = [], 0
        for i in range(n):
            stop = start + base + (1 if i < extra else 0)
            bounds.append((start, stop))
            start = stop
        return tuple(ops.slice(a, d, s, e, 1) for s, e in bounds)
    points = [_clamped(i, size) for i in indices_or_sections]
    starts = [0, *points]
    stops = [*points, size]
    out = []
    for s, e in zip(starts, stops):
        out.append(shapes.slice_dim(a, d, s, e) if (s, e) != (0, size) else a)
    return tuple(out)


def _direction_split(name, dim, min_ndim):
    def decomposition(a, indices_or_sections):
        if ndim_of(a) < min_ndim:
            raise PrimError(f"{name}: expected at least {min_ndim} dims, found {ndim_of(a)}")
        d = 0 if (name == "hsplit" and ndim_of(a) == 1) else dim
        if isinstance(indices_or_sections, int):
            size = shapes.guard_int(shape_of(a)[d])
            if indices_or_sections == 0 or size % indices_or_sections:
                raise PrimError(f"{name}: size {size} is not divisible by "
                                f"{indices_or_sections}")
        return tensor_split(a, indices_or_sections, d)

    decomposition.__name__ = name
    return decomposition


register_decomposition(torch.hsplit, T.hsplit)(_direction_split("hsplit", 1, 1))
register_decomposition(torch.vsplit, T.vsplit)(_direction_split("vsplit", 0, 2))
register_decomposition(torch.dsplit, T.dsplit)(_direction_split("dsplit", 2, 3))


@register_decomposition(torch.split_with_sizes, T.split_with_sizes, torch.split_with_sizes_copy,
                        torch.unsafe_split_with_sizes)
def split_with_sizes(a, split_sizes, dim=0):
    return shapes.split(a, list(split_sizes), dim)


@register_decomposition(torch.unsafe_split, T.unsafe_split)
def unsafe_split(a, split_size, dim=0):
    return shapes.split(a, split_size, dim)


@register_decomposition(torch.unsafe_chunk, T.unsafe_chunk)
def unsafe_chunk(a, chunks, dim=0):
    return shapes.chunk(a, chunks, dim)


@register_decomposition(torch.fliplr, T.fliplr)
def fliplr(a):
    if ndim_of(a) < 2:
        raise PrimError(f"fliplr: expected at least 2 dims, found {ndim_of(a)}")
    return ops.flip(a, (1,))


@register_decomposition(torch.flipud, T.flipud)
def flipud(a):
    if ndim_of(a) < 1:
        raise PrimError("flipud: expected at least 1 dim, found 0")
    return ops.flip(a, (0,))


@register_decomposition(torch.rot90, T.rot90)
def rot90(a, k=1, dims=(0, 1)):
    d0, d1 = (wrap_dim(d, ndim_of(a)) for d in dims)
    if d0 == d1:
        raise PrimError(f"rot90: expected two different dims, found {dims}")
    k %= 4
    if k == 0:
        return ops.add(a, 0) if a.dtype != torch.bool else ops.logical_or(a, a)
    if k == 2:
        return ops.flip(a, tuple(sorted((d0, d1))))
    flipped = ops.flip(a, (d1 if k == 1 else d0,))
    return shapes.transpose(flipped, d0, d1)


@register_decomposition(torch.movedim, T.movedim, torch.moveaxis, T.moveaxis)
def movedim(a, source, destination):
    n = ndim_of(a)
    source = [source] if isinstance(source, int) else list(source)
    destination = [destination] if isinstance(destination, int) else list(destination)
    if len(source) != len(destination):
        raise PrimError(f"movedim: expected as many sources as destinations, found {source} "
                        f"and {destination}")
    src = [wrap_dim(s, n) for s in source]
    dst = [wrap_dim(s, n) for s in destination]
    order = [-1] * n
    for s, t in zip(src, dst):
        order[t] = s
    rest = iter(d for d in range(n) if d not in src)
    order = [next(rest) if o < 0 else o for o in order]
    return a if order == list(range(n)) else ops.permute(a, tuple(order))


@register_decomposition(torch.ravel, T.ravel)
def ravel(a):
    return reshape(a, (numel_of(a),))


@register_decomposition(torch.select, T.select)
def select(a, dim, index):
    return _select(a, wrap_dim(dim, ndim_of(a)), index)


@register_decomposition(torch.broadcast_tensors)
def broadcast_tensors(*tensors):
    return _broadcast(*_tensors(tensors))


@register_decomposition(torch.meshgrid)
def meshgrid(*tensors, indexing=None):
    tensors = [reshape(t, (1,)) if ndim_of(t) == 0 else t for t in _tensors(tensors)]
    shape = tuple(shape_of(t)[0] for t in tensors)
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        shape = (shape[1], shape[0], *shape[2:])
    out = []
    for i, t in enumerate(tensors):
        where = {0: 1, 1: 0}.get(i, i) if swap else i
        out.append(ops.broadcast_in_dim(t, shape, (where,)))
    return tuple(out)


@register_decomposition(torch.cartesian_prod)
def cartesian_prod(*tensors):
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return shapes.stack([ravel(g) for g in grids], 1)


@register_decomposition(torch.block_diag)
def block_diag(*tensors):
    blocks = [reshape(t, (1, 1)) if ndim_of(t) == 0 else
              reshape(t, (1, shape_of(t)[0])) if ndim_of(t) == 1 else t for t in tensors]
    dtype = result_type(*blocks)
    total = sum((as_expr(shape_of(b)[1]) for b in blocks), as_expr(0))
    rows, before = [], as_expr(0)
    for b in blocks:
        width = as_expr(shape_of(b)[1])
        pads = ((0, 0), (before, total - before - width))
        rows.append(ops.pad(convert(b, dtype), pads, False if dtype == torch.bool else 0))
        before = before + width
    return shapes.cat(rows, 0)


# --------------------------------------------------------------------------- *_copy of views
def _copy_of(view):
    def copy(a, *args, **kwargs):
        out = view(a, *args, **kwargs)
        return tuple(out) if isinstance(out, (list, tuple)) else out

    copy.__name__ = f"{getattr(view, '__name__', 'view')}_copy"
    return copy


for _target, _view in (
    ("alias_copy", lambda a: a), ("expand_copy", shapes.expand),
    ("view_copy", shapes.view), ("permute_copy", shapes.permute), ("t_copy", shapes.t),
    ("transpose_copy", shapes.transpose), ("unsqueeze_copy", shapes.unsqueeze_),
    ("squeeze_copy", shapes.squeeze), ("narrow_copy", shapes.narrow),
    ("unbind_copy", shapes.unbind), ("detach_copy", shapes.detach),
):
    _fn = getattr(torch, _target, None)
    if _fn is not None:
        register_decomposition(_fn)(_copy_of(_view))
register_decomposition(T.narrow_copy)(_copy_of(shapes.narrow))


@register_decomposition(torch.constant_pad_nd)
def constant_pad_nd(a, pad, value=0):
    from prims.decompositions.nn import pad as pad_

    return pad_(a, tuple(pad), "constant", value)


@register_decomposition(torch.fill)
def fill(a, value):
    """`a`'s shape filled with value; `a` stays in the autograd graph (a zero gradient, as in
    eager): where(all-true, value, a)."""
    if hasattr(value, "shape"):
        if ndim_of(value) != 0:
            raise PrimError(f"fill: expected a 0-dim value tensor, found {ndim_of(value)} dims")
        value = ops.broadcast_in_dim(convert(value, a.dtype), shape_of(a), ())
    else:
        value = creation.fill_(a, value)
    keep = ops.broadcast_in_dim(ops.full((), True, torch.bool, a.device), shape_of(a), ())
    return ops.where(keep, value, a)


@register_decomposition(torch.eye)
def eye(n, m=None, *, dtype=None, layout=None, device=None, pin_memory=False,
        requires_grad=False, out=None):
    m = n if m is None else m
    dtype = dtype or torch.get_default_dtype()
    device = torch.device("cpu") if device is None else torch.device(device)
    r = ops.broadcast_in_dim(ops.iota(n, 0, 1, torch.int64, device), (n, m), (0,))
    c = ops.broadcast_in_dim(ops.iota(m, 0, 1, torch.int64, device), (n, m), (1,))
    return convert(ops.eq(r, c), dtype)



@register_decomposition(torch._chunk_cat)
def chunk_cat(tensors, dim, num_chunks):
    """Each tensor zero-padded along dim to num_chunks equal chunks, every chunk flattened with
    the dims after it, and the tensors' chunks concatenated: (*lead, num_chunks, total)."""
    tensors = list(tensors)
    d = wrap_dim(dim, ndim_of(tensors[0]))
    pieces = []
    for t in tensors:
        shape = shape_of(t)
        size = as_expr(shape[d])
        per = floordiv(size + num_chunks - 1, num_chunks)
        padded = t
        pad = per * num_chunks - size
        if not (pad.is_number and pad == 0):
            widths = tuple((0, pad) if k == d else (0, 0) for k in range(ndim_of(t)))
            padded = ops.pad(t, widths, False if t.dtype == torch.bool else 0)
        rest = as_expr(1)
        for s in shape[d + 1:]:
            rest = rest * as_expr(s)
        pieces.append(reshape(padded, (*shape[:d], num_chunks, per * rest)))
    return shapes.cat(pieces, d + 1)
