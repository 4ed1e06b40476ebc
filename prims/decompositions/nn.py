"""torch.nn.functional: activations, normalisation, dropout, losses, attention, pad, one_hot.

Normalisations and losses compute in f32 for low-precision inputs and cast back. Dropout draws
its mask with `philox_rand(next_seed(), next_offset(numel), ...)` (see prims/random.py).

    F.layer_norm(x f32[s0, 768], (768,), w, b) -> var_mean, rsqrt, mul, add -> f32[s0, 768]
"""

from __future__ import annotations

import math

import sympy
import torch
import torch.nn.functional as F

from prims import cpu_attention, ops
from prims.core import PrimError
from prims.decompositions.common import (
    broadcast_to,
    convert,
    ndim_of,
    numel_of,
    pointwise,
    reshape,
    shape_of,
    unsqueeze,
    wrap_dim,
)
from prims.decompositions.reductions import _log_softmax
from prims.decompositions.registry import register_decomposition
from prims.fused_attention import can_use_flash
from prims.promotion import opmath
from prims.random import next_offset, next_seed
from prims.sizes import as_expr, floordiv, prod, require, require_same_size

T = torch.Tensor


def _compute(a):
    return convert(a, opmath(a.dtype))


# --------------------------------------------------------------------------- activations
@register_decomposition(F.relu, torch.relu, T.relu, F.relu_, torch.relu_, T.relu_)
def relu(a, inplace=False):
    zero = False if a.dtype == torch.bool else 0
    return ops.where(ops.le(a, zero), zero, a) if a.dtype != torch.bool else a


@register_decomposition(F.gelu)
def gelu(a, approximate="none"):
    x = _compute(a)
    if approximate == "tanh":
        inner = ops.mul(ops.add(x, ops.mul(ops.mul(ops.mul(x, x), x), 0.044715)),
                        math.sqrt(2 / math.pi))
        out = ops.mul(ops.mul(x, 0.5), ops.add(ops.tanh(inner), 1.0))
    elif approximate == "none":
        out = ops.mul(ops.mul(x, 0.5), ops.add(ops.erf(ops.mul(x, 1 / math.sqrt(2))), 1.0))
    else:
        raise PrimError(f"gelu: expected approximate 'none' or 'tanh', found {approximate!r}")
    return convert(out, a.dtype)


@register_decomposition(F.silu)
def silu(a, inplace=False):
    x = _compute(a)
    return convert(ops.mul(x, ops.sigmoid(x)), a.dtype)


@register_decomposition(F.leaky_relu)
def leaky_relu(a, negative_slope=0.01, inplace=False):
    return ops.where(ops.gt(a, 0), a, ops.mul(a, negative_slope))


@register_decomposition(F.softplus)
def softplus(a, beta=1.0, threshold=20.0):
    x = _compute(a)
    scaled = ops.mul(x, beta)
    soft = ops.div(ops.log1p(ops.exp(scaled)), beta)
    return convert(ops.where(ops.gt(scaled, threshold), x, soft), a.dtype)


@register_decomposition(F.hardtanh)
def hardtanh(a, min_val=-1.0, max_val=1.0, inplace=False):
    return ops.minimum(ops.maximum(a, min_val), max_val)


@register_decomposition(F.mish)
def mish(a, inplace=False):
    x = _compute(a)
    return convert(ops.mul(x, ops.tanh(ops.log1p(ops.exp(x)))), a.dtype)


# --------------------------------------------------------------------------- normalisation
def _norm_dims(a, normalized_shape):
    k = len(tuple(normalized_shape))
    return tuple(range(ndim_of(a) - k, ndim_of(a)))


@register_decomposition(F.layer_norm)
def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    dims = _norm_dims(input, normalized_shape)
    x = _compute(input)
    var, mean = ops.var_mean(x, dims, 0)
    kept = tuple(i for i in range(ndim_of(x)) if i not in dims)
    mean = ops.broadcast_in_dim(mean, shape_of(x), kept)
    rstd = ops.broadcast_in_dim(ops.rsqrt(ops.add(var, eps)), shape_of(x), kept)
    out = ops.mul(ops.sub(x, mean), rstd)
    if weight is not None:
        out = ops.mul(out, broadcast_to(_compute(weight), shape_of(x)))
    if bias is not None:
        out = ops.add(out, broadcast_to(_compute(bias), shape_of(x)))
    return convert(out, input.dtype)


