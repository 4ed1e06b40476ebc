"""Functional index assignment: the value `t[index] = value` leaves in `t`, as a new tensor.

    assign(state, x, (slice(None), 0), v)   -> torch.where(mask, pad(v'), x)  (v' broadcast)
    bound(state, idx.start, size, 0)         -> the slice bound normalised like Python's

capture/torch_ops.py's setitem writes the result back into `t`; capture/functionalize.py's
scatter rules use it to write a view's new value back into its base.
"""

from __future__ import annotations

import operator

import sympy
import torch

from capture.errors import Unsupported
from capture.graph import GraphState
from capture.variables import (
    ConstVariable,
    SizeVariable,
    SliceVariable,
    SymIntVariable,
    TensorVariable,
    TupleVariable,
    Variable,
    sym_value,
)


def assign(state: GraphState, t: TensorVariable, index: Variable, value: Variable):
    """The value of `t` after `t[index] = value`, as a new tensor (`t` is left as it is)."""
    if isinstance(index, TensorVariable) and index.meta.dtype == torch.bool:
        if index.meta.ndim != t.meta.ndim:
            raise Unsupported("boolean-mask assignment with a mask of lower rank")
        return state.call(torch.where, [index, _as_dtype(state, value, t), t], {})
    items = index.items if isinstance(index, TupleVariable) else [index]
    if any(isinstance(i, ConstVariable) and i.value is Ellipsis for i in items[1:]):
        raise Unsupported("setitem with an Ellipsis after the first index")
    if items and isinstance(items[0], ConstVariable) and items[0].value is Ellipsis:
        items = [full_slice()] * (t.meta.ndim - (len(items) - 1)) + list(items[1:])
    picked = [(d, i) for d, i in enumerate(items) if not _is_full_slice(i)]
    if len(picked) > 1 and all(isinstance(i, (ConstVariable, SymIntVariable, SliceVariable))
                               and not (isinstance(i, ConstVariable) and i.value is None)
                               for _, i in picked):
        return _assign_nested(state, t, items, picked[0][0], value)
    if len(picked) != 1 or not isinstance(picked[0][1], (ConstVariable, SymIntVariable,
                                                         SliceVariable)):
        raise Unsupported("setitem other than on one int or slice index")
    dim, idx = picked[0]
    target_view = state.call(torch.Tensor.__getitem__, [t, index], {})
    src = _as_dtype(state, value, t)
    if isinstance(src, TensorVariable):
        src = state.call(torch.Tensor.expand, [src, SizeVariable(
            [sym_value(s) for s in target_view.meta.shape])], {})
    else:
        src = state.call(torch.full_like, [target_view, src], {})
    size = t.meta.shape[dim]
    if isinstance(idx, SliceVariable):
        step = 1 if isinstance(idx.step, ConstVariable) and idx.step.value is None else \
            idx.step.value if isinstance(idx.step, ConstVariable) else None
        if not isinstance(step, int) or step < 1:
            raise Unsupported("setitem on a slice with a non-constant step")
        start = bound(state, idx.start, size, 0)
        stop = bound(state, idx.stop, size, size)
        stop = stop if state.env.statically_known_true(sympy.Ge(stop, start)) else \
            sympy.Max(stop, start)
        if step > 1:
            return _scatter_strided(state, t, dim, start, stop, step, src)
    else:
        start = bound(state, idx, size, 0)
        stop = start + 1
        src = state.call(torch.unsqueeze, [src, ConstVariable(dim)], {})
    return _scatter_range(state, t, dim, start, stop, src)


def _assign_nested(state: GraphState, t: TensorVariable, items: list, dim: int, value):
    """`t[i, j] = v` as `inner = t[i]; inner[j] = v; t[i] = inner` (one index at a time)."""
    first = [i if d == dim else full_slice() for d, i in enumerate(items)]
    inner = state.call(torch.Tensor.__getitem__, [t, TupleVariable(first)], {})
    dropped = not isinstance(items[dim], SliceVariable)   # an int index removes the dim
    rest = [i for d, i in enumerate(items) if d != dim] if dropped else \
        [full_slice() if d == dim else i for d, i in enumerate(items)]
    inner = assign(state, inner, TupleVariable(rest), value)
    return assign(state, t, TupleVariable(first), inner)


