"""Batch and instance norm that update running statistics: the normalisation, then the new
statistics written into the running_mean / running_var tensors (capture/functionalize.write).

Eager's training-mode batch norm writes `running = (1 - momentum) * running + momentum * stat`
in place, with the batch mean and the *unbiased* batch variance; instance norm writes the same
with each statistic averaged over the batch. Captured, that is a functional graph:

    F.batch_norm(x, rm, rv, w, b, training=True, momentum=0.1)
        ->  out = F.batch_norm(x, None, None, w, b, training=True, momentum=0.1)
            var, mean = var_mean(x, (0, 2), correction=1).detach()
            rm <- rm * 0.9 + mean * 0.1;  rv <- rv * 0.9 + var * 0.1     (graph outputs copied back)

The native variants (torch.native_batch_norm, torch._native_batch_norm_legit,
aten._batch_norm_with_update) also return eager's save_mean and save_invstd (the biased
statistics, not tracked by autograd; empty in eval mode) and, for the last, an empty reserve.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from capture.errors import Unsupported
from capture.functionalize import write
from capture.graph import GraphState
from capture.variables import ConstVariable, TensorVariable, TupleVariable, Variable

NONE = ConstVariable(None)
# Parameter names of each op, in order (the builtins have no inspectable signature).
NATIVE = ("input", "weight", "bias", "running_mean", "running_var", "training", "momentum", "eps")
NATIVE_NO_STATS = ("input", "weight", "bias", "training", "momentum", "eps")
WITH_UPDATE = ("input", "weight", "bias", "running_mean", "running_var", "momentum", "eps")
FUNCTIONAL = ("input", "running_mean", "running_var", "weight", "bias", "training", "momentum",
              "eps")
INSTANCE = ("input", "running_mean", "running_var", "weight", "bias", "use_input_stats",
            "momentum", "eps")
DEFAULTS = {"running_mean": NONE, "running_var": NONE, "weight": NONE, "bias": NONE,
            "training": ConstVariable(False), "use_input_stats": ConstVariable(True),
            "momentum": ConstVariable(0.1), "eps": ConstVariable(1e-5)}


def _bind(params: tuple, args: list, kwargs: dict, what: str) -> dict:
    if len(args) > len(params) or set(kwargs) - set(params):
        raise Unsupported(f"{what}: arguments {len(args)} positional, {sorted(kwargs)} by "
                          f"keyword do not match ({', '.join(params)})")
    bound = dict(zip(params, args))
    for name in params[len(args):]:
        if name in kwargs:
            bound[name] = kwargs[name]
        elif name in DEFAULTS:
            bound[name] = DEFAULTS[name]
        else:
            raise Unsupported(f"{what}: missing argument {name}")
    return bound


def _flag(var: Variable, name: str, what: str):
    if not isinstance(var, ConstVariable):
        raise Unsupported(f"{what}: a non-constant {name} argument")
    return var.value


def _has_stats(b: dict) -> bool:
    return isinstance(b["running_mean"], TensorVariable) or isinstance(b["running_var"],
                                                                         TensorVariable)


# ---------------------------------------------------------------------- the functional pieces
def _batch_stats(state: GraphState, x: TensorVariable, dims: tuple, correction: int):
    """(var, mean) of `x` over `dims`, detached: statistics eager computes outside autograd."""
    var, mean = state.call(torch.var_mean, [x],
                           {"dim": ConstVariable(dims), "correction": ConstVariable(correction)}
                           ).items
    return tuple(state.call(torch.Tensor.detach, [t], {}) for t in (var, mean))


def _update(state: GraphState, running: Variable, stat: TensorVariable, momentum: float,
            what: str) -> None:
    """running <- (1 - momentum) * running + momentum * stat, in place (as eager writes it)."""
    if not isinstance(running, TensorVariable):
        return
    kept = state.call(torch.mul, [running, ConstVariable(1.0 - momentum)], {})
    new = state.call(torch.add, [kept, state.call(torch.mul, [stat, ConstVariable(momentum)],
                                                                {})], {})
    write(state, running, new, what)


def _momentum(b: dict, what: str) -> float:
    momentum = _flag(b["momentum"], "momentum", what)
    if not isinstance(momentum, (int, float)) or isinstance(momentum, bool):
        raise Unsupported(f"{what}: expected a float momentum, found {momentum!r}")
    return float(momentum)


def _channel_dims(x: TensorVariable) -> tuple:
    return tuple(d for d in range(x.meta.ndim) if d != (1 if x.meta.ndim > 1 else 0))


def _normalize(state: GraphState, b: dict, training: bool):
    """F.batch_norm's output: batch statistics in training, the running ones in eval."""
    stats = [NONE, NONE] if training else [b["running_mean"], b["running_var"]]
    return state.call(F.batch_norm, [b["input"], *stats, b["weight"], b["bias"]],
                      {"training": ConstVariable(training), "momentum": b["momentum"],
                       "eps": b["eps"]})


