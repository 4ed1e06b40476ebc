"""Autocast as explicit converts: the casts torch.autocast would make, decided at decomposition.

symc.compile reads the caller's autocast state at every call (it is part of the cache key) and
decomposes under it, so the prims graph holds the casts and runs the same with autocast off:

    with autocast_state({"cuda": torch.bfloat16}):
        infer_meta(F.linear, (f32[s0, 64] cuda, f32[32, 64] cuda), {}, env)   # -> bf16[s0, 32]

The tables follow torch's documented CUDA autocast op lists: ops that run in the lower
precision (matrix products, attention) and ops that run in float32 (reductions, softmax, norms,
losses, transcendental pointwise). Ops on neither list run in their inputs' promoted dtype, as in
eager. Keys are op names, so `torch.matmul`, `Tensor.matmul` and `operator.matmul` all match.
"""

from __future__ import annotations

import contextlib
import contextvars

import torch

from prims.core import PrimError
from prims.decompositions.common import convert, is_tensor
from prims.decompositions.registry import target_name

LOWER_PRECISION = frozenset({
    "mm", "bmm", "matmul", "linear", "addmm", "addbmm", "baddbmm", "addmv", "addr", "mv",
    "einsum", "chain_matmul", "scaled_dot_product_attention", "conv1d", "conv2d", "conv3d",
    "prelu",
})
FLOAT32 = frozenset({
    "pow", "rpow", "rtruediv", "rdiv", "acos", "asin", "cosh", "sinh", "tan", "erfinv", "exp",
    "expm1", "log", "log10", "log1p", "log2", "reciprocal", "rsqrt", "softplus", "layer_norm",
    "group_norm", "norm", "normalize", "cosine_similarity", "cdist", "dist", "pdist", "renorm",
    "softmax", "log_softmax", "softmin", "cumsum", "cumprod", "prod", "sum", "cross_entropy",
    "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "kl_div",
    "binary_cross_entropy_with_logits", "margin_ranking_loss", "soft_margin_loss",
    "hinge_embedding_loss", "poisson_nll_loss", "cosine_embedding_loss", "multi_margin_loss",
    "multilabel_margin_loss", "triplet_margin_loss",
})
_CASTABLE = (torch.float16, torch.bfloat16, torch.float32)

_STATE: contextvars.ContextVar = contextvars.ContextVar("symc_autocast", default=None)
# CPU stand-ins of a GPU step (bench/kernel_census.py --bf16, tests): CPU autocast takes CUDA's lists
_CPU_AS_CUDA: contextvars.ContextVar = contextvars.ContextVar("symc_cpu_as_cuda", default=False)


def current_autocast_state() -> tuple | None:
    """The caller's torch autocast state as a hashable key: ((device_type, dtype), ...) for each
    device type with autocast on, or None when it is off everywhere."""
    state = tuple((device, torch.get_autocast_dtype(device)) for device in ("cuda", "cpu")
                  if torch.is_autocast_enabled(device))
    return state or None


@contextlib.contextmanager
def autocast_state(state):
    """Decompose under `state` (a dict or the key from `current_autocast_state`)."""
    token = _STATE.set(dict(state) if state else None)
    try:
        yield
    finally:
        _STATE.reset(token)


@contextlib.contextmanager
def cpu_autocast_as_cuda():
    """CPU autocast decomposes with CUDA autocast's op lists: a CPU stand-in of a GPU bf16
    step (the kernel census, tests) gets the casts the GPU step gets."""
    token = _CPU_AS_CUDA.set(True)
    try:
        yield
    finally:
        _CPU_AS_CUDA.reset(token)


def _op_name(target) -> str:
    return target_name(target).rsplit(".", 1)[-1].strip("_")


def _first_tensor(values):
    for v in values:
        if is_tensor(v):
            return v
        if isinstance(v, (list, tuple)):
            found = _first_tensor(v)
            if found is not None:
                return found
    return None


def _cast_all(value, dtype):
    if is_tensor(value):
        return convert(value, dtype) if value.dtype in _CASTABLE else value
    if isinstance(value, list):
        return [_cast_all(v, dtype) for v in value]
    if isinstance(value, tuple):
        return tuple(_cast_all(v, dtype) for v in value)
    return value


def autocast_dtype(target, device_type: str):
    """The dtype autocast casts the floating inputs of `target` to on `device_type`, or None."""
    state = _STATE.get()
    if not state or device_type not in state:
        return None
    if device_type != "cuda" and not _CPU_AS_CUDA.get():
        raise PrimError(f"autocast on {device_type}: symc implements CUDA autocast's op lists "
                        f"only (run this region without autocast, or on CUDA)")
    name = _op_name(target)
    if name in LOWER_PRECISION:
        return state[device_type]
    return torch.float32 if name in FLOAT32 else None


def with_autocast(target, fn):
    """`fn` (the decomposition of `target`), casting its inputs as autocast would."""
    if not _STATE.get():
        return fn

    def cast_then_call(*args, **kwargs):
        first = _first_tensor((*args, *kwargs.values()))
        dtype = autocast_dtype(target, first.device.type) if first is not None else None
        if dtype is None:
            return fn(*args, **kwargs)
        return fn(*_cast_all(args, dtype), **{k: _cast_all(v, dtype) for k, v in kwargs.items()})

    return cast_then_call
