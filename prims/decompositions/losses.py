"""torch.nn.functional losses beyond nn.py's (nll, cross_entropy, mse, l1): binary cross entropy
(with logits), smooth L1, Huber, KL divergence, soft margin, margin ranking, hinge embedding,
cosine embedding, Poisson and Gaussian NLL, multilabel soft margin, triplet margin.

Each computes the elementwise loss with prims (f32 for low-precision inputs), then reduces it
as nn.py's `_reduce_loss` does ('none', 'mean', 'sum'); VJPs are the prims' composed.

    F.smooth_l1_loss(x, y, beta=b) -> d = |x - y|; where(d < b, 0.5 d^2 / b, d - 0.5 b); mean
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from prims import ops
from prims.core import PrimError
from prims.decompositions.activations import pairwise_distance
from prims.decompositions.common import (
    broadcast_tensors,
    convert,
    ndim_of,
    reshape,
    shape_of,
    unsqueeze,
)
from prims.decompositions.nn import _reduce_loss
from prims.decompositions.registry import register_decomposition
from prims.promotion import opmath
from prims.sizes import analyzer, prod, require_same_size
from prims.decompositions.special import log_sigmoid


def _legacy(size_average, reduce, reduction):
    """torch's deprecated size_average / reduce flags folded into `reduction`."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _pair(input, target):
    """Both in the compute dtype of `input`, broadcast; plus the result dtype."""
    dtype = input.dtype if input.dtype.is_floating_point else torch.get_default_dtype()
    compute = opmath(dtype)
    a, b = broadcast_tensors(convert(input, compute), convert(target, compute))
    return a, b, dtype


def _finish(loss, reduction, dtype):
    return convert(_reduce_loss(loss, reduction), dtype)


def _weighted(loss, weight):
    if weight is None:
        return loss
    loss, w = broadcast_tensors(loss, convert(weight, loss.dtype))
    return ops.mul(loss, w)


@register_decomposition(F.binary_cross_entropy)
def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    x, t, dtype = _pair(input, target)
    log_x = ops.maximum(ops.log(x), -100.0)
    log_1mx = ops.maximum(ops.log(ops.sub(1.0, x)), -100.0)
    loss = ops.neg(ops.add(ops.mul(t, log_x), ops.mul(ops.sub(1.0, t), log_1mx)))
    return _finish(_weighted(loss, weight), reduction, dtype)


@register_decomposition(F.binary_cross_entropy_with_logits)
def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None,
                                     reduction="mean", pos_weight=None):
    reduction = _legacy(size_average, reduce, reduction)
    x, t, dtype = _pair(input, target)
    soft = ops.add(ops.log1p(ops.exp(ops.neg(ops.abs(x)))), ops.maximum(ops.neg(x), 0.0))
    if pos_weight is not None:
        pw, _ = broadcast_tensors(convert(pos_weight, x.dtype), x)
        soft = ops.mul(ops.add(ops.mul(ops.sub(pw, 1.0), t), 1.0), soft)
    loss = ops.add(ops.mul(ops.sub(1.0, t), x), soft)
    return _finish(_weighted(loss, weight), reduction, dtype)


@register_decomposition(F.smooth_l1_loss)
def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    reduction = _legacy(size_average, reduce, reduction)
    x, t, dtype = _pair(input, target)
    d = ops.abs(ops.sub(x, t))
    if beta == 0:
        return _finish(d, reduction, dtype)
    loss = ops.where(ops.lt(d, float(beta)), ops.div(ops.mul(ops.mul(d, d), 0.5), float(beta)),
                     ops.sub(d, 0.5 * beta))
    return _finish(loss, reduction, dtype)


@register_decomposition(F.huber_loss)
def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    x, t, dtype = _pair(input, target)
    d = ops.abs(ops.sub(x, t))
    loss = ops.where(ops.lt(d, float(delta)), ops.mul(ops.mul(d, d), 0.5),
                     ops.mul(ops.sub(d, 0.5 * delta), float(delta)))
    return _finish(_weighted(loss, weight), reduction, dtype)


@register_decomposition(F.kl_div)
def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    reduction = _legacy(size_average, reduce, reduction)
    x, t, dtype = _pair(input, target)
    if log_target:
        loss = ops.mul(ops.exp(t), ops.sub(t, x))
    else:
        xlogx = ops.where(ops.eq(t, 0.0), 0.0, ops.mul(t, ops.log(t)))
        xlogx = ops.where(ops.isnan(t), t, xlogx)
        loss = ops.sub(xlogx, ops.mul(t, x))
    if reduction == "batchmean":
        total = ops.sum(loss, tuple(range(ndim_of(loss))))
        if ndim_of(input) == 0:
            return convert(total, dtype)
        return convert(ops.div(total, shape_of(input)[0]), dtype)
    return _finish(loss, reduction, dtype)


@register_decomposition(F.soft_margin_loss)
def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    x, t, dtype = _pair(input, target)
    return _finish(ops.log1p(ops.exp(ops.neg(ops.mul(t, x)))), reduction, dtype)


