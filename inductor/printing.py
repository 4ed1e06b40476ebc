"""Readable text for loop nodes: a handler that prints each op as one SSA line.

    buf1 = reduction[s0] over [s1] (sum)
        tmp0 = load(arg0, s1*x0 + r0)
        tmp1 = reduction(sum, tmp0)
        store(buf1, x0, tmp1)
"""

from __future__ import annotations

import sympy
import torch

from inductor.ops import ALL_OPS, reduction_op
from prims.opcodes import PrimOp

_DTYPES = {torch.float32: "f32", torch.float64: "f64", torch.float16: "f16",
           torch.bfloat16: "bf16", torch.int64: "i64", torch.int32: "i32", torch.int16: "i16",
           torch.int8: "i8", torch.uint8: "u8", torch.bool: "b8"}


def dtype_str(dtype: torch.dtype) -> str:
    return _DTYPES.get(dtype, str(dtype).replace("torch.", ""))


class PrintHandler:
    """Records `tmpN = op(args)` lines; values are the names of temporaries."""

    def __init__(self):
        self.lines: list[str] = []
        self.n = 0

    def _emit(self, text: str) -> str:
        name = f"tmp{self.n}"
        self.n += 1
        self.lines.append(f"{name} = {text}")
        return name

    def store(self, name, index, value, mode=None):
        self.lines.append(f"store({name}, {index}, {_arg(value)})")

    def reduction(self, dtype, src_dtype, reduction_type, value):
        out = self._emit(f"reduction({reduction_op(reduction_type).value}, {_arg(value)})")
        if reduction_op(reduction_type) == PrimOp.VAR_MEAN:
            return (f"{out}.mean", f"{out}.m2", f"{out}.count")
        return out

    def masked(self, mask, body, other):
        value = body()
        return self._emit(f"masked({_arg(mask)}, {_arg(value)}, {_arg(other)})")

    def indirect_indexing(self, value, size):
        name = self._emit(f"indirect_indexing({_arg(value)}, {size})")
        return sympy.Symbol(name, integer=True)

    def __getattr__(self, name):
        if name not in ALL_OPS:
            raise AttributeError(name)

        def op(*args, **kwargs):
            parts = [_arg(a) for a in args] + [f"{k}={_arg(v)}" for k, v in kwargs.items()]
            return self._emit(f"{name}({', '.join(parts)})")
        return op


def _arg(value) -> str:
    if isinstance(value, torch.dtype):
        return dtype_str(value)
    return str(value)


def format_node(node, xvars: tuple, rvars: tuple) -> str:
    """`node`'s body printed op by op, run over the index symbols `xvars` and `rvars`."""
    handler = PrintHandler()
    node.run(handler, xvars, rvars)
    outs = ", ".join(str(b) for b in node.outputs)
    ranges = ", ".join(str(r) for r in node.ranges)
    head = f"{outs} = {node.kind}[{ranges}]"
    if node.reduction_ranges:
        head += f" over [{', '.join(str(r) for r in node.reduction_ranges)}]"
    return "\n".join([head] + ["    " + line for line in handler.lines])