def bound(state: GraphState, var: Variable, size, default):
    """A slice bound normalised like Python: negatives count from the end, clamped to size."""
    if isinstance(var, ConstVariable) and var.value is None:
        return sympy.sympify(default)
    value = var.expr if isinstance(var, SymIntVariable) else var.value
    if not isinstance(value, (int, sympy.Expr)):
        raise Unsupported("setitem with a non-integer index")
    value = sympy.sympify(value)
    if not state.evaluate(sympy.Ge(value, 0)):
        value = value + size   # from the end; below 0 clamps to 0, as Python's slices do
        if not state.env.statically_known_true(sympy.Ge(value, 0)):
            value = sympy.Max(value, 0)
    if state.env.statically_known_true(sympy.Le(value, size)):
        return value
    return sympy.Min(value, size)


def _scatter_range(state: GraphState, t: TensorVariable, dim: int, start, stop, src):
    """`t` with `src` written into [start, stop) along `dim`: pad src, select with a mask."""
    ndim, size = t.meta.ndim, t.meta.shape[dim]
    pads = []
    for d in reversed(range(dim, ndim)):
        pads += [sym_value(start), sym_value(size - stop)] if d == dim else \
            [ConstVariable(0), ConstVariable(0)]
    padded = state.call(torch.nn.functional.pad, [src, TupleVariable(pads)], {})
    positions = state.call(torch.arange, [sym_value(size)],
                           {"device": ConstVariable(t.meta.device)})
    inside = state.call(torch.logical_and, [
        state.call(operator.ge, [positions, sym_value(start)], {}),
        state.call(operator.lt, [positions, sym_value(stop)], {}),
    ], {})
    shape = [ConstVariable(1)] * ndim
    shape[dim] = sym_value(size)
    mask = state.call(torch.Tensor.reshape, [inside, TupleVariable(shape)], {})
    # Expanded to t's shape first: where() broadcasting 1 against s0 would guard s0 != 1.
    mask = state.call(torch.Tensor.expand, [mask, SizeVariable(
        [sym_value(s) for s in t.meta.shape])], {})
    return state.call(torch.where, [mask, padded, t], {})


def _scatter_strided(state: GraphState, t: TensorVariable, dim: int, start, stop, step: int,
                     src):
    """`t` with `src` written at start, start + step, ... < stop along `dim`: each position
    gathers its element of src, a mask keeps the positions the slice covers."""
    count, ndim, size = src.meta.shape[dim], t.meta.ndim, t.meta.shape[dim]
    # One padding element keeps the gather in bounds when the slice is empty (count == 0).
    pads = [ConstVariable(v) for d in reversed(range(dim, ndim)) for v in (0, int(d == dim))]
    src = state.call(torch.nn.functional.pad, [src, TupleVariable(pads)], {})
    positions = state.call(torch.arange, [sym_value(size)],
                           {"device": ConstVariable(t.meta.device)})
    offset = state.call(operator.sub, [positions, sym_value(start)], {})
    inside = state.call(torch.logical_and, [
        state.call(torch.logical_and, [
            state.call(operator.ge, [offset, ConstVariable(0)], {}),
            state.call(operator.lt, [positions, sym_value(stop)], {})], {}),
        state.call(operator.eq, [state.call(operator.mod, [offset, ConstVariable(step)], {}),
                                 ConstVariable(0)], {}),
    ], {})
    which = state.call(torch.clamp, [state.call(operator.floordiv, [offset, ConstVariable(step)],
                                                {})],
                       {"min": ConstVariable(0), "max": sym_value(count)})
    spread = state.call(torch.index_select, [src, ConstVariable(dim), which], {})
    shape = [ConstVariable(1)] * ndim
    shape[dim] = sym_value(size)
    mask = state.call(torch.Tensor.reshape, [inside, TupleVariable(shape)], {})
    mask = state.call(torch.Tensor.expand, [mask, SizeVariable(
        [sym_value(s) for s in t.meta.shape])], {})
    return state.call(torch.where, [mask, spread, t], {})


def _step(idx: SliceVariable) -> Variable:
    if isinstance(idx.step, ConstVariable) and idx.step.value is None:
        return ConstVariable(1)
    return idx.step


def full_slice() -> SliceVariable:
    return SliceVariable(ConstVariable(None), ConstVariable(None), ConstVariable(None))


def _is_full_slice(var: Variable) -> bool:
    return isinstance(var, SliceVariable) and all(
        isinstance(v, ConstVariable) and v.value is None for v in (var.start, var.stop, var.step)
    )


def _as_dtype(state: GraphState, value: Variable, t: TensorVariable) -> Variable:
    if isinstance(value, TensorVariable) and value.meta.dtype != t.meta.dtype:
        return state.call(torch.Tensor.to, [value, ConstVariable(t.meta.dtype)], {})
    return value
