"""F.interpolate (and the deprecated F.upsample*) for modes nearest, nearest-exact, linear,
bilinear, trilinear, bicubic and area, one spatial dim at a time.

Source indices are computed as eager computes them, in float32 (`floor(dst * scale)` for
nearest, `scale * (dst + 0.5) - 0.5` clamped at 0 for linear without align_corners), so the
picked elements and weights are eager's; each dim is then an index_select (nearest) or two
index_selects and a lerp (linear), or four taps of eager's cubic convolution (bicubic). Area is
adaptive average pooling. Antialias is refused (a graph break).

    F.interpolate(x f32[n, c, s0], scale_factor=2) -> index_select(x, 2, floor(iota(2 s0) * 0.5))
"""

from __future__ import annotations

import math

import sympy
import torch
import torch.nn.functional as F

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import convert, ndim_of, shape_of
from prims.decompositions.registry import register_decomposition
from prims.decompositions.shapes import guard_int
from prims.promotion import opmath
from prims.sizes import as_expr

LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3}


def output_sizes(x, n, size, scale_factor):
    """(output sizes of the last n dims, scales): `size`, or floor(size * scale) (a non-integer
    scale specialises the input size, as the output size is then not an expression of it)."""
    sizes = shape_of(x)[-n:]
    if size is not None:
        size = (size,) * n if isinstance(size, int) else tuple(size)
        if len(size) != n:
            raise PrimError(f"interpolate: expected {n} output sizes, found {size}")
        return size, (None,) * n
    if scale_factor is None:
        raise PrimError("interpolate: expected size or scale_factor")
    scales = (scale_factor,) * n if isinstance(scale_factor, (int, float)) else \
        tuple(scale_factor)
    out = []
    for s, f in zip(sizes, scales, strict=True):
        f = float(f)
        if f.is_integer():
            out.append(as_expr(s) * int(f))
        else:
            out.append(int(math.floor(guard_int(s) * f)))
    return tuple(out), scales


def _scale(in_size, out_size, scale, align_corners, device):
    """Eager's source-index scale, a float32 0-d tensor."""
    f32 = torch.float32
    if align_corners:
        num = ops.convert_element_type(ops.full((), as_expr(in_size) - 1, torch.int64, device),
                                       f32)
        den = ops.convert_element_type(ops.full((), as_expr(out_size) - 1, torch.int64, device),
                                       f32)
        return ops.where(ops.gt(den, 0.0), ops.div(num, ops.maximum(den, 1.0)), 0.0)
    if scale is not None:
        return ops.full((), 1.0 / float(scale), f32, device)
    num = ops.convert_element_type(ops.full((), in_size, torch.int64, device), f32)
    den = ops.convert_element_type(ops.full((), out_size, torch.int64, device), f32)
    return ops.div(num, den)


def _positions(out_size, device):
    return ops.convert_element_type(ops.iota(out_size, 0, 1, torch.int64, device),
                                    torch.float32)


def _nearest(x, dim, out_size, scale, exact):
    in_size = shape_of(x)[dim]
    s = _scale(in_size, out_size, scale, False, x.device)
    dst = _positions(out_size, x.device)
    if exact:
        dst = ops.add(dst, 0.5)
    src = ops.floor(ops.mul(dst, ops.broadcast_in_dim(s, (out_size,), ())))
    idx = ops.minimum(ops.convert_element_type(src, torch.int64), as_expr(in_size) - 1)
    return ops.index_select(x, dim, idx)


def _linear(x, dim, out_size, scale, align_corners):
    in_size = shape_of(x)[dim]
    s = ops.broadcast_in_dim(_scale(in_size, out_size, scale, align_corners, x.device),
                             (out_size,), ())
    dst = _positions(out_size, x.device)
    if align_corners:
        src = ops.mul(s, dst)
    else:
        src = ops.maximum(ops.sub(ops.mul(s, ops.add(dst, 0.5)), 0.5), 0.0)
    i0 = ops.convert_element_type(ops.floor(src), torch.int64)
    i0 = ops.minimum(i0, as_expr(in_size) - 1)
    i1 = ops.minimum(ops.add(i0, 1), as_expr(in_size) - 1)
    w1 = ops.sub(src, ops.convert_element_type(i0, torch.float32))
    w0 = ops.sub(1.0, w1)
    kept = (dim,)
    shape = list(shape_of(x))
    shape[dim] = out_size
    w0 = ops.broadcast_in_dim(convert(w0, x.dtype), tuple(shape), kept)
    w1 = ops.broadcast_in_dim(convert(w1, x.dtype), tuple(shape), kept)
    a, b = ops.index_select(x, dim, i0), ops.index_select(x, dim, i1)
    return ops.add(ops.mul(a, w0), ops.mul(b, w1))


