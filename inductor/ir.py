"""Loop-level IR: buffers with symbolic layouts, lazy values, and the nodes that write buffers.

Grammar (every size and index is a sympy expression over the graph's symbols):

    Layout     = (dtype, device, size, stride, offset)       a flat strided view of storage
    Buffer     = (name, layout)                               graph input, temporary or output
    Value      = (size, dtype, device, loader)                lazy: loader(index) -> ops value
    LoopNode   = (name, outputs, ranges, reduction_ranges, body)
                 body(xvars, rvars) calls ops.load/.../ops.store (inductor/ops.py)
    ExternNode = (name, prim, args template, outputs)         a call the wrapper makes (torch.mm)

Lowering (inductor/lowerings.py) turns each prim into Values; views are Values whose loader
rewrites the index, so `permute(x).exp()` is one loop reading x transposed. A Value is
*realized* into a LoopNode writing a contiguous Buffer when it must exist in memory.

    buf1 = Pointwise[s0, s1] f32: store(buf1, s1*x0 + x1, exp(load(arg0, x0 + s0*x1)))
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import sympy
import torch

from inductor.ops import CountingHandler, ops, reduction_op, use_handler
from inductor.printing import dtype_str, format_node
from symbolic import FloorDiv, SymcError


class LoweringError(SymcError):
    """A prim has no lowering, or a lowering got arguments it cannot compile.

    Add a lowering to inductor/lowerings.py, or report the graph (the message names the prim).
    """


def as_expr(value) -> sympy.Expr:
    return sympy.Integer(value) if isinstance(value, int) else sympy.sympify(value)


def contiguous_strides(size) -> tuple:
    strides, acc = [], sympy.Integer(1)
    for s in reversed(size):
        strides.append(acc)
        acc = acc * as_expr(s)
    return tuple(reversed(strides))


def product(values) -> sympy.Expr:
    out = sympy.Integer(1)
    for v in values:
        out = out * as_expr(v)
    return out


def index_vars(prefix: str, n: int) -> tuple:
    return tuple(sympy.Symbol(f"{prefix}{i}", integer=True, nonnegative=True) for i in range(n))


def ravel(index, size) -> sympy.Expr:
    """Row-major linear position of `index` in `size`."""
    return sympy.expand(sum((i * s for i, s in zip(index, contiguous_strides(size))),
                            sympy.Integer(0)))


def unravel(flat, size) -> tuple:
    """The index of row-major linear position `flat` in `size` (FloorDiv/Mod)."""
    out, inner = [], sympy.Integer(1)
    for pos in range(len(size) - 1, -1, -1):
        s = as_expr(size[pos])
        q = flat if inner == 1 else FloorDiv(flat, inner)
        out.append(q if pos == 0 else (sympy.Integer(0) if s == 1 else sympy.Mod(q, s)))
        inner = inner * s
    return tuple(reversed(out))


@dataclass(frozen=True, slots=True)
class Layout:
    dtype: torch.dtype
    device: torch.device
    size: tuple
    stride: tuple
    offset: sympy.Expr = sympy.Integer(0)

    @classmethod
    def contiguous(cls, size, dtype, device) -> Layout:
        size = tuple(as_expr(s) for s in size)
        return cls(dtype, torch.device(device), size, contiguous_strides(size))

    def index(self, idx) -> sympy.Expr:
        assert len(idx) == len(self.size), f"index {idx} for a layout of rank {len(self.size)}"
        return sympy.expand(self.offset + sum((i * s for i, s in zip(idx, self.stride)),
                                              sympy.Integer(0)))

    def numel(self) -> sympy.Expr:
        return product(self.size)

    def storage_size(self) -> sympy.Expr:
        """Elements a buffer with this (non-overlapping, contiguous-ish) layout needs."""
        return self.numel()

    def __str__(self) -> str:
        return f"{dtype_str(self.dtype)}[{', '.join(str(s) for s in self.size)}]"


@dataclass(frozen=True, slots=True)
class Buffer:
    name: str
    layout: Layout

    @property
    def dtype(self) -> torch.dtype:
        return self.layout.dtype

    def __str__(self) -> str:
        return f"{self.name}: {self.layout}"


@dataclass(frozen=True, slots=True)
class Value:
    """A lazy tensor: `loader(index)` emits ops computing the element at `index`.

    `buffer` is set when the value is exactly a buffer read through its layout (so reshape can
    re-index it linearly instead of with FloorDiv/Mod).
    """

    size: tuple
    dtype: torch.dtype
    device: torch.device
    loader: Callable
    buffer: Buffer | None = None
    permuted: tuple | None = None  # (source Value, dims) when this is permute(source, dims)
    reshaped: tuple | None = None  # (Buffer, size) when this is a contiguous buffer reshaped
    # the StridedView this is: slices and reshapes of a value read in row-major order
    # (inductor/strided.py), so an extern may read it in place once that value is in memory
    strided: StridedView | None = None
    # the narrower float Value this is an exact widening of (bf16 -> f32): stored narrow when
    # realized, and converted back to the narrow dtype without a kernel
    widened: Value | None = None

    @property
    def ndim(self) -> int:
        return len(self.size)

    def numel(self) -> sympy.Expr:
        return product(self.size)


def buffer_value(buf: Buffer) -> Value:
    layout = buf.layout

    def loader(idx):
        return ops.load(buf.name, layout.index(idx))
    return Value(layout.size, layout.dtype, layout.device, loader, buf)


def inverse_dims(dims) -> tuple:
    """The permutation that undoes `dims`: `t.permute(dims).permute(inverse_dims(dims))` is t."""
    out = [0] * len(dims)
    for k, d in enumerate(dims):
        out[d] = k
    return tuple(out)


@dataclass(frozen=True, slots=True)
class PermutedBuffer:
    """An extern argument passed as `buffer.view(size).permute(dims)` (`size` None: no view): a
    strided view, not a copy (matmul and attention read transposed operands themselves, and a
    reshaped contiguous buffer is a view of the same memory)."""

    buffer: Buffer
    dims: tuple
    size: tuple | None = None

    def __str__(self) -> str:
        view = "" if self.size is None else f".view({', '.join(map(str, self.size))})"
        perm = "" if self.dims == tuple(range(len(self.dims))) else f".permute{self.dims}"
        return f"{self.buffer.name}{view}{perm}"


@dataclass(frozen=True, slots=True)
class StridedView:
    """Elements of `base` (a Value, contiguous once realized) at `offset + sum(i * stride)`
    for indices within `size`: what slices and reshapes of `base` read."""

    base: Value
    size: tuple
    stride: tuple
    offset: sympy.Expr = sympy.Integer(0)


@dataclass(frozen=True, slots=True)
class StridedBuffer:
    """An extern argument passed as `buffer.as_strided(size, stride, offset)` (the offset
    counted from the buffer's own storage offset): a slice of a buffer read in place, e.g.
    attention's q, k and v inside one [B, T, 3C] projection. `dims` orders the view's dims by
    decreasing stride (`permute(dims)` of a row-major view), the memory order attention gives
    the outputs that follow this operand."""

    buffer: Buffer
    size: tuple
    stride: tuple
    offset: sympy.Expr
    dims: tuple

    def __str__(self) -> str:
        size, stride = ", ".join(map(str, self.size)), ", ".join(map(str, self.stride))
        offset = f", {self.offset}" if self.offset != 0 else ""
        return f"{self.buffer.name}.as_strided(({size}), ({stride}){offset})"


@dataclass(frozen=True, slots=True)
class LoopNode:
    """Writes `outputs` with one loop nest over `ranges` (x) and `reduction_ranges` (r).

    `kind` is "pointwise" or "reduction"; `body(xvars, rvars)` uses the virtual `ops`.
    """

    name: str
    kind: str
    outputs: tuple  # of Buffer
    ranges: tuple
    reduction_ranges: tuple
    body: Callable
    description: str = ""
    # a split sum's partial node (inductor/reduction_split.py): (the sum's row ranges, rows per
    # chunk); its ranges[0] counts the chunks and row = x0 * chunk + r0
    split_rows: tuple = ()

    def run(self, handler, xvars, rvars) -> None:
        with use_handler(handler):
            self.body(xvars, rvars)

    def accesses(self) -> CountingHandler:
        """Loads and stores (names and index expressions over x*/r* variables)."""
        counter = CountingHandler()
        self.run(counter, index_vars("x", len(self.ranges)),
                 index_vars("r", len(self.reduction_ranges)))
        return counter

    def reads(self) -> frozenset:
        return frozenset(name for name, _ in self.accesses().loads)

    def __str__(self) -> str:
        return format_node(self, index_vars("x", len(self.ranges)),
                           index_vars("r", len(self.reduction_ranges)))


@dataclass(frozen=True, slots=True)
class ExternNode:
    """A call the wrapper makes with realized buffers (`prim.ref`, e.g. torch.mm).

    `args` is the prim's argument structure with Buffers where tensors go; `outputs` are the
    contiguous buffers receiving the result(s) (permuted by `output_dims` where given).
    """

    name: str
    prim: object
    args: tuple
    kwargs: dict = field(default_factory=dict)
    outputs: tuple = ()
    # per output, None or dims: the result is kept as `result.permute(dims)` (made contiguous),
    # the layout attention returns its outputs in when its operands are permuted views
    output_dims: tuple = ()

    def reads(self) -> frozenset:
        names = set()

        def visit(v):
            if isinstance(v, Buffer):
                names.add(v.name)
            elif isinstance(v, (PermutedBuffer, StridedBuffer)):
                names.add(v.buffer.name)
            elif isinstance(v, (tuple, list)):
                for item in v:
                    visit(item)
        visit(self.args)
        visit(tuple(self.kwargs.values()))
        return frozenset(names)

    def __str__(self) -> str:
        outs = ", ".join(str(b) for b in self.outputs)
        return f"{outs} = extern {self.prim!r}(...)"


def pointwise_node(name: str, out: Buffer, value: Value) -> LoopNode:
    """Realize `value` into `out` (contiguous, same size)."""

    def body(xvars, rvars):
        ops.store(out.name, out.layout.index(xvars), value.loader(xvars))
    return LoopNode(name, "pointwise", (out,), tuple(value.size), (), body)


def reduction_node(name: str, outs: tuple, ranges, reduction_ranges, reduction_type,
                   src_dtype: torch.dtype, inner: Callable, finish: Callable | None = None,
                   split_rows: tuple = ()) -> LoopNode:
    """`outs[0][x] = reduce_r inner(x, r)`; `finish(x, result)` may store several outputs."""
    reduction_type = reduction_op(reduction_type)  # a reduction PrimOp (inductor/ops.py)
    out_dtype = outs[0].dtype

    def body(xvars, rvars):
        value = inner(xvars, rvars)
        result = ops.reduction(out_dtype, src_dtype, reduction_type, value)
        if finish is not None:
            finish(xvars, result)
        else:
            ops.store(outs[0].name, outs[0].layout.index(xvars), result)
    return LoopNode(name, "reduction", tuple(outs), tuple(ranges), tuple(reduction_ranges), body,
                    reduction_type, split_rows)
