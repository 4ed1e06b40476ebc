"""VJP rules of the extern prims (matmuls, attention), registered into vjp_rules.VJP_RULES.

    mm(a, b), g  ->  (mm(g, b^T), mm(a^T, g))
    sdpa_dropout(q, k, v, ...) -> (out, lse, rng), g
        ->  sdpa_dropout_backward(g, q, k, v, out, lse, rng, ...)
"""

from __future__ import annotations

from autograd_aot.vjp_rules import register_vjp
from prims import ops
from prims.torch_externs import grad_positions


def _transpose(x):
    return ops.permute(x, (1, 0) if x.ndim == 2 else (0, 2, 1))


def _matmul_vjp(mm):
    def rule(args, out, g):
        a, b = args
        return mm(g, _transpose(b)), mm(_transpose(a), g)

    return rule


register_vjp("mm", _matmul_vjp(ops.mm))
register_vjp("bmm", _matmul_vjp(ops.bmm))


def _sdpa_vjp(args, out, g):
    q, k, v, attn_mask, dropout_p, is_causal, scale, seed, offset = args
    dq, dk, dv = ops.sdpa_backward(g, q, k, v, attn_mask, dropout_p, is_causal, scale, seed,
                                   offset)
    return (dq, dk, dv) + (None,) * 6


register_vjp("sdpa", _sdpa_vjp)


def _sdpa_dropout_vjp(args, out, g):
    q, k, v, dropout_p, is_causal, scale, _seed, _offset = args
    if g[0] is None:  # only lse or rng used: neither is differentiable
        return (None,) * 8
    result, lse, rng = out
    dq, dk, dv = ops.sdpa_dropout_backward(g[0], q, k, v, result, lse, rng, dropout_p,
                                           is_causal, scale)
    return (dq, dk, dv) + (None,) * 5


register_vjp("sdpa_dropout", _sdpa_dropout_vjp)


def _convolution_vjp(args, out, g):
    x, w, b, stride, padding, dilation, transposed, output_padding, groups = args
    gx, gw, gb = ops.convolution_backward(g, x, w, b, stride, padding, dilation, transposed,
                                          output_padding, groups)
    return (gx, gw, gb if b is not None else None) + (None,) * 6


register_vjp("convolution", _convolution_vjp)


def _torch_extern_vjp(args, out, g):
    """Gradients of a torch op called at run time: the torch_extern_backward extern reruns it
    under torch autograd (prims/torch_externs.py)."""
    name, call_args, kwargs = args[:3]
    grads = g if isinstance(g, tuple) else (g,)
    wrt = grad_positions(name, call_args)
    nones = (None,) * (len(args) - 2)
    if not wrt or all(x is None for x in grads):
        return (None, None, *nones)
    found = ops.torch_extern_backward(name, call_args, kwargs, wrt, grads)
    per_arg = [None] * len(call_args)
    for i, grad in zip(wrt, found):
        per_arg[i] = grad
    return (None, tuple(per_arg), *nones)


register_vjp("torch_extern", _torch_extern_vjp)
