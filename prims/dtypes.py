"""The dtypes prims compute in, checked on every prim's inputs and outputs while tracing.

Complex dtypes (their gradients need conjugates the VJP rules do not take), wide unsigned ints
(uint16/32/64: few torch kernels, no generated-code types) and the float8 family are outside
the set: a prim that meets one raises PrimError, which capture turns into a graph break with
the reason, so the op runs eagerly instead of crashing a backend.

    prims.ops.mul(c64[s0], 2.0) while tracing -> PrimError("mul: dtype torch.complex64 ...")
"""

from __future__ import annotations

import torch

from prims.core import PrimError
from symbolic import TensorMeta

PRIM_DTYPES = frozenset({
    torch.float16, torch.bfloat16, torch.float32, torch.float64,
    torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8, torch.bool,
})


def check_dtypes(prim_name: str, args, out) -> None:
    """Raise PrimError if a TensorMeta among `args` or `out` has a dtype outside PRIM_DTYPES."""
    for meta in _metas((args, out)):
        if meta.dtype not in PRIM_DTYPES:
            raise PrimError(f"{prim_name}: expected a dtype in {_names()}, found {meta.dtype} "
                            f"(not supported by symc's prims; the op runs eagerly)")


def _metas(value):
    if isinstance(value, TensorMeta):
        yield value
    elif isinstance(value, (tuple, list)):
        for v in value:
            yield from _metas(v)
    elif isinstance(value, dict):
        yield from _metas(list(value.values()))


def _names() -> str:
    return ", ".join(sorted(str(d).replace("torch.", "") for d in PRIM_DTYPES))


__all__ = ["PRIM_DTYPES", "check_dtypes"]
