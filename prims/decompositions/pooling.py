"""Pooling: avg_pool{1,2,3}d, max_pool{1,2,3}d (with indices, dilation, ceil_mode) and
adaptive_avg_pool{1,2,3}d, with symbolic spatial sizes and static windows.

A window of kernel k (stride s, dilation d, padding p) is the sum over its k offsets of strided
slices of the padded input: offset j reads padded[j*d :: s] for every output position, so a
pool is prod(k) slices combined with add (avg) or a running max (max, which also carries the
flat index of the element it picked, as eager's indices). Adaptive average pooling multiplies
each spatial dim by an (out, L) matrix of window weights, so windows of varying size cost one
matmul per dim. VJPs are those of slice, pad, add, where and mm.

    F.avg_pool1d(x f32[n, c, s0], 3) -> (x[..., 0::3] + x[..., 1::3] + x[..., 2::3]) / 3
"""

from __future__ import annotations

import itertools

import sympy
import torch
import torch.nn.functional as F

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import convert, ndim_of, shape_of
from prims.decompositions.registry import register_decomposition
from prims.promotion import opmath
from prims.sizes import as_expr, floordiv, guard_true

T = torch.Tensor


def _tuple(value, n, name):
    if value is None:
        return None
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise PrimError(f"{name}: expected 1 or {n} values, found {value}")
    return value


def _out_size(size, k, s, p, d, ceil_mode):
    """Eager's pooling output size (a window must start inside the input or left padding)."""
    size = as_expr(size)
    span = size + 2 * p - d * (k - 1) - 1
    out = (floordiv(span + s - 1, s) if ceil_mode else floordiv(span, s)) + 1
    if ceil_mode and guard_true(sympy.Ge((out - 1) * s, size + p), "pooling"):
        out = out - 1
    return out


class _Windows:
    """The padded input and, per spatial dim, its output size; `offset(js)` is the strided
    slice of every window's element at kernel offsets js."""

    def __init__(self, x, n, k, s, p, d, ceil_mode, fill):
        self.n, self.k, self.s, self.p, self.d = n, k, s, p, d
        lead = ndim_of(x) - n
        self.lead = lead
        self.sizes = shape_of(x)[lead:]
        self.out = [_out_size(L, k[i], s[i], p[i], d[i], ceil_mode)
                    for i, L in enumerate(self.sizes)]
        pads = [(0, 0)] * lead + [(p[i], p[i] + s[i]) for i in range(n)]
        self.padded = ops.pad(x, tuple(pads), fill) if any(
            lo or hi for lo, hi in pads) else x

    def offset(self, js):
        out = self.padded
        for i, j in enumerate(js):
            start = j * self.d[i]
            stop = start + (self.out[i] - 1) * self.s[i] + 1
            out = ops.slice(out, self.lead + i, start, stop, self.s[i])
        return out

    def coordinate(self, i, j, device):
        """Input coordinate along spatial dim i of offset j, per output position (int64)."""
        return ops.iota(self.out[i], j * self.d[i] - self.p[i], self.s[i], torch.int64, device)


def _parse(name, x, n, kernel_size, stride, padding, dilation=1):
    if ndim_of(x) not in (n + 1, n + 2):
        raise PrimError(f"{name}: expected a {n + 1}-D or {n + 2}-D input, found "
                        f"{ndim_of(x)}-D")
    k = _tuple(kernel_size, n, name)
    s = _tuple(stride, n, name) if stride not in (None, (), []) else k
    p = _tuple(padding, n, name)
    d = _tuple(dilation, n, name)
    for i in range(n):
        if 2 * p[i] > k[i]:
            raise PrimError(f"{name}: padding {p[i]} should be at most half the kernel {k[i]}")
    return k, s, p, d


def _counts(w, include_pad, device, dtype):
    """Elements each window holds, per output position: product of per-dim counts."""
    total = None
    for i in range(w.n):
        L = as_expr(w.sizes[i])
        lo, hi = (-w.p[i], L + w.p[i]) if include_pad else (0, L)
        count = None
        for j in range(w.k[i]):
            c = w.coordinate(i, j, device)
            inside = convert(ops.logical_and(ops.ge(c, lo), ops.lt(c, hi)), dtype)
            count = inside if count is None else ops.add(count, inside)
        shape = tuple(w.out)
        count = ops.broadcast_in_dim(count, shape, (i,))
        total = count if total is None else ops.mul(total, count)
    return total


