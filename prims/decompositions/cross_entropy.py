"""F.cross_entropy with class-index targets (class-probability targets: `_soft_cross_entropy`,
a row sum over log_softmax), written so that no [N, C] tensor but the logits and
their gradient ever exists: the loss comes from the rows' log-sum-exp and the target logit,
never from a materialized log_softmax.

    m = stop_gradient(safe max of x over C)          per row (reductions.safe_row_max)
    s = sum(exp(x - m))                             per row, the same pass as m (online sum)
    loss = log(s) - (x[t] - m)                      a gather of N logits, not of log_softmax
    label smoothing adds  sum_c w_c (m + log s - x_c) = W (log s) - sum_c w_c (x_c - m)

Its composed VJP is pointwise over [N, C]: exp(x - m) * g / s (softmax times the row's
cotangent) minus the gather's one-hot `where(iota == t, g, 0)` (vjp_rules' gather rule), so the
backward is one kernel reading the logits, m, s and t. x is the logits upcast to f32 (bf16
logits are read as they are; the upcast fuses into the kernels).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import (
    broadcast_to,
    convert,
    ndim_of,
    numel_of,
    reshape,
    shape_of,
    unsqueeze,
)
from prims.decompositions.nn import _class_last, _compute, _reduce_loss, _require_target_shape
from prims.decompositions.reductions import safe_row_max
from prims.decompositions.registry import register_decomposition
from prims.sizes import require_same_size


def _row_weights(weight, safe, valid, dtype):
    """Each row's class weight (0 where the target is ignored)."""
    w = convert(valid, dtype)
    if weight is None:
        return w
    rows = ops.index_select(convert(weight, dtype), 0, reshape(safe, (numel_of(safe),)))
    return ops.mul(w, reshape(rows, shape_of(safe)))


def _total(x):
    return ops.sum(x, tuple(range(ndim_of(x))))


def _soft_cross_entropy(input, target, weight, reduction, eps):
    """Class-probability targets: -sum_c w_c y_c log_softmax(x)_c per row, y smoothed towards
    the uniform distribution by `eps`; 'mean' divides by the number of rows (not by weights)."""
    x, y = _class_last(_compute(input)), _class_last(_compute(target))
    shape = shape_of(x)
    for dim, (want, got) in enumerate(zip(shape, shape_of(y), strict=True)):
        require_same_size(got, want, f"cross_entropy: target size {got} in dim {dim} does not "
                                     f"match the input's {want}")
    last = ndim_of(x) - 1
    kept = tuple(range(last))
    shifted = ops.sub(x, ops.broadcast_in_dim(safe_row_max(x, (last,)), shape, kept))
    log_s = ops.log(ops.sum(ops.exp(shifted), (last,)))
    logp = ops.sub(shifted, ops.broadcast_in_dim(log_s, shape, kept))
    if eps:
        c = shape[-1]   # y (1 - eps) + eps / C, with the symbolic C on the tensor side
        y = ops.div(ops.add(ops.mul(ops.mul(y, 1.0 - eps), c), eps), c)
    if weight is not None:
        y = ops.mul(y, ops.broadcast_in_dim(_compute(weight), shape, (last,)))
    loss = ops.neg(ops.sum(ops.mul(y, logp), (last,)))
    return convert(_reduce_loss(loss, reduction), input.dtype)


@register_decomposition(F.cross_entropy)
def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    if reduction not in ("none", "mean", "sum"):
        raise PrimError(f"cross_entropy: expected reduction 'none', 'mean' or 'sum', found "
                        f"{reduction!r}")
    if target.dtype.is_floating_point:
        if ignore_index != -100:
            raise PrimError("cross_entropy: ignore_index is not supported for floating point "
                            "target (eager raises)")
        return _soft_cross_entropy(input, target, weight, reduction, float(label_smoothing))
    if reduction not in ("none", "mean", "sum"):
        raise PrimError(f"cross_entropy: expected reduction 'none', 'mean' or 'sum', found "
                        f"{reduction!r}")
    x = _class_last(_compute(input))  # (N, d1, ..., C)
    single = ndim_of(x) == 1
    if single:
        x, target = unsqueeze(x, 0), unsqueeze(target, 0)
    _require_target_shape(x, target)
    last = ndim_of(x) - 1
    shape = shape_of(x)
    kept = tuple(range(last))
    m = safe_row_max(x, (last,))
    shifted = ops.sub(x, ops.broadcast_in_dim(m, shape, kept))
    log_s = ops.log(ops.sum(ops.exp(shifted), (last,)))
    valid = ops.ne(target, ignore_index)
    safe = ops.where(valid, target, 0)
    picked = ops.squeeze(ops.gather(x, last, unsqueeze(safe, -1)), (last,))
    # log_softmax(x)[t] = (x[t] - m) - log s; an ignored row is 0 (not 0 * inf = nan)
    loss = ops.sub(log_s, ops.sub(picked, m))
    w = _row_weights(weight, safe, valid, x.dtype)
    loss = ops.where(valid, loss if weight is None else ops.mul(loss, w), 0.0)
    eps = float(label_smoothing)
    if eps:
        class_w = None if weight is None else broadcast_to(_compute(weight), shape)
        w_shift = shifted if class_w is None else ops.mul(shifted, class_w)
        if class_w is None:
            weighted_log_s = ops.mul(log_s, shape[-1])
        else:
            total_w = ops.sum(_compute(weight), (0,))
            weighted_log_s = ops.mul(log_s, ops.broadcast_in_dim(total_w, shape_of(log_s), ()))
        smooth = ops.sub(weighted_log_s, ops.sum(w_shift, (last,)))
        smooth = ops.where(valid, smooth, 0.0)
        loss = ops.add(ops.mul(loss, 1.0 - eps), ops.mul(ops.div(smooth, shape[-1]), eps))
    if single and reduction == "none":
        loss = ops.squeeze(loss, (0,))
    weight_sum = _total(w) if reduction == "mean" else None
    return convert(_reduce_loss(loss, reduction, weight_sum), input.dtype)