@register_decomposition(*(f for f in (getattr(F, "rms_norm", None),) if f is not None))
def rms_norm(input, normalized_shape, weight=None, eps=None):
    dims = _norm_dims(input, normalized_shape)
    if eps is None:
        eps = torch.finfo(input.dtype).eps
    x = _compute(input)
    count = prod(shape_of(x)[d] for d in dims)
    mean_sq = ops.div(ops.sum(ops.mul(x, x), dims), count)
    kept = tuple(i for i in range(ndim_of(x)) if i not in dims)
    rms = ops.broadcast_in_dim(ops.rsqrt(ops.add(mean_sq, eps)), shape_of(x), kept)
    out = ops.mul(x, rms)
    if weight is not None:
        out = ops.mul(out, broadcast_to(_compute(weight), shape_of(x)))
    return convert(out, input.dtype)


@register_decomposition(F.normalize)
def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    x = _compute(input)
    d = wrap_dim(dim, ndim_of(x))
    if p == 2:
        norm = ops.sqrt(ops.sum(ops.mul(x, x), (d,)))
    elif p == 1:
        norm = ops.sum(ops.abs(x), (d,))
    else:
        norm = ops.pow(ops.sum(ops.pow(ops.abs(x), float(p)), (d,)), 1.0 / p)
    norm = ops.broadcast_in_dim(ops.maximum(norm, eps), shape_of(x),
                                tuple(i for i in range(ndim_of(x)) if i != d))
    return convert(ops.div(x, norm), input.dtype)


# --------------------------------------------------------------------------- dropout
def dropout_mask(shape, p, device):
    """A bool keep-mask with P(keep) = 1 - p, drawn with philox_rand."""
    seed = next_seed()
    offset = next_offset(prod(as_expr(s) for s in shape))
    u = ops.philox_rand(seed, offset, tuple(shape), torch.float32, device)
    return ops.ge(u, float(p))


def dropout_without_draws(input, p, training: bool, name: str):
    """What a dropout returns without drawing a mask (eval, p = 0: the input; p = 1: zeros), or
    None when it must draw one; a p outside [0, 1] is eager's error."""
    if not 0 <= p <= 1:
        raise PrimError(f"{name}: expected 0 <= p <= 1, found {p}")
    if not training or p == 0:
        return input
    return ops.mul(input, 0) if p == 1 else None


@register_decomposition(F.dropout, torch.dropout)
def dropout(input, p=0.5, training=True, inplace=False):
    trivial = dropout_without_draws(input, p, training, "dropout")
    if trivial is not None:
        return trivial
    keep = dropout_mask(shape_of(input), p, input.device)
    return convert(ops.where(keep, ops.mul(_compute(input), 1.0 / (1.0 - p)), 0.0), input.dtype)


# --------------------------------------------------------------------------- losses
def _reduce_loss(loss, reduction, weight_sum=None):
    if reduction == "none":
        return loss
    total = ops.sum(loss, tuple(range(ndim_of(loss))))
    if reduction == "sum":
        return total
    if reduction == "mean" and weight_sum is not None:
        # Every target ignored: eager gives nan with zero gradients, not 0 * (1/0) = nan ones.
        empty = ops.eq(weight_sum, 0)
        return ops.where(empty, float("nan"), ops.div(total, ops.where(empty, 1.0, weight_sum)))
    if reduction == "mean":
        return ops.div(total, numel_of(loss))
    raise PrimError(f"loss: expected reduction 'none', 'mean' or 'sum', found {reduction!r}")


def _class_last(logp):
    """(N, C, d1, ...) -> (N, d1, ..., C): classes in the last dim."""
    if ndim_of(logp) <= 2:
        return logp
    order = (0, *range(2, ndim_of(logp)), 1)
    return ops.permute(logp, order)


def _require_target_shape(logp, target) -> None:
    """Eager rejects a target whose shape is not the input's without the class dim; gather
    would silently read a part of the input instead."""
    expected = shape_of(logp)[:-1]
    if ndim_of(target) != len(expected):
        raise PrimError(f"nll_loss: expected a target of rank {len(expected)}, found rank "
                        f"{ndim_of(target)}")
    for dim, (want, got) in enumerate(zip(expected, shape_of(target), strict=True)):
        require_same_size(got, want, f"nll_loss: target size {got} in dim {dim} does not match "
                                     f"the input's {want}")