def _avg_pool(n, input, kernel_size, stride=None, padding=0, ceil_mode=False,
              count_include_pad=True, divisor_override=None):
    name = f"avg_pool{n}d"
    k, s, p, d = _parse(name, input, n, kernel_size, stride, padding)
    x = convert(input, opmath(input.dtype))
    w = _Windows(x, n, k, s, p, d, ceil_mode, 0.0)
    total = None
    for js in itertools.product(*(range(kk) for kk in k)):
        part = w.offset(js)
        total = part if total is None else ops.add(total, part)
    if divisor_override:
        out = ops.div(total, float(divisor_override))
    else:
        counts = _counts(w, count_include_pad, x.device, x.dtype)
        dims = tuple(range(w.lead, w.lead + n))
        out = ops.div(total, ops.broadcast_in_dim(counts, shape_of(total), dims))
    return convert(out, input.dtype)


def _flat_index(w, js, device):
    """The flat spatial index (h * W + w, ...) of each window's element at offsets js."""
    flat = None
    for i, j in enumerate(js):
        coord = ops.broadcast_in_dim(w.coordinate(i, j, device), tuple(w.out), (i,))
        stride = 1
        for size in w.sizes[i + 1:]:
            stride = stride * as_expr(size)
        term = ops.mul(coord, stride) if stride != 1 else coord
        flat = term if flat is None else ops.add(flat, term)
    return flat


def _max_pool(n, input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
              return_indices=False):
    name = f"max_pool{n}d"
    k, s, p, d = _parse(name, input, n, kernel_size, stride, padding, dilation)
    fill = float("-inf") if input.dtype.is_floating_point else torch.iinfo(input.dtype).min
    w = _Windows(input, n, k, s, p, d, ceil_mode, fill)
    best = index = None
    dims = tuple(range(w.lead, w.lead + n))
    for js in itertools.product(*(range(kk) for kk in k)):
        value = w.offset(js)
        flat = ops.broadcast_in_dim(_flat_index(w, js, input.device), shape_of(value), dims)
        if best is None:
            best, index = value, flat
            continue
        better = ops.gt(value, best)
        if value.dtype.is_floating_point:
            better = ops.logical_or(better, ops.logical_and(ops.isnan(value),
                                                            ops.logical_not(ops.isnan(best))))
        best = ops.where(better, value, best)
        index = ops.where(better, flat, index)
    return (best, index) if return_indices else best


def _register_pools():
    for n in (1, 2, 3):
        def avg(input, kernel_size, stride=None, padding=0, ceil_mode=False,
                count_include_pad=True, divisor_override=None, _n=n):
            return _avg_pool(_n, input, kernel_size, stride, padding, ceil_mode,
                             count_include_pad, divisor_override)

        def max_(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
                 return_indices=False, _n=n):
            return _max_pool(_n, input, kernel_size, stride, padding, dilation, ceil_mode,
                             return_indices)

        def max_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                             ceil_mode=False, return_indices=True, _n=n):
            return _max_pool(_n, input, kernel_size, stride, padding, dilation, ceil_mode,
                             True)

        avg.__name__, max_.__name__ = f"avg_pool{n}d", f"max_pool{n}d"
        max_with_indices.__name__ = f"max_pool{n}d_with_indices"
        register_decomposition(*filter(None, (getattr(F, f"avg_pool{n}d", None),
                                              getattr(torch, f"avg_pool{n}d", None))))(avg)
        register_decomposition(*filter(None, (getattr(F, f"max_pool{n}d", None),
                                              getattr(torch, f"max_pool{n}d", None))))(max_)
        register_decomposition(*filter(None, (
            getattr(F, f"max_pool{n}d_with_indices", None),
            getattr(torch, f"max_pool{n}d_with_indices", None))))(max_with_indices)


_register_pools()


# --------------------------------------------------------------------------- adaptive average
def _window_matrix(L, out, dtype, device):
    """(out, L): row i averages [floor(i L / out), ceil((i + 1) L / out))."""
    L = as_expr(L)
    i = ops.iota(out, 0, 1, torch.int64, device)
    start = ops.floor_divide(ops.mul(i, L), out)
    end = ops.floor_divide(ops.add(ops.mul(ops.add(i, 1), L), out - 1), out)
    cols = ops.broadcast_in_dim(ops.iota(L, 0, 1, torch.int64, device), (out, L), (1,))
    start2 = ops.broadcast_in_dim(start, (out, L), (0,))
    end2 = ops.broadcast_in_dim(end, (out, L), (0,))
    inside = ops.logical_and(ops.ge(cols, start2), ops.lt(cols, end2))
    width = ops.broadcast_in_dim(convert(ops.sub(end, start), dtype), (out, L), (0,))
    return ops.div(convert(inside, dtype), width)


