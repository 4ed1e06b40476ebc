"""The `ops` handler protocol: what a loop body may call, and the virtual `ops` that forwards.

A loop body is define-by-run: `body(xvars, rvars)` calls `ops.load`, math ops, `ops.reduction`
and `ops.store`; whichever handler is installed by `use_handler(h)` receives the calls. The C++
backend prints them, the Triton backend prints them, `TorchHandler` (inductor/ir_eval.py)
evaluates them on torch tensors. Every handler implements the ops named below:

    v = ops.load("buf0", 768 * x0 + x1)                 # element of a buffer (flat index)
    m = ops.reduction(torch.float32, torch.float32, PrimOp.AMAX, v)
    ops.store("buf1", x0, m)

Index expressions are sympy over loop variables (x*, r*), graph symbols (s*) and symbols returned
by `ops.indirect_indexing(value, size)` (a runtime value used as an index: gather).
"""

from __future__ import annotations

import contextlib
import contextvars

import torch

from prims import opcodes
from prims.opcodes import PrimOp

# The math ops a loop body may call are the pointwise prims, under the prims' names
# (prims/opcodes.py): `ops.expm1(x)`, `ops.div(a, b)`, `ops.lt(a, b)`, `ops.where(c, a, b)`.
# Unary math computes in floating point (a handler converts an int operand of FLOAT_UNARY);
# comparisons and logical ops return bool. Two pointwise prims have no kernel op: stop_gradient
# lowers to its operand, convert_element_type to `to_dtype` (which also takes the source dtype).
NO_KERNEL_OP = {PrimOp.STOP_GRADIENT: "lowered to its operand (gradients are autograd_aot's)",
                PrimOp.CONVERT_ELEMENT_TYPE: "lowered to ops.to_dtype(x, dtype, src_dtype)"}
POINTWISE_OPS = opcodes.POINTWISE - NO_KERNEL_OP.keys()
# load(name, index) store(name, index, value, mode=None) constant(value, dtype)
# index_expr(expr, dtype) to_dtype(x, dtype, src_dtype=None)
# reduction(dtype, src_dtype, op, value) -> value, or (mean, m2, count) for var_mean (Welford);
#   op is a PrimOp in REDUCTION_OPS
# philox_rand(seed_name, offset_expr, dtype) indirect_indexing(value, size) -> sympy.Symbol
# masked(mask, body, other): `body()` emits ops whose memory accesses (and error checks) happen
#   only where `mask` holds; the result is where(mask, body(), other). A lowering whose loads
#   are out of bounds where they are not selected (cat, pad: an empty piece) must use it.
MEMORY_OPS = frozenset({"load", "store", "reduction", "indirect_indexing", "masked"})
OTHER_OPS = frozenset({"constant", "index_expr", "to_dtype", "philox_rand"})
ALL_OPS = POINTWISE_OPS | MEMORY_OPS | OTHER_OPS

REDUCTION_OPS = opcodes.REDUCTIONS

# The accumulator's start value of each reduction: a number, or the lowest/highest value of the
# accumulator's dtype (-inf/inf for floats, the integer limits, False/True for bool).
LOWEST, HIGHEST = "lowest", "highest"
REDUCTION_IDENTITIES = {
    PrimOp.SUM: 0, PrimOp.PROD: 1, PrimOp.VAR_MEAN: 0,
    PrimOp.AMAX: LOWEST, PrimOp.ARGMAX: LOWEST, PrimOp.AMIN: HIGHEST, PrimOp.ARGMIN: HIGHEST,
    PrimOp.ANY: False, PrimOp.ALL: True,
}


def reduction_identity(op: PrimOp, dtype: torch.dtype):
    """The start value of reduction `op` over `dtype`, as a Python scalar (backends print it)."""
    value = REDUCTION_IDENTITIES[reduction_op(op)]
    if value not in (LOWEST, HIGHEST):
        return value
    low = value == LOWEST
    if dtype == torch.bool:
        return not low
    if dtype.is_floating_point:
        return float("-inf") if low else float("inf")
    return torch.iinfo(dtype).min if low else torch.iinfo(dtype).max


def reduction_op(op) -> PrimOp:
    """`op` as a reduction PrimOp; anything else (an old alias like "max") is an error."""
    if op in REDUCTION_OPS:
        return PrimOp(op)
    raise ValueError(f"expected a reduction prim (one of {sorted(REDUCTION_OPS)}), found {op!r}")


_HANDLER: contextvars.ContextVar = contextvars.ContextVar("symc_ops_handler", default=None)


@contextlib.contextmanager
def use_handler(handler):
    """Route `ops.<name>(...)` calls inside the block to `handler`."""
    token = _HANDLER.set(handler)
    try:
        yield handler
    finally:
        _HANDLER.reset(token)


class _VirtualOps:
    """`ops.add(a, b)` -> `current_handler().add(a, b)`."""

    def __getattr__(self, name: str):
        if name not in ALL_OPS:
            raise AttributeError(f"unknown loop op {name!r}; the protocol is in inductor/ops.py")
        handler = _HANDLER.get()
        if handler is None:
            raise RuntimeError(f"ops.{name} called outside use_handler(...)")
        return getattr(handler, name)


ops = _VirtualOps()


class CountingHandler:
    """Counts the ops a body calls (the scheduler's cost model for inlining vs realizing)."""

    def __init__(self):
        self.count = 0
        self.loads: list = []
        self.stores: list = []
        self.exprs: list = []  # other sympy expressions the body uses (index_expr, sizes)
        self.random = 0  # philox draws (costly to recompute)

    def load(self, name, index):
        self.loads.append((name, index))
        return name

    def store(self, name, index, value, mode=None):
        self.stores.append((name, index))

    def indirect_indexing(self, value, size):
        import sympy
        self.count += 1
        self.exprs.append(size)
        return sympy.Symbol(f"indirect{len(self.loads)}", integer=True)

    def index_expr(self, expr, dtype=None):
        self.count += 1
        self.exprs.append(expr)

    def masked(self, mask, body, other):
        self.count += 1
        return body()

    def philox_rand(self, seed_name, offset, dtype=None):
        self.count += 1
        self.random += 1
        self.loads.append((seed_name, 0))
        self.exprs.append(offset)

    def reduction(self, dtype, src_dtype, reduction_type, value):
        self.count += 1
        if reduction_op(reduction_type) == PrimOp.VAR_MEAN:
            return (None, None, None)
        return None

    def __getattr__(self, name):
        if name not in ALL_OPS:
            raise AttributeError(name)

        def op(*args, **kwargs):
            self.count += 1
            return None
        return op