@register_decomposition(F.margin_ranking_loss)
def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    if ndim_of(input1) != ndim_of(input2) or ndim_of(input1) != ndim_of(target):
        raise PrimError("margin_ranking_loss: expected input1, input2 and target of one rank")
    x1, x2, dtype = _pair(input1, input2)
    x1, x2, t = broadcast_tensors(x1, x2, convert(target, x1.dtype))
    loss = ops.maximum(ops.add(ops.mul(ops.neg(t), ops.sub(x1, x2)), float(margin)), 0.0)
    return _finish(loss, reduction, dtype)


@register_decomposition(F.hinge_embedding_loss)
def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    x, t, dtype = _pair(input, target)
    clamped = ops.maximum(ops.sub(float(margin), x), 0.0)
    loss = ops.add(ops.where(ops.ne(t, 1.0), clamped, 0.0), ops.where(ops.ne(t, -1.0), x, 0.0))
    return _finish(loss, reduction, dtype)


@register_decomposition(F.cosine_embedding_loss)
def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    x1, x2, dtype = _pair(input1, input2)
    last = (ndim_of(x1) - 1,) if ndim_of(x1) else ()
    eps = 1e-12
    dot = ops.sum(ops.mul(x1, x2), last) if last else ops.mul(x1, x2)
    m1 = ops.add(ops.sum(ops.mul(x1, x1), last) if last else ops.mul(x1, x1), eps)
    m2 = ops.add(ops.sum(ops.mul(x2, x2), last) if last else ops.mul(x2, x2), eps)
    cos = ops.div(dot, ops.sqrt(ops.mul(m1, m2)))
    cos, t = broadcast_tensors(cos, convert(target, cos.dtype))
    pos = ops.where(ops.eq(t, 1.0), ops.sub(1.0, cos), 0.0)
    neg = ops.where(ops.eq(t, -1.0), ops.maximum(ops.sub(cos, float(margin)), 0.0), 0.0)
    return _finish(ops.add(pos, neg), reduction, dtype)


@register_decomposition(F.poisson_nll_loss)
def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    x, t, dtype = _pair(input, target)
    if log_input:
        loss = ops.sub(ops.exp(x), ops.mul(t, x))
    else:
        loss = ops.sub(x, ops.mul(t, ops.log(ops.add(x, float(eps)))))
    if full:
        safe = ops.where(ops.gt(t, 1.0), t, 1.0)
        stirling = ops.add(ops.sub(ops.mul(safe, ops.log(safe)), safe),
                           ops.mul(ops.log(ops.mul(safe, 2 * math.pi)), 0.5))
        loss = ops.add(loss, ops.where(ops.gt(t, 1.0), stirling, 0.0))
    return _finish(loss, reduction, dtype)


@register_decomposition(F.gaussian_nll_loss)
def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    if not isinstance(var, (float, int)) and ndim_of(var) != ndim_of(input):
        if ndim_of(var) + 1 == ndim_of(input) and all(
                analyzer().equal(a, b) for a, b in zip(shape_of(input)[:-1], shape_of(var), strict=True)):
            var = unsqueeze(var, -1)
        else:
            raise PrimError("gaussian_nll_loss: var must have the input's shape, or it without "
                            "its last dim, or a last dim of 1")
    x, t, dtype = _pair(input, target)
    if isinstance(var, (float, int)):
        v = ops.broadcast_in_dim(ops.full((), float(var), x.dtype, x.device), shape_of(x), ())
    else:
        v, x = broadcast_tensors(convert(var, x.dtype), x)
        x, t = broadcast_tensors(x, t)
    # eager clamps var in place under no_grad: the value is clamped, the gradient passes as is
    clamped = ops.add(v, ops.stop_gradient(ops.sub(ops.maximum(v, float(eps)), v)))
    d = ops.sub(x, t)
    loss = ops.mul(ops.add(ops.log(clamped), ops.div(ops.mul(d, d), clamped)), 0.5)
    if full:
        loss = ops.add(loss, 0.5 * math.log(2 * math.pi))
    return _finish(loss, reduction, dtype)


@register_decomposition(F.multilabel_soft_margin_loss)
def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    x, t, dtype = _pair(input, target)
    loss = ops.neg(ops.add(ops.mul(t, log_sigmoid(x)),
                           ops.mul(ops.sub(1.0, t), log_sigmoid(ops.neg(x)))))
    loss = _weighted(loss, weight)
    class_dim = ndim_of(x) - 1
    loss = ops.div(ops.sum(loss, (class_dim,)), shape_of(x)[class_dim])
    return _finish(loss, reduction, dtype)


@register_decomposition(F.triplet_margin_loss)
def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    d_ap = pairwise_distance(anchor, positive, p, eps)
    d_an = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_an = ops.minimum(d_an, pairwise_distance(positive, negative, p, eps))
    dtype = d_ap.dtype
    x = convert(ops.add(ops.sub(d_ap, d_an), float(margin)), opmath(dtype))
    return _finish(ops.maximum(x, 0.0), reduction, dtype)