@register_decomposition(F.nll_loss)
def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    logp = _class_last(input)
    if ndim_of(logp) == 1:
        logp, target = unsqueeze(logp, 0), unsqueeze(target, 0)
    _require_target_shape(logp, target)
    valid = ops.ne(target, ignore_index)
    safe = ops.where(valid, target, 0)
    picked = ops.squeeze(ops.gather(logp, ndim_of(logp) - 1, unsqueeze(safe, -1)),
                         (ndim_of(logp) - 1,))
    w = convert(valid, logp.dtype)
    if weight is not None:
        rows = ops.index_select(convert(weight, logp.dtype), 0, reshape(safe, (numel_of(safe),)))
        w = ops.mul(w, reshape(rows, shape_of(safe)))
    loss = ops.neg(ops.mul(picked, w))
    if ndim_of(input) == 1 and reduction == "none":
        loss = ops.squeeze(loss, (0,))
    weight_sum = ops.sum(w, tuple(range(ndim_of(w)))) if reduction == "mean" else None
    return _reduce_loss(loss, reduction, weight_sum)


@register_decomposition(F.mse_loss)
def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    diff = pointwise(ops.sub, input, target)
    x = _compute(diff)
    return convert(_reduce_loss(ops.mul(x, x), reduction), diff.dtype)


@register_decomposition(F.l1_loss)
def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    diff = pointwise(ops.sub, input, target)
    return convert(_reduce_loss(ops.abs(_compute(diff)), reduction), diff.dtype)


# --------------------------------------------------------------------------- attention
def _repeat_kv_heads(query, kv):
    """Grouped-query attention: each of the Hkv heads (dim -3) repeated Hq // Hkv times in a row
    (torch's repeat_interleave), so query head h reads key/value head h // (Hq // Hkv)."""
    if ndim_of(query) < 3 or ndim_of(kv) < 3:
        raise PrimError(f"scaled_dot_product_attention: enable_gqa expects heads at dim -3, "
                        f"found {ndim_of(query)}-d query and {ndim_of(kv)}-d key/value")
    hq, hkv = as_expr(shape_of(query)[-3]), as_expr(shape_of(kv)[-3])
    if hq == hkv:
        return kv
    repeats = int(hq) // int(hkv) if hq.is_number and hkv.is_number else floordiv(hq, hkv)
    require(sympy.Eq(repeats * hkv, hq), "scaled_dot_product_attention: enable_gqa needs the "
            "query heads to be a multiple of the key/value heads")
    shape = shape_of(kv)
    grouped = (*shape[:-2], repeats, *shape[-2:])
    kept = tuple(d for d in range(len(grouped)) if d != len(shape) - 2)
    spread = ops.broadcast_in_dim(kv, grouped, kept)
    return reshape(spread, (*shape[:-3], hq, *shape[-2:]))


@register_decomposition(F.scaled_dot_product_attention)
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    if enable_gqa:
        key, value = _repeat_kv_heads(query, key), _repeat_kv_heads(query, value)
    if attn_mask is not None:
        scores_shape = (*shape_of(query)[:-1], shape_of(key)[-2])
        attn_mask = broadcast_to(attn_mask, scores_shape)
        if attn_mask.dtype != torch.bool:
            attn_mask = convert(attn_mask, query.dtype)
    if attn_mask is None and (can_use_flash(query, key, value) or (
            not dropout_p and cpu_attention.can_use(query, key, value))):
        # On CUDA the attention kernel draws the dropout mask itself and returns its
        # log-sum-exp, which its backward reads: no forward re-run, with or without dropout
        # (prims/fused_attention.py); without dropout no seed is drawn. The CPU's flash pair
        # does the same without dropout (it draws no mask: prims/cpu_attention.py).
        seed, offset = None, 0
        if dropout_p:
            seed = next_seed()
            offset = next_offset(prod(as_expr(s) for s in (*shape_of(query)[:-1],
                                                            shape_of(key)[-2])))
        out, _, _ = ops.sdpa_dropout(query, key, value, float(dropout_p), bool(is_causal),
                                     scale, seed, offset)
        return out
    if (attn_mask is not None and attn_mask.dtype != torch.bool) or dropout_p:
        # The sdpa prim's backward gives no gradient to the mask, and metas do not say whether
        # it needs one (T5's learned position bias does); and its dropout would run philox
        # outside the generated kernels. Both spell attention out with prims, where inductor
        # fuses the mask, softmax and dropout into its kernels around the two matmuls.
        return _attention_math(query, key, value, attn_mask, is_causal, scale, dropout_p)
    return ops.sdpa(query, key, value, attn_mask, 0.0, bool(is_causal), scale, None, 0)


