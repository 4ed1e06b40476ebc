"""LOWERINGS[PrimOp]: each prim as loop IR. A lowering returns lazy Values (inductor/ir.py).

    lowering(g, meta, *args)   g: GraphLowering (realize, reduce, extern), meta: the node's
                               output TensorMeta, args: the prim's args with Values for tensors

Pointwise ops and views compose loaders (`exp(permute(x))` reads x transposed in one loop);
reductions and externs realize buffers. Scalar operands take the tensor operand's dtype, as the
prims' reference implementations do.
"""

from __future__ import annotations

import dataclasses

import sympy
import torch

from inductor import strided
from inductor.ir import LoweringError, Value, as_expr, ravel, unravel
from inductor.ops import ops
from prims import opcodes
from prims.core import PRIMS, PrimError, prim_op
from prims.opcodes import PrimOp

LOWERINGS: dict[PrimOp, object] = {}


def register_lowering(*names):
    """Register the function below for the prims `names` (PrimOps or their names); a name that
    is not a prim, or a prim registered twice, is a PrimError when this module is imported."""

    def wrap(fn):
        for name in names:
            op = prim_op(name, "inductor/lowerings.py")
            if op in LOWERINGS:
                raise PrimError(f"expected one lowering for prim {op.value!r}, found a second "
                                f"({fn.__name__}) in inductor/lowerings.py")
            LOWERINGS[op] = fn
        return fn
    return wrap


def lowering_for(prim):
    try:
        return LOWERINGS[prim.op]
    except KeyError:
        raise LoweringError(f"expected a lowering for prim {prim.name!r}, found none; add one "
                            "to inductor/lowerings.py") from None


def operand(x, dtype):
    """Emit a Value's element or a scalar as an op value of `dtype` (called inside a loader)."""
    if isinstance(x, sympy.Basic) and not x.is_number:
        return ops.index_expr(x, dtype)
    if isinstance(x, sympy.Basic):
        x = int(x) if x.is_integer else float(x)
    return ops.constant(x, dtype)


def _load(x, idx, dtype):
    return x.loader(idx) if isinstance(x, Value) else operand(x, dtype)


# --------------------------------------------------------------------------- pointwise
def _pointwise(meta, fn, *args):
    tensors = [a for a in args if isinstance(a, Value)]
    dtype = tensors[0].dtype

    def loader(idx):
        return fn(*[_load(a, idx, dtype) for a in args])
    return Value(tuple(meta.shape), meta.dtype, meta.device, loader)


def _make_pointwise(op: PrimOp):
    def lower(g, meta, *args):  # the kernel op has the prim's name (inductor/ops.py)
        return _pointwise(meta, lambda *vals: getattr(ops, op.value)(*vals), *args)
    return lower


for _op in (opcodes.UNARY | opcodes.BINARY | opcodes.COMPARISONS) - {PrimOp.STOP_GRADIENT}:
    register_lowering(_op)(_make_pointwise(_op))


@register_lowering(PrimOp.STOP_GRADIENT)
def _stop_gradient(g, meta, a):
    return _pointwise(meta, lambda value: value, a)  # gradients are autograd_aot's concern


@register_lowering("where")
def _where(g, meta, cond, a, b):
    def loader(idx):
        return ops.where(cond.loader(idx), _load(a, idx, meta.dtype), _load(b, idx, meta.dtype))
    return Value(tuple(meta.shape), meta.dtype, meta.device, loader)


# float dtypes each wider one holds exactly (a round trip narrow -> wide -> narrow is exact)
_EXACT_WIDENINGS = {torch.bfloat16: (torch.float32, torch.float64),
                    torch.float16: (torch.float32, torch.float64),
                    torch.float32: (torch.float64,)}


def convert_value(a: Value, dtype) -> Value:
    """`a` converted to `dtype`. A widening keeps its source (`Value.widened`), so converting
    it back is the source itself (no kernel) and realizing it stores the narrow value."""
    if a.widened is not None and a.widened.dtype == dtype:
        return a.widened

    def loader(idx):
        return ops.to_dtype(a.loader(idx), dtype, a.dtype)
    exact = dtype in _EXACT_WIDENINGS.get(a.dtype, ())
    return Value(a.size, dtype, a.device, loader, widened=a if exact else None)


