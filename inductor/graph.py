"""GraphLowering: a prims fx graph -> buffers, loop nodes and extern calls, in program order.

Each prim node goes through LOWERINGS; the resulting lazy Values are *realized* (a loop node
writing a contiguous buffer) only when they must exist in memory: graph outputs, reduction and
extern results, inputs of externs, and values used several times whose recomputation costs more
than a few ops. Everything else is inlined into its consumers (the first level of fusion).
Kernels run on one device (`device`: the inputs'); a prim with a result or a tensor operand
elsewhere (`torch.tensor([...])` on the default CPU device in a CUDA graph, as eager makes it)
runs as an extern on its own device, as eager would run it.

    g = GraphLowering(graph, Analyzer(env)); g.run()
    g.nodes   -> [LoopNode buf0 = reduction[s0] over [s1] ..., ExternNode buf1 = mm(...)]
"""

from __future__ import annotations

from collections import Counter

import sympy
import torch
import torch.fx as fx

from inductor import strided
from inductor.cse import duplicates
from inductor.ir import (
    Buffer,
    ExternNode,
    Layout,
    LoopNode,
    LoweringError,
    PermutedBuffer,
    StridedBuffer,
    StridedView,
    Value,
    buffer_value,
    index_vars,
    inverse_dims,
    pointwise_node,
    reduction_node,
)
from inductor.lowerings import convert_value, lowering_for, permute_value
from inductor.ops import CountingHandler, ops, use_handler
from inductor.reduction_split import split_layout, split_nodes
from prims.core import Prim
from prims.opcodes import PrimOp
from prims.trace import INPUT_PERMUTE, USER_OUTPUTS, getitem as prims_getitem
from symbolic import Analyzer, TensorMeta

KERNEL_DEVICE_TYPES = frozenset({"cpu", "cuda"})  # where kernels run (meta: every prim by torch)
INLINE_MAX_OPS = 3  # a value used twice is recomputed if it costs at most this many ops
# ... or up to this many when recomputing it moves fewer bytes than storing and reloading it
RECOMPUTE_MAX_OPS = 24
REALIZE_OPS = 120  # a value whose expression grows past this is written to memory
# Externs whose tensor arguments may be permuted views (torch reads the strides): matmuls
# take any permutation; attention only those keeping the last dim innermost.
MATMUL_EXTERNS = frozenset({"mm", "bmm"})
STRIDED_EXTERNS = MATMUL_EXTERNS | {"sdpa", "sdpa_backward", "sdpa_dropout",
                                    "sdpa_dropout_backward"}


def _map(value, fn):
    if isinstance(value, (tuple, list)):
        return type(value)(_map(v, fn) for v in value)
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    return fn(value)


def _use_count(node: fx.Node) -> int:
    """How many times `node` is read (mul(y, y) reads y twice, fx counts one user)."""
    count = 0
    for user in node.users:
        found = []
        fx.node.map_arg((user.args, user.kwargs), lambda n: found.append(n) or n)
        count += sum(1 for n in found if n is node)
    return count


# Attention returns an output in the memory order of an operand (flash attention: out and dq
# like q, dk like k, dv like v): {extern: {output: argument position}}
_LAYOUT_LIKE = {"sdpa": {0: 0}, "sdpa_dropout": {0: 0},
                "sdpa_backward": {0: 1, 1: 2, 2: 3}, "sdpa_dropout_backward": {0: 1, 1: 2, 2: 3}}


def _output_dims(extern: str, args, count: int) -> tuple:
    """Per output, None (contiguous) or the dims that put it in its operand's memory order:
    an operand passed as `src.permute(p)` gives an output kept as `out.permute(inverse(p))`,
    contiguous when the kernel follows the operand's layout (else the wrapper copies it)."""
    dims = [None] * count
    for out, arg in _LAYOUT_LIKE.get(extern, {}).items():
        operand = args[arg] if arg < len(args) else None
        if out < count and isinstance(operand, (PermutedBuffer, StridedBuffer)) \
                and operand.dims != tuple(range(len(operand.dims))):
            dims[out] = inverse_dims(operand.dims)
    return tuple(dims)