def _train(state: GraphState, b: dict, what: str, saved: bool):
    """Training-mode batch norm: its output, the running statistics updated, and (saved)
    eager's save_mean and save_invstd."""
    out = _normalize(state, b, True)
    x, dims = b["input"], _channel_dims(b["input"])
    if _has_stats(b):
        momentum = _momentum(b, what)
        var, mean = _batch_stats(state, x, dims, 1)
        _update(state, b["running_mean"], mean, momentum, what)
        _update(state, b["running_var"], var, momentum, what)
    if not saved:
        return out
    var, mean = _batch_stats(state, x, dims, 0)
    invstd = state.call(torch.rsqrt, [state.call(torch.add, [var, b["eps"]], {})], {})
    return TupleVariable([out, mean, invstd])


def _empty(state: GraphState, x: TensorVariable, dtype=None):
    return state.call(torch.Tensor.new_zeros, [x, ConstVariable((0,))],
                      {"dtype": ConstVariable(dtype or x.meta.dtype)})


# ---------------------------------------------------------------------- one rule per op
def batch_norm(state: GraphState, args: list, kwargs: dict):
    b = _bind(FUNCTIONAL, args, kwargs, "batch_norm")
    if not _flag(b["training"], "training", "batch_norm") or not _has_stats(b):
        return state.call(F.batch_norm, args, kwargs)   # nothing written: the plain op
    return _train(state, b, "batch_norm", saved=False)


def instance_norm(state: GraphState, args: list, kwargs: dict):
    b = _bind(INSTANCE, args, kwargs, "instance_norm")
    if not _flag(b["use_input_stats"], "use_input_stats", "instance_norm") or not _has_stats(b):
        return state.call(F.instance_norm, args, kwargs)
    x = b["input"]
    out = state.call(F.instance_norm, [x, NONE, NONE, b["weight"], b["bias"]],
                     {"use_input_stats": ConstVariable(True), "momentum": b["momentum"],
                      "eps": b["eps"]})
    momentum = _momentum(b, "instance_norm")
    var, mean = _batch_stats(state, x, tuple(range(2, x.meta.ndim)), 1)
    for running, stat in ((b["running_mean"], mean), (b["running_var"], var)):
        stat = state.call(torch.mean, [stat], {"dim": ConstVariable(0)})   # over the batch
        _update(state, running, stat, momentum, "instance_norm")
    return out


def native_batch_norm(state: GraphState, args: list, kwargs: dict, what="native_batch_norm"):
    b = _bind(NATIVE, args, kwargs, what)
    if _flag(b["training"], "training", what):
        return _train(state, b, what, saved=True)
    out = _normalize(state, b, False)
    return TupleVariable([out, _empty(state, b["input"]), _empty(state, b["input"])])


def native_batch_norm_legit(state: GraphState, args: list, kwargs: dict):
    what = "_native_batch_norm_legit"
    if len(args) + len(kwargs) == len(NATIVE_NO_STATS) and "running_mean" not in kwargs:
        b = _bind(NATIVE_NO_STATS, args, kwargs, what)
        if not _flag(b["training"], "training", what):
            raise Unsupported(f"{what}: eval mode without running statistics")
        return _train(state, {**b, "running_mean": NONE, "running_var": NONE}, what, True)
    return native_batch_norm(state, args, kwargs, what)


def batch_norm_with_update(state: GraphState, args: list, kwargs: dict):
    what = "_batch_norm_with_update"
    b = _bind(WITH_UPDATE, args, kwargs, what)
    out, mean, invstd = _train(state, b, what, saved=True).items
    return TupleVariable([out, mean, invstd, _empty(state, b["input"], torch.uint8)])


RUNNING_STATS_RULES = {
    F.batch_norm: batch_norm,
    F.instance_norm: instance_norm,
    torch.native_batch_norm: native_batch_norm,
    torch._native_batch_norm_legit: native_batch_norm_legit,
    torch.ops.aten._native_batch_norm_legit: native_batch_norm_legit,
    torch.ops.aten._batch_norm_with_update: batch_norm_with_update,
    torch.ops.aten._batch_norm_with_update.default: batch_norm_with_update,
}
_BATCH_NORM_WITH_UPDATE = getattr(torch, "_batch_norm_with_update", None)
if _BATCH_NORM_WITH_UPDATE is not None:
    RUNNING_STATS_RULES[_BATCH_NORM_WITH_UPDATE] = batch_norm_with_update