def _adaptive_avg(n, input, output_size):
    from prims.decompositions.linalg import matmul

    if ndim_of(input) not in (n + 1, n + 2):
        raise PrimError(f"adaptive_avg_pool{n}d: expected a {n + 1}-D or {n + 2}-D input")
    sizes = _tuple(output_size, n, f"adaptive_avg_pool{n}d")
    x = convert(input, opmath(input.dtype))
    lead = ndim_of(x) - n
    for i in range(n):
        dim = lead + i
        L = shape_of(x)[dim]
        out = L if sizes[i] is None else sizes[i]
        last = ndim_of(x) - 1
        order = tuple(dd for dd in range(ndim_of(x)) if dd != dim) + (dim,)
        moved = ops.permute(x, order) if dim != last else x
        weights = _window_matrix(L, out, x.dtype, x.device)
        pooled = matmul(moved, ops.permute(weights, (1, 0)))
        back = [0] * ndim_of(x)
        for pos, src in enumerate(order):
            back[src] = pos
        x = ops.permute(pooled, tuple(back)) if dim != last else pooled
    return convert(x, input.dtype)


for _n in (1, 2, 3):
    def _adaptive(input, output_size, _n=_n):
        return _adaptive_avg(_n, input, output_size)

    _adaptive.__name__ = f"adaptive_avg_pool{_n}d"
    register_decomposition(*filter(None, (getattr(F, f"adaptive_avg_pool{_n}d", None),
                                          getattr(torch, f"adaptive_avg_pool{_n}d", None))))(
        _adaptive)



# --------------------------------------------------------------------------- adaptive max, unpool
def _adaptive_max(n, input, output_size, return_indices=False):
    """Every window masked out of one (..., out..., L...) tensor: exact for windows of varying
    size, at prod(out) * prod(L) elements (small pooled maps; a kernel would be linear)."""
    if ndim_of(input) not in (n + 1, n + 2):
        raise PrimError(f"adaptive_max_pool{n}d: expected a {n + 1}-D or {n + 2}-D input")
    sizes = _tuple(output_size, n, f"adaptive_max_pool{n}d")
    lead = ndim_of(input) - n
    spatial = shape_of(input)[lead:]
    outs = [spatial[i] if sizes[i] is None else sizes[i] for i in range(n)]
    shape = (*shape_of(input)[:lead], *outs, *spatial)
    x = ops.broadcast_in_dim(input, shape, (*range(lead), *range(lead + n, lead + 2 * n)))
    keep = None
    for i in range(n):
        L, out = spatial[i], outs[i]
        idx = ops.iota(out, 0, 1, torch.int64, input.device)
        start = ops.floor_divide(ops.mul(idx, as_expr(L)), out)
        end = ops.floor_divide(ops.add(ops.mul(ops.add(idx, 1), as_expr(L)), out - 1), out)
        cols = ops.broadcast_in_dim(ops.iota(L, 0, 1, torch.int64, input.device), (out, L),
                                    (1,))
        inside = ops.logical_and(ops.ge(cols, ops.broadcast_in_dim(start, (out, L), (0,))),
                                 ops.lt(cols, ops.broadcast_in_dim(end, (out, L), (0,))))
        inside = ops.broadcast_in_dim(inside, shape, (lead + i, lead + n + i))
        keep = inside if keep is None else ops.logical_and(keep, inside)
    fill = float("-inf") if input.dtype.is_floating_point else torch.iinfo(input.dtype).min
    masked = ops.where(keep, x, fill)
    total = 1
    for s in spatial:
        total = total * as_expr(s)
    flat = ops.reshape(masked, (*shape[:lead + n], total))
    values = ops.amax(flat, (lead + n,))
    if not return_indices:
        return values
    return values, ops.argmax(flat, lead + n)


