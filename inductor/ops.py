"""The `ops` handler protocol: what a loop body may call, and the virtual `ops` that forwards.

A loop body is define-by-run: `body(xvars, rvars)` calls `ops.load`, math ops, `ops.reduction`
and `ops.store`; whichever handler is installed by `use_handler(h)` receives the calls. The C++
backend prints them, the Triton backend prints them, `TorchHandler` (inductor/ir_eval.py)
evaluates them on torch tensors. Every handler implements the ops named below:

    v = ops.load("buf0", 768 * x0 + x1)                 # element of a buffer (flat index)
    m = ops.reduction(torch.float32, torch.float32, "max", v)
    ops.store("buf1", x0, m)

Index expressions are sympy over loop variables (x*, r*), graph symbols (s*) and symbols returned
by `ops.indirect_indexing(value, size)` (a runtime value used as an index: gather).
"""

from __future__ import annotations

import contextlib
import contextvars

# name -> (arity, doc). Unary math ops take floats (ints are converted by the handler when the
# C function needs a float); comparisons return bool.
UNARY_OPS = frozenset({
    "abs", "neg", "exp", "exp2", "log", "log2", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos",
    "tan", "tanh", "erf", "sigmoid", "reciprocal", "sign", "floor", "ceil", "round", "trunc",
    "logical_not", "bitwise_not", "isnan", "isinf", "relu",
})
BINARY_OPS = frozenset({
    "add", "sub", "mul", "truediv", "floordiv", "remainder", "pow", "maximum", "minimum", "atan2",
    "bitwise_and", "bitwise_or", "bitwise_xor",
})
COMPARISON_OPS = frozenset({"eq", "ne", "lt", "le", "gt", "ge"})
LOGICAL_OPS = frozenset({"logical_and", "logical_or", "logical_xor"})
# load(name, index) store(name, index, value, mode=None) constant(value, dtype)
# index_expr(expr, dtype) to_dtype(x, dtype, src_dtype=None) where(cond, a, b)
# reduction(dtype, src_dtype, reduction_type, value) -> value, or (mean, m2, count) for welford
# philox_rand(seed_name, offset_expr, dtype) indirect_indexing(value, size) -> sympy.Symbol
# masked(mask, body, other): `body()` emits ops whose memory accesses (and error checks) happen
#   only where `mask` holds; the result is where(mask, body(), other). A lowering whose loads
#   are out of bounds where they are not selected (cat, pad: an empty piece) must use it.
MEMORY_OPS = frozenset({"load", "store", "reduction", "indirect_indexing", "masked"})
OTHER_OPS = frozenset({"constant", "index_expr", "to_dtype", "where", "philox_rand"})
ALL_OPS = UNARY_OPS | BINARY_OPS | COMPARISON_OPS | LOGICAL_OPS | MEMORY_OPS | OTHER_OPS

REDUCTION_TYPES = frozenset({"sum", "prod", "max", "min", "argmax", "argmin", "any", "all",
                             "welford"})

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
        self.loads.append((seed_name, 0))
        self.exprs.append(offset)

    def reduction(self, dtype, src_dtype, reduction_type, value):
        self.count += 1
        if reduction_type == "welford":
            return (None, None, None)
        return None

    def __getattr__(self, name):
        if name not in ALL_OPS:
            raise AttributeError(name)

        def op(*args, **kwargs):
            self.count += 1
            return None
        return op

