"""Convolution as an extern prim, as torch.compile calls cuDNN / oneDNN for it.

`convolution` is aten's convolution (plain or transposed, any spatial rank, groups, dilation);
`convolution_backward(g, x, w, b, ...)` is aten's convolution_backward (b: the bias or None,
giving the bias gradient its shape), which the VJP rule calls
(autograd_aot/vjp_extern_rules.py). Inductor hands both to the wrapper as extern calls on
realized buffers (inductor/lowerings.py EXTERN_PRIMS). Output sizes are symbolic:

    convolution(x f32[n, 3, s0], w f32[8, 3, 5], None, (1,), (2,), (1,), False, (0,), 1)
        -> f32[n, 8, s0]      (s0 + 2*2 - 1*(5 - 1) - 1) // 1 + 1
"""

from __future__ import annotations

import torch

from prims.core import PrimError, PrimKind, register_prim
from prims.sizes import as_expr, concrete, floordiv, require_same_size
from symbolic import TensorMeta


def _check(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    n = len(stride)
    if x.ndim != n + 2 or w.ndim != n + 2:
        raise PrimError(f"convolution: expected {n + 2}-D input and weight, found {x} and {w}")
    if not (len(padding) == len(dilation) == len(output_padding) == n):
        raise PrimError("convolution: expected stride, padding, dilation and output_padding "
                        f"of {n} values")
    if x.dtype != w.dtype or (b is not None and b.dtype != x.dtype):
        raise PrimError(f"convolution: expected one dtype, found {x.dtype} and {w.dtype}")
    in_channels = as_expr(w.shape[0] if transposed else w.shape[1] * groups)
    require_same_size(x.shape[1], in_channels, "convolution: input channels")
    if b is not None:
        channels = as_expr(w.shape[1]) * groups if transposed else as_expr(w.shape[0])
        require_same_size(b.shape[0], channels, "convolution: bias size")


def out_shape(x, w, stride, padding, dilation, transposed, output_padding, groups):
    """The output shape of aten's convolution (symbolic sizes stay symbolic)."""
    channels = as_expr(w.shape[1]) * groups if transposed else as_expr(w.shape[0])
    spatial = []
    for i, size in enumerate(x.shape[2:]):
        k = as_expr(w.shape[2 + i])
        s, p, d = stride[i], padding[i], dilation[i]
        if transposed:
            out = (as_expr(size) - 1) * s - 2 * p + d * (k - 1) + output_padding[i] + 1
        else:
            out = floordiv(as_expr(size) + 2 * p - d * (k - 1) - 1, s) + 1
        spatial.append(out)
    return (x.shape[0], channels, *spatial)


def _conv_meta(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    _check(x, w, b, stride, padding, dilation, transposed, output_padding, groups)
    shape = out_shape(x, w, stride, padding, dilation, transposed, output_padding, groups)
    return TensorMeta.contiguous(shape, x.dtype, x.device)


def _ints(values):
    return [int(concrete(v)) for v in values]


def _conv_ref(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    return torch.ops.aten.convolution(x, w, b, _ints(stride), _ints(padding), _ints(dilation),
                                      bool(transposed), _ints(output_padding), int(groups))


def _conv_backward_meta(g, x, w, b, stride, padding, dilation, transposed, output_padding,
                        groups):
    _check(x, w, b, stride, padding, dilation, transposed, output_padding, groups)
    gb = TensorMeta.contiguous(b.shape if b is not None else (0,), x.dtype, x.device)
    return (TensorMeta.contiguous(x.shape, x.dtype, x.device),
            TensorMeta.contiguous(w.shape, w.dtype, w.device), gb)


def _conv_backward_ref(g, x, w, b, stride, padding, dilation, transposed, output_padding,
                       groups):
    has_bias = b is not None
    channels = w.shape[1] * int(groups) if transposed else w.shape[0]
    gx, gw, gb = torch.ops.aten.convolution_backward(
        g, x, w, [channels] if has_bias else None, _ints(stride), _ints(padding),
        _ints(dilation), bool(transposed), _ints(output_padding), int(groups),
        [True, True, bool(has_bias)])
    if gb is None:
        gb = torch.empty((0,), dtype=x.dtype, device=x.device)
    return gx, gw, gb


register_prim("convolution", PrimKind.EXTERN, _conv_meta, _conv_ref,
              doc="aten.convolution (plain or transposed, groups, dilation)")
register_prim("convolution_backward", PrimKind.EXTERN, _conv_backward_meta, _conv_backward_ref,
              doc="(grad_input, grad_weight, grad_bias) of convolution (aten)")
