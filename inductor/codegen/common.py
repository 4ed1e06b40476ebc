"""What a codegen backend receives: one fused group of loop nodes, and the protocol it implements.

The scheduler (inductor/scheduler.py) hands each backend a `KernelGroup`:

    KernelGroup("k1_softmax", xranges=(s0,), rranges=(s1,),
                nodes=(GroupNode(max_body), GroupNode(sum_body), GroupNode(out_body)),
                buffers={"arg0": f32, "buf0": f32, "buf1": f32, "buf2": f32})

- `xranges`: outer (parallel) loop sizes; `rranges`: reduction sizes (empty: pointwise kernel).
- `GroupNode.body(ops, xvars, rvars)` is define-by-run: it calls the handler `ops` given to it
  (`ops.load(name, index)`, math ops, `ops.reduction(...)`, `ops.store(name, index, value)`)
  with sympy index expressions over `xvars` / `rvars` (symbols the backend chooses) and the
  graph symbols `s0, s1, ...`. A node's body uses either xvars only (a reduction, or an epilogue
  over the rows) or xvars + rvars (a pointwise node over the whole [x, r] space).
- Nodes run in order. A node may load a buffer an earlier node of the group stored, only at
  the index it was stored at (the scheduler guarantees it), so a backend may forward the value.
- `buffers` maps every buffer the nodes touch to its dtype. `inputs`/`outputs` name the buffers
  read from / written to memory visible outside the kernel (a backend may skip storing buffers
  in `internal`, which nothing outside the group reads).
- Arguments: the kernel takes a pointer per buffer in `arg_buffers()` order, then the int64
  symbols in `symbols()` order; the wrapper calls it the same way for every backend.
- The full op protocol is in inductor/ops.py; `ops.indirect_indexing(value, size)` returns a
  sympy symbol standing for a runtime index (gather, index_select).

A backend provides `compile_groups(groups, an) -> list[callable]` (`an` the Analyzer); each callable takes
(tensors in `arg_buffers()` order, then the symbol values as ints).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import sympy
import torch

from inductor.ir import LoopNode, product


@dataclass(frozen=True)
class GroupNode:
    """One loop node of a group; `body(ops, xvars, rvars)` emits its loads, math and stores."""

    body: Callable
    name: str = ""
    kind: str = "pointwise"  # "pointwise" over x (+ r if uses_r), or "reduction"
    uses_r: bool = False


@dataclass(frozen=True)
class KernelGroup:
    name: str
    xranges: tuple
    rranges: tuple = ()
    nodes: tuple = ()
    buffers: dict = field(default_factory=dict)
    inputs: tuple = ()  # buffer names read from memory, sorted
    outputs: tuple = ()  # buffer names others read after the kernel, sorted
    internal: frozenset = frozenset()  # stored only for later nodes of this group
    symbol_args: tuple = ()  # sympy symbols the kernel needs, sorted by name

    @property
    def is_reduction(self) -> bool:
        return len(self.rranges) > 0

    def xnumel(self) -> sympy.Expr:
        return product(self.xranges)

    def rnumel(self) -> sympy.Expr:
        return product(self.rranges)

    def arg_buffers(self) -> tuple:
        return tuple(self.inputs) + tuple(n for n in self.outputs if n not in self.inputs)

    def symbols(self) -> tuple:
        return self.symbol_args


def group_node(node: LoopNode, uses_r: bool) -> GroupNode:
    """Adapt a LoopNode (body over the virtual ops) to the handler-passing group protocol."""

    def body(handler, xvars, rvars):
        node.run(handler, tuple(xvars), tuple(rvars) if uses_r or node.kind == "reduction"
                 else ())

    def full_body(handler, xvars, rvars):  # a pointwise node over x + r
        node.run(handler, tuple(xvars) + tuple(rvars), ())

    return GroupNode(full_body if (uses_r and node.kind == "pointwise") else body, node.name,
                     node.kind, uses_r)


ELEMENT_SIZE = {torch.float32: 4, torch.float64: 8, torch.float16: 2, torch.bfloat16: 2,
                torch.int64: 8, torch.int32: 4, torch.int16: 2, torch.int8: 1, torch.uint8: 1,
                torch.bool: 1}


def float_ratio(expr, dtype: torch.dtype):
    """(numerator, denominator) integer expressions when `expr` is a non-integer ratio of sizes
    used as a floating value (layer norm's 1/s1), else None."""
    if not dtype.is_floating_point:
        return None
    expr = sympy.sympify(expr)
    if expr.is_Integer or expr.is_Float or not expr.free_symbols:
        return None
    numerator, denominator = sympy.fraction(sympy.together(expr))
    return None if denominator == 1 else (numerator, denominator)