def _attention_math(query, key, value, attn_mask, is_causal, scale, dropout_p=0.0):
    """dropout(softmax(q @ k^T * scale + mask)) @ v with prims."""
    from prims.decompositions.linalg import matmul

    n = ndim_of(query)
    key_t = ops.permute(key, (*range(n - 2), n - 1, n - 2))
    scores = matmul(query, key_t)
    head = as_expr(shape_of(query)[-1])
    if scale is None and not head.is_Integer:
        # a symbolic head dim: 1/sqrt(e) is computed in the graph, for every e
        root = ops.rsqrt(ops.full((), head, torch.float32, query.device))
        scores = ops.mul(scores, broadcast_to(convert(root, scores.dtype), shape_of(scores)))
    else:
        scores = ops.mul(scores, 1.0 / math.sqrt(int(head)) if scale is None else scale)
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        scores = ops.where(attn_mask, scores, float("-inf"))
    elif attn_mask is not None:
        scores = ops.add(scores, attn_mask)
    if is_causal:
        rows, cols = shape_of(scores)[-2:]
        row = ops.broadcast_in_dim(ops.iota(rows, 0, 1, torch.int64, query.device),
                                   (rows, cols), (0,))
        col = ops.broadcast_in_dim(ops.iota(cols, 0, 1, torch.int64, query.device),
                                   (rows, cols), (1,))
        allowed = ops.broadcast_in_dim(ops.ge(row, col), shape_of(scores), (n - 2, n - 1))
        scores = ops.where(allowed, scores, float("-inf"))
    weights = ops.exp(_log_softmax(_compute(scores), n - 1))  # f32 softmax for low precision
    if dropout_p:
        weights = dropout(weights, dropout_p)
    return matmul(convert(weights, value.dtype), value)


# --------------------------------------------------------------------------- pad, one_hot
@register_decomposition(F.pad)
def pad(input, pad, mode="constant", value=None):
    if mode in ("reflect", "replicate", "circular"):
        from prims.decompositions.pooling import index_pad

        return index_pad(input, tuple(pad), mode)
    if mode != "constant":
        raise PrimError(f"pad: expected mode 'constant', 'reflect', 'replicate' or 'circular', "
                        f"found {mode!r}")
    if len(pad) % 2 or len(pad) // 2 > ndim_of(input):
        raise PrimError(f"pad: expected pairs for at most {ndim_of(input)} dims, found {pad}")
    pairs = [(0, 0)] * ndim_of(input)
    for i in range(len(pad) // 2):
        pairs[ndim_of(input) - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    out = input
    for d, (lo, hi) in enumerate(pairs):  # negative pads crop
        if (isinstance(lo, int) and lo < 0) or (isinstance(hi, int) and hi < 0):
            size = shape_of(out)[d]
            start = -lo if isinstance(lo, int) and lo < 0 else 0
            stop = as_expr(size) + hi if isinstance(hi, int) and hi < 0 else size
            out = ops.slice(out, d, start, stop, 1)
    pairs = [(lo if not (isinstance(lo, int) and lo < 0) else 0,
              hi if not (isinstance(hi, int) and hi < 0) else 0) for lo, hi in pairs]
    if all(lo == 0 and hi == 0 for lo, hi in pairs):
        return out
    return ops.pad(out, tuple(pairs), 0 if value is None else value)


@register_decomposition(F.one_hot)
def one_hot(tensor, num_classes=-1):
    if num_classes == -1:
        raise PrimError("one_hot: num_classes=-1 reads the data (max + 1); pass num_classes")
    classes = ops.iota(num_classes, 0, 1, torch.int64, tensor.device)
    expanded = broadcast_to(unsqueeze(tensor, -1), (*shape_of(tensor), num_classes))
    grid = broadcast_to(classes, (*shape_of(tensor), num_classes))
    return convert(ops.eq(expanded, grid), torch.int64)