@register_lowering("convert_element_type")
def _convert(g, meta, a, dtype):
    return convert_value(a, dtype)


# --------------------------------------------------------------------------- views
def _view(a, meta, index_map) -> Value:
    """A Value reading `a` at `index_map(out_index)`."""
    def loader(idx):
        return a.loader(tuple(index_map(tuple(idx))))
    return Value(tuple(meta.shape), a.dtype, a.device, loader)


@register_lowering("broadcast_in_dim")
def _broadcast_in_dim(g, meta, a, shape, broadcast_dims):
    def index_map(idx):
        return [sympy.Integer(0) if as_expr(a.size[i]) == 1 and as_expr(shape[d]) != 1
                else idx[d] for i, d in enumerate(broadcast_dims)]
    return _view(a, meta, index_map)


@register_lowering("reshape")
def _reshape(g, meta, a, shape):
    new_size = tuple(as_expr(s) for s in shape)
    if any(s == 0 for s in new_size):  # no element is ever read; unravel would divide by 0
        return Value(new_size, a.dtype, a.device, lambda idx: ops.constant(0, a.dtype))
    if len(new_size) == a.ndim and all(map(g.an.equal, new_size, a.size)):
        return a  # the same shape (proved): the same value, no copy when it is realized
    buf = _contiguous_base(a)
    if buf is not None:
        def loader(idx):
            return ops.load(buf.name, g.simplify(buf.layout.offset + ravel(idx, new_size)))
        # an extern may read all of a buffer as `buf.view(new_size)`, the same memory (graph.py)
        whole = buf.layout.offset == 0
        return Value(new_size, a.dtype, a.device, loader,
                     reshaped=(buf, new_size) if whole else None)

    def index_map(idx):
        return [g.simplify(e) for e in unravel(ravel(idx, new_size), a.size)]
    view = strided.view_of(a)
    view = None if view is None else strided.reshaped(view, new_size, g.an)
    return dataclasses.replace(_view(a, meta, index_map), strided=view)


def _contiguous_base(a: Value):
    """The contiguous buffer whose elements `a` is in row-major order, or None."""
    if a.reshaped is not None:
        return a.reshaped[0]
    if a.buffer is not None and _is_contiguous(a.buffer.layout):
        return a.buffer
    return None


def _is_contiguous(layout) -> bool:
    from inductor.ir import contiguous_strides
    return all(sympy.expand(s - c) == 0 or as_expr(size) == 1 for s, c, size in
               zip(layout.stride, contiguous_strides(layout.size), layout.size))


@register_lowering("permute")
def _permute(g, meta, a, dims):
    return permute_value(a, dims)


def permute_value(a: Value, dims) -> Value:
    """`a` with its dims reordered (out dim k is a's dim dims[k]): a view. A permute of a
    permute is one permute of the source, and the identity is the source itself (so
    `x.t().t()` realizes as x, never as a copy)."""
    dims = tuple(int(d) for d in dims)
    if a.permuted is not None:
        source, inner = a.permuted
        return permute_value(source, tuple(inner[d] for d in dims))
    if dims == tuple(range(len(dims))):
        return a

    def loader(idx):
        out = [None] * len(dims)
        for k, d in enumerate(dims):
            out[d] = idx[k]
        return a.loader(tuple(out))
    return Value(tuple(a.size[d] for d in dims), a.dtype, a.device, loader,
                 permuted=(a, dims))


@register_lowering("slice")
def _slice(g, meta, a, dim, start, stop, step=1):
    def index_map(idx):
        out = list(idx)
        out[dim] = as_expr(start) + as_expr(step) * idx[dim]
        return out
    view = strided.view_of(a)
    view = None if view is None else strided.sliced(view, dim, start, step, meta.shape[dim])
    return dataclasses.replace(_view(a, meta, index_map), strided=view)


@register_lowering("squeeze")
def _squeeze(g, meta, a, dims):
    def index_map(idx):
        it = iter(idx)
        return [sympy.Integer(0) if i in dims else next(it) for i in range(a.ndim)]
    return _view(a, meta, index_map)