CUBIC_A = -0.75  # eager's cubic convolution coefficient


def _cubic_weights(t):
    """The 4 tap weights of eager's cubic convolution at fractional offset t."""
    a = CUBIC_A

    def near(x):  # |x| <= 1
        return ops.add(ops.mul(ops.mul(ops.sub(ops.mul(x, a + 2), a + 3), x), x), 1.0)

    def far(x):  # 1 < |x| < 2
        return ops.sub(ops.mul(ops.add(ops.mul(ops.sub(ops.mul(x, a), 5 * a), x), 8 * a), x),
                       4 * a)

    return far(ops.add(t, 1.0)), near(t), near(ops.sub(1.0, t)), far(ops.sub(2.0, t))


def _cubic(x, dim, out_size, scale, align_corners):
    in_size = shape_of(x)[dim]
    s = ops.broadcast_in_dim(_scale(in_size, out_size, scale, align_corners, x.device),
                             (out_size,), ())
    dst = _positions(out_size, x.device)
    src = ops.mul(s, dst) if align_corners else ops.sub(ops.mul(s, ops.add(dst, 0.5)), 0.5)
    floor = ops.floor(src)
    t = ops.sub(src, floor)
    base = ops.convert_element_type(floor, torch.int64)
    shape = list(shape_of(x))
    shape[dim] = out_size
    out = None
    for k, w in enumerate(_cubic_weights(t)):
        idx = ops.minimum(ops.maximum(ops.add(base, k - 1), 0), as_expr(in_size) - 1)
        term = ops.mul(ops.index_select(x, dim, idx),
                       ops.broadcast_in_dim(convert(w, x.dtype), tuple(shape), (dim,)))
        out = term if out is None else ops.add(out, term)
    return out


@register_decomposition(F.interpolate)
def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    n = ndim_of(input) - 2
    if n not in (1, 2, 3):
        raise PrimError(f"interpolate: expected a 3-D, 4-D or 5-D input, found "
                        f"{ndim_of(input)}-D")
    if antialias:
        raise PrimError("interpolate: antialias is not supported")
    if mode in LINEAR and LINEAR[mode] != n:
        raise PrimError(f"interpolate: mode {mode!r} expects a {LINEAR[mode] + 2}-D input")
    if mode == "bicubic" and n != 2:
        raise PrimError("interpolate: mode 'bicubic' expects a 4-D input")
    if mode not in ("nearest", "nearest-exact", "area", "bicubic", *LINEAR):
        raise PrimError(f"interpolate: mode {mode!r} is not supported")
    if align_corners is not None and mode not in (*LINEAR, "bicubic"):
        raise PrimError("interpolate: align_corners is only for the linear modes")
    sizes, scales = output_sizes(input, n, size, scale_factor)
    if recompute_scale_factor:
        scales = (None,) * n
    if mode == "area":
        from prims.decompositions.pooling import _adaptive_avg

        return _adaptive_avg(n, input, sizes)
    x = input
    if mode in LINEAR or mode == "bicubic":
        x = convert(x, opmath(x.dtype))
    for i in range(n):
        dim = 2 + i
        out = sizes[i]
        if isinstance(out, sympy.Basic) and out.is_Integer:
            out = int(out)
        if mode in ("nearest", "nearest-exact"):
            x = _nearest(x, dim, out, scales[i], mode == "nearest-exact")
        elif mode == "bicubic":
            x = _cubic(x, dim, out, scales[i], bool(align_corners))
        else:
            x = _linear(x, dim, out, scales[i], bool(align_corners))
    return convert(x, input.dtype)


@register_decomposition(F.upsample)
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    return interpolate(input, size, scale_factor, mode, align_corners)


@register_decomposition(F.upsample_nearest)
def upsample_nearest(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, "nearest")


@register_decomposition(F.upsample_bilinear)
def upsample_bilinear(input, size=None, scale_factor=None):
    return interpolate(input, size, scale_factor, "bilinear", True)
