"""Convolutions: F.conv{1,2,3}d and F.conv_transpose{1,2,3}d onto the `convolution` extern
prim (prims/convolution.py; its VJP calls aten's convolution_backward), with unbatched inputs,
int or tuple arguments, and padding 'valid' / 'same' (an odd total 'same' padding pads the
input's right side first, as eager does).

    F.conv2d(x f32[n, 3, s0, s1], w f32[8, 3, 3, 3], b, padding=1)
        -> convolution(x, w, b, (1, 1), (1, 1), (1, 1), False, (0, 0), 1)
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import ndim_of, reshape, shape_of
from prims.decompositions.registry import register_decomposition
from prims.decompositions.shapes import guard_int


def _tuple(value, n, name):
    if isinstance(value, int):
        return (value,) * n
    value = tuple(value)
    if len(value) == 1:
        return value * n
    if len(value) != n:
        raise PrimError(f"{name}: expected 1 or {n} values, found {value}")
    return value


def _batched(input, n, name):
    """(input with a batch dim, whether one was added)."""
    if ndim_of(input) == n + 1:
        return reshape(input, (1, *shape_of(input))), True
    if ndim_of(input) != n + 2:
        raise PrimError(f"{name}: expected a {n + 1}-D or {n + 2}-D input, found "
                        f"{ndim_of(input)}-D")
    return input, False


def _unbatch(out, added):
    return reshape(out, shape_of(out)[1:]) if added else out


def _same_padding(x, weight, n, dilation, stride):
    """'same' padding: (x padded on the right where the total is odd, symmetric padding)."""
    if any(s != 1 for s in stride):
        raise PrimError("conv: padding='same' needs stride 1 (eager refuses otherwise)")
    pads, extra = [], []
    for i in range(n):
        k = guard_int(shape_of(weight)[2 + i])  # the padding depends on it
        total = dilation[i] * (k - 1)
        pads.append(total // 2)
        extra.append(total % 2)
    if any(extra):
        widths = ((0, 0), (0, 0), *((0, e) for e in extra))
        x = ops.pad(x, widths, 0.0)
    return x, tuple(pads)


def _conv(n, input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    name = f"conv{n}d"
    x, added = _batched(input, n, name)
    stride = _tuple(stride, n, name)
    dilation = _tuple(dilation, n, name)
    if padding == "valid":
        padding = (0,) * n
    elif padding == "same":
        x, padding = _same_padding(x, weight, n, dilation, stride)
    else:
        padding = _tuple(padding, n, name)
    out = ops.convolution(x, weight, bias, stride, padding, dilation, False, (0,) * n,
                          int(groups))
    return _unbatch(out, added)


def _conv_transpose(n, input, weight, bias=None, stride=1, padding=0, output_padding=0,
                    groups=1, dilation=1):
    name = f"conv_transpose{n}d"
    if isinstance(padding, str):
        raise PrimError(f"{name}: string padding is not supported")
    x, added = _batched(input, n, name)
    out = ops.convolution(x, weight, bias, _tuple(stride, n, name), _tuple(padding, n, name),
                          _tuple(dilation, n, name), True, _tuple(output_padding, n, name),
                          int(groups))
    return _unbatch(out, added)


for _n in (1, 2, 3):
    def _plain(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1, _n=_n):
        return _conv(_n, input, weight, bias, stride, padding, dilation, groups)

    def _transposed(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                    dilation=1, _n=_n):
        return _conv_transpose(_n, input, weight, bias, stride, padding, output_padding,
                               groups, dilation)

    _plain.__name__, _transposed.__name__ = f"conv{_n}d", f"conv_transpose{_n}d"
    register_decomposition(*{getattr(F, f"conv{_n}d"), getattr(torch, f"conv{_n}d")})(_plain)
    register_decomposition(*{getattr(F, f"conv_transpose{_n}d"),
                             getattr(torch, f"conv_transpose{_n}d")})(_transposed)