@register_lowering("flip")
def _flip(g, meta, a, dims):
    def index_map(idx):
        return [as_expr(a.size[i]) - 1 - v if i in dims else v for i, v in enumerate(idx)]
    return _view(a, meta, index_map)


def _clamp(expr, size):
    return sympy.Max(sympy.Min(expr, as_expr(size) - 1), 0)


def _nonempty(size) -> bool:
    """The size is >= 1 for every value of its symbols (positive size symbols: `s0`, `s0 + 1`),
    so a position clamped into [0, size - 1] is in bounds and needs no masked load."""
    return bool(as_expr(size).is_positive)


def _select(inside, load, other):
    """where(inside, load(), other); the load is masked unless it is in bounds anyway."""
    return ops.where(inside, load(), other) if load.in_bounds else ops.masked(inside, load, other)


@register_lowering("cat")
def _cat(g, meta, tensors, dim):
    # An input empty along `dim` (a KV cache that starts at length 0) adds no elements, and a
    # load from it, even clamped to index 0, reads outside its (empty) storage: drop it.
    filled = [t for t in tensors if as_expr(t.size[dim]) != 0]
    tensors = filled or tensors[:1]
    offsets, acc = [], sympy.Integer(0)
    for t in tensors:
        offsets.append(acc)
        acc = acc + as_expr(t.size[dim])

    def loader(idx):
        # a piece is read where it is selected: the last piece at i >= its offset, the others
        # at i < their end. A piece that may be empty at run time (x[n:] at n == len(x),
        # roll's pieces) is clamped past its base buffer, so its load is masked (ops.masked)
        # to exactly off <= i < end
        if len(tensors) == 1:
            return tensors[0].loader(tuple(idx))
        position = ops.index_expr(idx[dim], torch.int64)
        value = None
        for k in reversed(range(len(tensors))):
            t, off = tensors[k], offsets[k]
            sub = list(idx)
            sub[dim] = _clamp(idx[dim] - off, t.size[dim])

            def load(t=t, sub=tuple(sub)):
                return t.loader(sub)
            load.in_bounds = _nonempty(t.size[dim])
            conds = [] if k == 0 or (load.in_bounds and value is not None) else \
                [ops.ge(position, operand(off, torch.int64))]
            if value is not None:
                end = off + as_expr(t.size[dim])
                conds.append(ops.lt(position, operand(end, torch.int64)))
            if not conds:  # the last piece, in bounds: the default
                value = load()
                continue
            inside = conds[0] if len(conds) == 1 else ops.logical_and(*conds)
            value = _select(inside, load, operand(0, meta.dtype) if value is None else value)
        return value
    return Value(tuple(meta.shape), meta.dtype, meta.device, loader)


@register_lowering("pad")
def _pad(g, meta, a, pads, value):
    if any(as_expr(size) == 0 for size in a.size):  # all padding: no element of `a` to load
        return Value(tuple(meta.shape), meta.dtype, meta.device,
                     lambda idx: operand(value, meta.dtype))

    def loader(idx):
        sub, inside = [], None
        for d, (lo, _hi) in enumerate(pads):
            pos = idx[d] - as_expr(lo)
            padded = as_expr(lo) != 0 or as_expr(_hi) != 0
            sub.append(_clamp(pos, a.size[d]) if padded else idx[d])
            if padded:
                i = ops.index_expr(pos, torch.int64)
                ok = ops.logical_and(ops.ge(i, ops.constant(0, torch.int64)),
                                     ops.lt(i, operand(as_expr(a.size[d]), torch.int64)))
                inside = ok if inside is None else ops.logical_and(inside, ok)
        if inside is None:
            return a.loader(tuple(sub))

        def load():  # the clamped position is out of bounds when `a` is empty along a dim
            return a.loader(tuple(sub))
        load.in_bounds = all(_nonempty(a.size[d]) for d in range(len(pads)))
        return _select(inside, load, operand(value, meta.dtype))
    return Value(tuple(meta.shape), meta.dtype, meta.device, loader)