def _max_unpool(n, input, indices, kernel_size, stride=None, padding=0, output_size=None):
    name = f"max_unpool{n}d"
    k = _tuple(kernel_size, n, name)
    s = _tuple(stride, n, name) if stride not in (None, (), []) else k
    p = _tuple(padding, n, name)
    lead = ndim_of(input) - n
    if lead not in (1, 2):
        raise PrimError(f"{name}: expected a {n + 1}-D or {n + 2}-D input")
    spatial = shape_of(input)[lead:]
    if output_size is None:
        outs = [(as_expr(L) - 1) * s[i] - 2 * p[i] + k[i] for i, L in enumerate(spatial)]
    else:
        outs = list(output_size)[-n:]
    front = shape_of(input)[:lead]
    total_in, total_out = 1, 1
    for L in spatial:
        total_in = total_in * as_expr(L)
    for o in outs:
        total_out = total_out * as_expr(o)
    values = ops.reshape(input, (*front, total_in))
    where = ops.reshape(indices, (*front, total_in))
    grid = [ops.broadcast_in_dim(ops.iota(front[d], 0, 1, torch.int64, input.device),
                                 (*front, total_in), (d,)) for d in range(lead)]
    zero = False if input.dtype == torch.bool else 0
    out = ops.full((*front, total_out), zero, input.dtype, input.device)
    out = ops.index_put(out, (*grid, where), values, False)
    return ops.reshape(out, (*front, *outs))


def _unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """F.unfold (im2col): every kernel offset's strided slice, stacked after the channels."""
    from prims.decompositions.shapes import stack

    batched = ndim_of(input) == 4
    if ndim_of(input) not in (3, 4):
        raise PrimError(f"unfold: expected a 3-D or 4-D input, found {ndim_of(input)}-D")
    x = input if batched else ops.reshape(input, (1, *shape_of(input)))
    k, s, p, d = (_tuple(v, 2, "unfold") for v in (kernel_size, stride, padding, dilation))
    w = _Windows(x, 2, k, s, p, d, False, 0)
    parts = [w.offset(js) for js in itertools.product(range(k[0]), range(k[1]))]
    cols = stack(parts, 2)  # (n, c, kh*kw, oh, ow)
    n, c = shape_of(x)[:2]
    out = ops.reshape(cols, (n, as_expr(c) * k[0] * k[1], as_expr(w.out[0]) * as_expr(w.out[1])))
    return out if batched else ops.reshape(out, shape_of(out)[1:])


register_decomposition(F.unfold)(_unfold)
for _n in (1, 2, 3):
    def _adaptive_max_fn(input, output_size, return_indices=False, _n=_n):
        return _adaptive_max(_n, input, output_size, return_indices)

    def _adaptive_max_with_indices(input, output_size, return_indices=True, _n=_n):
        return _adaptive_max(_n, input, output_size, True)

    def _unpool(input, indices, kernel_size, stride=None, padding=0, output_size=None, _n=_n):
        return _max_unpool(_n, input, indices, kernel_size, stride, padding, output_size)

    register_decomposition(getattr(F, f"adaptive_max_pool{_n}d"))(_adaptive_max_fn)
    # torch.adaptive_max_pool1d (aten) returns (values, indices), as the _with_indices forms
    register_decomposition(*filter(None, (
        getattr(F, f"adaptive_max_pool{_n}d_with_indices", None),
        getattr(torch, f"adaptive_max_pool{_n}d", None))))(_adaptive_max_with_indices)
    register_decomposition(getattr(F, f"max_unpool{_n}d"))(_unpool)


# --------------------------------------------------------------------------- non-constant pads
def index_pad(input, pad, mode):
    """F.pad's reflect / replicate / circular modes: each padded dim read back through an
    index of source positions (mirrored, clamped or wrapped); negative pads crop. The VJP is
    index_select's, so mirrored elements accumulate their gradients as in eager."""
    if len(pad) % 2 or len(pad) // 2 > ndim_of(input):
        raise PrimError(f"pad: expected pairs for at most {ndim_of(input)} dims, found {pad}")
    out = input
    for i in range(len(pad) // 2):
        d = ndim_of(input) - 1 - i
        lo, hi = pad[2 * i], pad[2 * i + 1]
        if lo == 0 and hi == 0:
            continue
        size = as_expr(shape_of(out)[d])
        length = size + lo + hi
        src = ops.iota(length, -lo, 1, torch.int64, input.device)
        if mode == "replicate":
            src = ops.minimum(ops.maximum(src, 0), size - 1)
        elif mode == "circular":
            src = ops.remainder(src, size)
        else:  # reflect: mirror about the first and last elements (eager needs pad < size)
            src = ops.abs(src)
            src = ops.sub(size - 1, ops.abs(ops.sub(size - 1, src)))
        out = ops.index_select(out, d, src)
    return out