def _last_two_swapped(ndim: int) -> tuple:
    return tuple(range(ndim - 2)) + (ndim - 1, ndim - 2)


def transposed_matmuls(graph: fx.Graph) -> frozenset:
    """The mm/bmm nodes whose only use is a transpose of their last two dims (a weight's
    gradient `(x^T @ g)^T`): lowered as the transposed product, which needs no copy."""
    found = set()
    for node in graph.nodes:
        if (node.op != "call_function" or not isinstance(node.target, Prim)
                or node.target.name not in MATMUL_EXTERNS or len(node.users) != 1):
            continue
        (user,) = node.users
        if (user.op == "call_function" and isinstance(user.target, Prim)
                and user.target.op == PrimOp.PERMUTE and user.args[0] is node
                and tuple(user.args[1]) == _last_two_swapped(len(node.meta["val"].shape))):
            found.add(node)
    return frozenset(found)


class GraphLowering:
    def __init__(self, graph: fx.Graph, an: Analyzer | None = None, device=None,
                 split_reductions: bool = False):
        self.graph = graph
        # sums with few outputs over long rows become partial + final sums (reduction_split.py)
        self.split_reductions = split_reductions
        self.an = an if an is not None else Analyzer()
        self.device = None if device is None else torch.device(device)  # the kernels'
        self.nodes: list = []
        self.buffers: dict[str, Buffer] = {}
        self.inputs: list = []  # per placeholder: (fx name, Buffer | sympy.Symbol | None)
        self.outputs: list = []  # Buffers, sympy expressions or None
        # output index -> (dims, view size or None): that output is returned as
        # `buffer[.view(size)].permute(dims)` (a saved value kept in the memory order its
        # producer wrote, see `_saved_in_place`)
        self.output_dims: dict[int, tuple] = {}
        # input index -> dims: that input arrives as `buffer.permute(dims)` of a contiguous
        # buffer (a saved value so returned by the forward, node meta INPUT_PERMUTE)
        self.input_dims: dict[int, tuple] = {}
        self._realized: dict[int, tuple] = {}  # id(value) -> (value, buffer), see `realize`
        self._count = 0

    # -- names, sizes ------------------------------------------------------------------------
    def new_name(self, prefix: str) -> str:
        name = f"{prefix}{self._count}"
        self._count += 1
        return name

    def new_buffer(self, size, dtype, device) -> Buffer:
        buf = Buffer(self.new_name("buf"), Layout.contiguous(size, dtype, device))
        self.buffers[buf.name] = buf
        return buf

    def simplify(self, expr):
        expr = sympy.sympify(expr)
        return self.an.simplify(expr)

    def add_node(self, node) -> None:
        self.nodes.append(node)

    # -- realization -------------------------------------------------------------------------
    def realize(self, value) -> Buffer:
        """The buffer holding `value`: its own, the one an earlier call wrote for this same
        value (an operand of two externs, or an extern's operand also saved for the backward,
        is written once), or a new one written by a pointwise node."""
        if not isinstance(value, Value):
            raise LoweringError(f"expected a tensor value to realize, found {value!r}")
        if value.buffer is not None and value.buffer.layout.size == tuple(value.size):
            return value.buffer
        known = self._realized.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
        buf = self.new_buffer(value.size, value.dtype, value.device)
        self.add_node(pointwise_node(self.new_name("node"), buf, value))
        self._realized[id(value)] = (value, buf)  # the value kept alive: its id stays its own
        return buf

    def realized(self, value: Value) -> Buffer | None:
        """The buffer already holding `value`, if any (no new node)."""
        if value.buffer is not None and value.buffer.layout.size == tuple(value.size):
            return value.buffer
        known = self._realized.get(id(value))
        return known[1] if known is not None and known[0] is value else None

    def accesses(self, value: Value) -> CountingHandler:
        counter = CountingHandler()
        with use_handler(counter):
            value.loader(index_vars("x", len(value.size)))
        return counter

    def op_count(self, value: Value) -> int:
        return self.accesses(value).count

    def recompute_pays(self, value: Value, counter: CountingHandler, users: int) -> bool:
        """Whether each consumer recomputing `value` reads no more bytes than it would reading
        `value` back from memory: per element, L bytes of distinct loads against V bytes of
        the value, L <= V (gelu's erf(x/sqrt2) + 1, f32 from a bf16 x). Realizing it would also
        write it; a consumer that already loads its inputs pays nothing more. A load whose
        index omits a loop variable (a bias along the rows) rereads cached elements and counts
        nothing. Only cheap expressions without random draws. (L <= V rather than the break
        even L*(users-1) <= V*(users+1): a realized value is often written by a kernel that
        loads its inputs anyway, a layer norm backward's dx by its row reduction.)"""
        if counter.count > RECOMPUTE_MAX_OPS or counter.random:
            return False
        loop_vars = {v for v, s in zip(index_vars("x", len(value.size)), value.size)
                     if sympy.sympify(s) != 1}
        loads = {(name, index) for name, index in (
            (name, sympy.sympify(index)) for name, index in counter.loads)
            if loop_vars <= index.free_symbols}
        load_bytes = sum(self.buffers[name].dtype.itemsize for name, _ in loads)
        return load_bytes <= value.dtype.itemsize

    def maybe_realize(self, value, users: int, output: bool = False):
        """`value` itself (inlined into its consumers), or read from a buffer it is written to:
        a large expression, or one used several times that costs more to recompute. A widening
        (bf16 -> f32) stores the narrow value and widens it on each load. A graph `output`
        (a saved activation) is never recomputed: it is written anyway, here rather than after
        the graph's last step (where its inputs would have to live until)."""
        if not isinstance(value, Value) or value.buffer is not None:
            return value
        counter = self.accesses(value)
        if counter.count <= REALIZE_OPS and (
                users <= 1 or counter.count <= INLINE_MAX_OPS
                or (not output and self.recompute_pays(value, counter, users))):
            return value
        if value.widened is not None and not output:
            return convert_value(buffer_value(self.realize(value.widened)), value.dtype)
        return buffer_value(self.realize(value))

    # -- reductions and externs (used by lowerings) -----------------------------------------
    def _split(self, a: Value, dims):
        kept = [i for i in range(a.ndim) if i not in dims]
        ranges = tuple(a.size[i] for i in kept)
        rranges = tuple(a.size[d] for d in dims)

        def inner(xvars, rvars):
            idx = [None] * a.ndim
            for i, v in zip(kept, xvars):
                idx[i] = v
            for d, v in zip(dims, rvars):
                idx[d] = v
            return a.loader(tuple(idx))
        return ranges, rranges, inner

    def reduce(self, a: Value, dims, op: PrimOp, out_dtype) -> Value:
        ranges, rranges, inner = self._split(a, dims)
        out = self.new_buffer(ranges, out_dtype, a.device)
        if self.split_reductions and split_layout(ranges, rranges, op, a.dtype, out_dtype,
                                                  inner, self.an) is not None:
            for node in split_nodes(self.new_name, self.new_buffer, out, ranges, rranges, op,
                                    a.dtype, inner):
                self.add_node(node)
            return buffer_value(out)
        self.add_node(reduction_node(self.new_name("node"), (out,), ranges, rranges,
                                     op, a.dtype, inner))
        return buffer_value(out)

    def welford(self, a: Value, dims, correction):
        ranges, rranges, inner = self._split(a, dims)
        var = self.new_buffer(ranges, a.dtype, a.device)
        mean = self.new_buffer(ranges, a.dtype, a.device)
        acc = torch.float64 if a.dtype == torch.float64 else torch.float32

        def finish(xvars, result):
            m, m2, count = result
            index = var.layout.index(xvars)
            # torch clamps the degrees of freedom at 0: m2 / 0 is NaN or inf, never -0
            denom = ops.maximum(ops.sub(count, ops.constant(float(correction), acc)),
                                ops.constant(0.0, acc))
            ops.store(var.name, index, ops.div(m2, denom))
            ops.store(mean.name, index, m)
        self.add_node(reduction_node(self.new_name("node"), (var, mean), ranges, rranges,
                                     PrimOp.VAR_MEAN, a.dtype, inner, finish))
        return buffer_value(var), buffer_value(mean)

    def strided_view(self, v: Value, extern: str, bases: frozenset = frozenset()):
        """`v` as a view of a buffer that extern `extern` reads in place (no copy): a reshaped
        contiguous buffer, a permute of one or of a value realized as is, or (attention) a
        slice of a value in `bases` (see `_view_bases`); None when `v` is a buffer itself or
        must be copied to be read."""
        if extern not in STRIDED_EXTERNS:
            return None
        if v.reshaped is not None:
            buf, size = v.reshaped
            return PermutedBuffer(buf, tuple(range(len(size))), tuple(size))
        if v.permuted is None and v.strided is None:
            return None
        source, dims = v.permuted if v.permuted is not None else (v, tuple(range(v.ndim)))
        if extern not in MATMUL_EXTERNS and (not dims or dims[-1] != len(dims) - 1):
            return None  # attention reads its operands' last dim contiguous
        view = self._attention_view(source, extern)
        if view is not None and id(view.base) in bases:
            return StridedBuffer(self.realize(view.base), tuple(view.size[d] for d in dims),
                                 tuple(view.stride[d] for d in dims), view.offset, dims)
        if v.permuted is None:
            return None
        if source.reshaped is not None:
            buf, size = source.reshaped
            return PermutedBuffer(buf, dims, tuple(size))
        return PermutedBuffer(self.realize(source), dims)

    def _attention_view(self, v: Value, extern: str) -> StridedView | None:
        """The strided view `v` is (a slice of another value), when attention extern `extern`
        reads it as is; None for a value that is all of its own memory."""
        view = v.strided
        if extern in MATMUL_EXTERNS or view is None or not strided.is_aligned(
                view.size, view.stride, view.offset, v.dtype.itemsize, self.an):
            return None
        return view

    def _view_bases(self, extern: str, values) -> frozenset:
        """ids of the values whose slices extern `extern` reads in place: those in memory
        already, and those its operands cover (q, k, v of one [B, T, 3C] projection), which
        are written once where a copy of each slice would write as much."""
        views: dict = {}
        for v in values:
            source = v.permuted[0] if v.permuted is not None else v
            view = self._attention_view(source, extern)
            if view is not None:
                views.setdefault(id(view.base), (view.base, []))[1].append(view)
        return frozenset(key for key, (base, found) in views.items()
                         if self.realized(base) is not None or strided.covers(found, base,
                                                                                 self.an))

    def extern(self, prim, args, kwargs, meta):
        values: list = []
        _map((tuple(args), dict(kwargs)),
             lambda v: values.append(v) if isinstance(v, Value) else v)
        bases = self._view_bases(prim.name, values)

        def to_buffer(v):
            if not isinstance(v, Value):
                return v
            view = self.strided_view(v, prim.name, bases)
            return view if view is not None else self.realize(v)
        args, kwargs = _map(tuple(args), to_buffer), _map(dict(kwargs), to_buffer)
        metas = meta if isinstance(meta, tuple) else (meta,)
        dims = _output_dims(prim.name, args, len(metas))
        outs = tuple(self.new_buffer(m.shape if d is None else tuple(m.shape[i] for i in d),
                                     m.dtype, m.device) for m, d in zip(metas, dims))
        self.add_node(ExternNode(self.new_name("extern"), prim, args, kwargs, outs, dims))
        values = tuple(buffer_value(b) if d is None else permute_value(buffer_value(b),
                                                                         inverse_dims(d))
                       for b, d in zip(outs, dims))
        return values if isinstance(meta, tuple) else values[0]

    # -- the driver --------------------------------------------------------------------------
    def run(self) -> GraphLowering:
        env: dict = {}
        self._swapped = transposed_matmuls(self.graph)
        same = duplicates(self.graph)  # a prim computed twice is lowered once
        self._graph_outputs = set()
        for node in self.graph.nodes:
            if node.op == "output":
                fx.node.map_arg(node.args, lambda n: self._graph_outputs.add(n) or n)
        self._uses: dict = {}
        for node in self.graph.nodes:
            first = same.get(node, node)
            self._uses[first] = self._uses.get(first, 0) + _use_count(node)
        for node in self.graph.nodes:
            if node in same:
                env[node] = env[same[node]]
            elif node.op == "placeholder":
                env[node] = self._placeholder(node)
            elif node.op == "call_function":
                env[node] = self._call(node, env)
            elif node.op == "output":
                outs = node.args[0]
                outs = outs if isinstance(outs, (tuple, list)) else (outs,)
                self.outputs = self._outputs([_map(o, lambda v: env[v] if isinstance(v, fx.Node)
                                                   else v) for o in outs],
                                             node.meta.get(USER_OUTPUTS, len(outs)))
        return self

    def _outputs(self, values: list, user: int) -> list:
        """The graph's outputs as buffers. An output that is a reshape of a whole contiguous
        buffer (logits[B, T, V] of an mm over [B*T, V]) is that buffer at the output's shape
        (`Buffer(base name, new layout)`: the wrapper returns it re-shaped, no copy) when no
        other output shares the buffer; else it is copied (outputs never alias each other).
        The first `user` outputs go to the user; the others (a training forward's saved values,
        output meta `USER_OUTPUTS`) may share a user output's buffer: the autograd runtime
        saves them as views of that output, so an in-place change of it is caught."""
        def view_of(v):
            if isinstance(v, Value) and v.reshaped is not None \
                    and not v.reshaped[0].name.startswith("arg"):
                return v.reshaped
            return None
        kept = self._saved_in_place(values, user)
        out = [None if view_of(v) or i in kept else self._output(v) for i, v in enumerate(values)]
        for i, (buf, dims, size) in kept.items():
            out[i], self.output_dims[i] = buf, (dims, size)
        names = [(b.name, i < user) for i, b in enumerate(out) if isinstance(b, Buffer)]
        names += [(view_of(v)[0].name, i < user) for i, v in enumerate(values) if view_of(v)]
        for i, v in enumerate(values):
            if view_of(v):
                base, size = view_of(v)
                sharing = [is_user for name, is_user in names if name == base.name]
                alone = sharing.count(True) <= 1  # never two of the user's outputs
                out[i] = (Buffer(base.name, Layout.contiguous(size, base.dtype, base.layout.device))
                          if alone else self.realize(v))
        return out

    def _saved_in_place(self, values: list, user: int) -> dict:
        """{output index: (buffer, dims, view size or None)} for the saved values (index >=
        `user`) that are a permute of memory the graph already wrote (attention's output in its
        operands' memory order, a reshaped extern output): returned as
        `buffer[.view(size)].permute(dims)`, a view, where a contiguous copy would cost a kernel
        here and a copy back in the backward. Memory that is an input, or that another output
        also holds, is copied as before."""
        found = {}
        for i, v in enumerate(values[user:], start=user):
            if not isinstance(v, Value) or v.permuted is None or v.reshaped is not None:
                continue
            source, dims = v.permuted
            holding = self._holding(source)
            if holding is None or holding[0].name.startswith("arg"):
                continue
            found[i] = (holding[0], tuple(dims), holding[1])
        held = Counter()
        for v in values:
            if isinstance(v, Value):
                holding = self._holding(v) or (self._holding(v.permuted[0]) if v.permuted
                                               else None)
                if holding is not None:
                    held[holding[0].name] += 1
        return {i: f for i, f in found.items() if held[f[0].name] == 1}

    def _holding(self, value: Value) -> tuple | None:
        """(buffer, view size or None) whose memory is `value` as it is, without a copy."""
        buf = self.realized(value)
        if buf is not None:
            return buf, None
        if value.reshaped is not None:
            return value.reshaped[0], tuple(value.reshaped[1])
        return None

    def _placeholder(self, node):
        meta = node.meta.get("val")
        if isinstance(meta, TensorMeta):
            dims = node.meta.get(INPUT_PERMUTE)
            if dims is not None:  # arrives as buffer.permute(dims): the buffer's own shape
                size = tuple(meta.shape[k] for k in inverse_dims(dims))
                buf = Buffer(f"arg{len(self.inputs)}", Layout.contiguous(size, meta.dtype,
                                                                         meta.device))
                self.input_dims[len(self.inputs)] = tuple(dims)
            else:
                buf = Buffer(f"arg{len(self.inputs)}",
                             Layout.contiguous(meta.shape, meta.dtype, meta.device))
            self.buffers[buf.name] = buf
            self.inputs.append((node.name, buf))
            value = buffer_value(buf)
            return value if dims is None else permute_value(value, dims)
        if isinstance(meta, sympy.Basic):
            self.inputs.append((node.name, meta))
            return meta
        self.inputs.append((node.name, None))
        return meta

    def _call(self, node, env):
        args = _map(node.args, lambda v: env[v] if isinstance(v, fx.Node) else v)
        kwargs = _map(dict(node.kwargs), lambda v: env[v] if isinstance(v, fx.Node) else v)
        target = node.target
        if target is prims_getitem or target.__name__ == "getitem":
            value = args[0][args[1]]
        elif isinstance(target, Prim) and self.is_off_device(node.meta.get("val"), args, kwargs):
            value = self.extern(target, args, kwargs, node.meta.get("val"))
        elif node in self._swapped:
            value = self._swapped_matmul(target, node.meta.get("val"), *args, **kwargs)
        elif isinstance(target, Prim):
            value = lowering_for(target)(self, node.meta.get("val"), *args, **kwargs)
        else:
            raise LoweringError(f"expected a prims graph, found target {target} at {node.name}; "
                                "run prims.decompose first")
        return self.maybe_realize(value, self._uses[node], node in self._graph_outputs)

    def _swapped_matmul(self, target, meta, a, b):
        """(a @ b) as (b^T @ a^T)^T: the product is computed transposed, so the transpose that
        reads it (its only user) is the product's buffer itself, not a copy."""
        dims = _last_two_swapped(len(meta.shape))
        shape = tuple(meta.shape[d] for d in dims)
        swapped = TensorMeta.contiguous(shape, meta.dtype, meta.device)
        product = lowering_for(target)(self, swapped, permute_value(b, dims),
                                       permute_value(a, dims))
        return permute_value(product, dims)

    def is_off_device(self, meta, args, kwargs) -> bool:
        """Whether a result or tensor operand of the prim is on another device than the kernels
        (a kernel given another device's memory reads garbage or faults)."""
        if self.device is None:
            return False
        devices = [m.device for m in (meta if isinstance(meta, tuple) else (meta,))
                   if isinstance(m, TensorMeta)]
        _map((args, kwargs), lambda v: devices.append(v.device) if isinstance(v, Value) else v)
        return self.device.type not in KERNEL_DEVICE_TYPES or any(
            torch.device(d) != self.device for d in devices)

    def _output(self, value):
        if isinstance(value, Value):
            if value.buffer is not None and value.buffer.name.startswith("arg"):
                buf = self.new_buffer(value.size, value.dtype, value.device)
                self.add_node(pointwise_node(self.new_name("node"), buf, value))
                return buf
            return self.realize(value)
        return value


__all__ = ["GraphLowering", "LoopNode"]