# --------------------------------------------------------------------------- indexing
@register_lowering("gather")
def _gather(g, meta, a, dim, index):
    def loader(idx):
        sub = list(idx)
        sub[dim] = ops.indirect_indexing(index.loader(idx), a.size[dim])
        return a.loader(tuple(sub))
    return Value(tuple(meta.shape), meta.dtype, meta.device, loader)


@register_lowering("index_select")
def _index_select(g, meta, a, dim, index):
    def loader(idx):
        if not a.size:  # a 0-d input: its one element, once its one index is checked to be 0
            ops.indirect_indexing(index.loader((0,) * len(index.size)), 1)
            return a.loader(())
        sub = list(idx)
        sub[dim] = ops.indirect_indexing(index.loader((idx[dim],)), a.size[dim])
        return a.loader(tuple(sub))
    return Value(tuple(meta.shape), meta.dtype, meta.device, loader)


# --------------------------------------------------------------------------- creation, random
@register_lowering("iota")
def _iota(g, meta, length, start, step, dtype, device):
    wide = torch.float64 if dtype.is_floating_point else torch.int64

    def loader(idx):
        base = ops.index_expr(idx[0], wide)
        value = ops.add(ops.mul(base, operand(step, wide)), operand(start, wide))
        return ops.to_dtype(value, dtype, wide)
    return Value(tuple(meta.shape), dtype, meta.device, loader)


@register_lowering("full")
def _full(g, meta, shape, value, dtype, device):
    def loader(idx):
        return operand(value, dtype)
    return Value(tuple(meta.shape), dtype, meta.device, loader)


@register_lowering("philox_rand")
def _philox_rand(g, meta, seed, offset, shape, dtype, device):
    seed_buf = g.realize(seed)
    size = tuple(meta.shape)

    def loader(idx):
        return ops.philox_rand(seed_buf.name, g.simplify(as_expr(offset) + ravel(idx, size)),
                               dtype)
    return Value(size, dtype, meta.device, loader)


# --------------------------------------------------------------------------- reductions
def _make_reduction(op: PrimOp):
    def lower(g, meta, a, dims):
        dims = tuple(sorted(dims))
        if not dims or a.ndim == 0:
            return _no_dims(op, meta, a)
        return g.reduce(a, dims, op, meta.dtype)
    return lower


def _no_dims(op, meta, a):
    if op in (PrimOp.ANY, PrimOp.ALL):
        return Value(a.size, torch.bool, a.device,
                     lambda idx: ops.ne(a.loader(idx), ops.constant(0, a.dtype)))
    return a


for _op in (PrimOp.SUM, PrimOp.PROD, PrimOp.AMAX, PrimOp.AMIN, PrimOp.ANY, PrimOp.ALL):
    register_lowering(_op)(_make_reduction(_op))


def _make_arg_reduction(op: PrimOp):
    def lower(g, meta, a, dim):
        if a.ndim == 0:
            return Value((), torch.int64, a.device, lambda idx: ops.constant(0, torch.int64))
        return g.reduce(a, (dim,), op, torch.int64)
    return lower


register_lowering(PrimOp.ARGMAX)(_make_arg_reduction(PrimOp.ARGMAX))
register_lowering(PrimOp.ARGMIN)(_make_arg_reduction(PrimOp.ARGMIN))


@register_lowering("var_mean")
def _var_mean(g, meta, a, dims, correction):
    dims = tuple(sorted(dims))
    if not dims or a.ndim == 0:
        zero = Value(a.size, a.dtype, a.device, lambda idx: ops.mul(
            a.loader(idx), ops.constant(0.0 if not correction else float("nan"), a.dtype)))
        return zero, a
    return g.welford(a, dims, correction)


# --------------------------------------------------------------------------- externs
# scans and scatters run as library calls too
EXTERN_PRIMS = opcodes.EXTERNS | opcodes.SCANS | {PrimOp.SCATTER_ADD, PrimOp.INDEX_PUT}


def _make_extern(op: PrimOp):
    def lower(g, meta, *args, **kwargs):
        return g.extern(PRIMS[op], args, kwargs, meta)
    return lower


for _op in EXTERN_PRIMS:
    register_lowering(_op)(_make_extern(_op))