@register_decomposition(F.multi_margin_loss)
def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    if p not in (1, 2):
        raise PrimError(f"multi_margin_loss: expected p 1 or 2, found {p}")
    single = ndim_of(input) <= 1
    x = convert(input, opmath(input.dtype))
    if single:
        x = ops.reshape(x, (1, shape_of(x)[0] if ndim_of(x) else 1))
        target = ops.reshape(target, (1,))
    n, c = shape_of(x)
    y = unsqueeze(target, 1)
    picked = ops.gather(x, 1, y)
    z = ops.maximum(ops.add(ops.sub(float(margin), ops.broadcast_in_dim(
        ops.squeeze(picked, (1,)), (n, c), (0,))), x), 0.0)
    if p == 2:
        z = ops.mul(z, z)
    if weight is not None:
        w = ops.index_select(convert(weight, x.dtype), 0, target)
        z = ops.mul(z, ops.broadcast_in_dim(w, (n, c), (0,)))
    classes = ops.broadcast_in_dim(ops.iota(c, 0, 1, torch.int64, x.device), (n, c), (1,))
    z = ops.where(ops.eq(classes, ops.broadcast_in_dim(target, (n, c), (0,))), 0.0, z)
    loss = ops.div(ops.sum(z, (1,)), c)
    if single:
        loss = ops.reshape(loss, ())
    return _finish(loss, reduction, input.dtype)


@register_decomposition(F.multilabel_margin_loss)
def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    reduction = _legacy(size_average, reduce, reduction)
    single = ndim_of(input) <= 1
    x = convert(input, opmath(input.dtype))
    if single:
        x = ops.reshape(x, (1, shape_of(x)[0] if ndim_of(x) else 1))
        target = ops.reshape(target, shape_of(x))
    n, c = shape_of(x)
    # labels are target's entries before its first -1
    present = convert(ops.ne(target, -1), torch.int64)
    valid = ops.gt(ops.cumprod(present, 1), 0)
    safe = ops.where(valid, target, 0)
    pairs = (n, c, c)  # (sample, label slot j, class i)
    is_label = ops.logical_and(
        ops.broadcast_in_dim(valid, pairs, (0, 1)),
        ops.eq(ops.broadcast_in_dim(safe, pairs, (0, 1)),
               ops.broadcast_in_dim(ops.iota(c, 0, 1, torch.int64, x.device), pairs, (2,))))
    is_target = ops.any(is_label, (1,))  # (n, c): class i is a label
    x_label = ops.gather(x, 1, safe)  # (n, c) over slots j
    hinge = ops.maximum(ops.add(ops.sub(1.0, ops.broadcast_in_dim(x_label, pairs, (0, 1))),
                                ops.broadcast_in_dim(x, pairs, (0, 2))), 0.0)
    use = ops.logical_and(ops.broadcast_in_dim(valid, pairs, (0, 1)),
                          ops.logical_not(ops.broadcast_in_dim(is_target, pairs, (0, 2))))
    loss = ops.div(ops.sum(ops.where(use, hinge, 0.0), (1, 2)), c)
    if single:
        loss = ops.reshape(loss, ())
    return _finish(loss, reduction, input.dtype)


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0, options=None):
    """cross_entropy(linear(input, W, b)) with logits of shape (*batch, C, *out_features).
    `options` picks eager's chunking (a memory strategy, the same values): one fused graph here;
    an accumulation dtype other than the input's would change the values, so it is refused."""
    from prims.decompositions.cross_entropy import cross_entropy
    from prims.decompositions.linalg import linear

    if not 1 <= ndim_of(input) <= 2 or ndim_of(linear_weight) < 2:
        raise PrimError(f"linear_cross_entropy: expected a 1-d or 2-d input and a weight of at "
                        f"least 2 dims, found {input} and {linear_weight}")
    acc_dtype = getattr(options, "acc_dtype", None)
    if acc_dtype is not None and acc_dtype != input.dtype:
        raise PrimError(f"linear_cross_entropy: accumulation in {acc_dtype} for {input.dtype} "
                        "inputs is not supported")
    batch, features = shape_of(input)[:-1], shape_of(input)[-1]
    classes, out_features = shape_of(linear_weight)[0], shape_of(linear_weight)[1:-1]
    require_same_size(features, shape_of(linear_weight)[-1],
                      "linear_cross_entropy: input and linear_weight in_features differ")
    if out_features and not batch:
        raise PrimError("linear_cross_entropy: a K-dimensional loss needs a batched input")
    rows = prod((classes, *out_features))
    w = reshape(linear_weight, (rows, features)) if out_features else linear_weight
    b = reshape(linear_bias, (rows,)) if out_features and linear_bias is not None \
        else linear_bias
    logits = reshape(linear(input, w, b), (*batch, classes, *out_features))
    if target.dtype.is_floating_point and ignore_index is not None:
        raise PrimError("linear_cross_entropy: ignore_index with class-probability targets")
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=-100 if ignore_index is None else ignore_index,
                         label_smoothing=label_smoothing)


if hasattr(F, "linear_cross_entropy"):  # torch >= 2.12
    register_decomposition(F.linear_cross_entropy)(linear_cross_entropy)
