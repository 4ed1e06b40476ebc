"""Aliasing between a graph's inputs and outputs, as eager has it.

    views = output_views(state, outputs)   # outputs that are views of an input or an output
    views[0].replay(x, symbol_values)      # -> x[1:] (a real view), done by the runtime
    aliasing_conflict(mutated, tensors, sources)   # "input L['a'] is written in place and
                                                   #  shares memory with input L['b']"
The graph computes values; which tensors share memory is restored around it at run time
(symc/mutation.py): outputs that are views in eager are re-derived from their root tensor, and
inputs written in place may not share memory with other inputs (that call misses the entry).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
import torch

from capture.graph import GraphState, to_arg
from capture.variables import ListVariable, SliceVariable, TensorVariable, TupleVariable


@dataclass(frozen=True)
class OutputView:
    """Output `output` is a view of input `root` (`from_input`) or of output `root`: the runtime
    returns `steps` applied to that tensor, so writes through it reach its root as in eager."""

    output: int
    root: int
    from_input: bool
    steps: tuple = ()    # (target, args, kwargs, grad_enabled, item), args with sympy sizes

    def replay(self, tensor: torch.Tensor, symbol_values: dict) -> torch.Tensor:
        for target, args, kwargs, grad_enabled, item in self.steps:
            with torch.set_grad_enabled(grad_enabled and torch.is_grad_enabled()):
                tensor = target(tensor, *_bind(args, symbol_values), **_bind(kwargs,
                                                                            symbol_values))
            if item is not None:
                tensor = tensor[item]
        return tensor

    @property
    def has_symbols(self) -> bool:
        return any(_has_symbols((args, kwargs)) for _, args, kwargs, _, _ in self.steps)


def _bind(value, symbol_values: dict):
    if isinstance(value, sympy.Expr):
        return int(value.xreplace(symbol_values))
    if isinstance(value, tuple):
        return tuple(_bind(v, symbol_values) for v in value)
    if isinstance(value, list):
        return [_bind(v, symbol_values) for v in value]
    if isinstance(value, dict):
        return {k: _bind(v, symbol_values) for k, v in value.items()}
    if isinstance(value, slice):
        return slice(*(_bind(v, symbol_values) for v in (value.start, value.stop, value.step)))
    return value


def _has_symbols(value) -> bool:
    if isinstance(value, sympy.Expr):
        return bool(value.free_symbols)
    if isinstance(value, (tuple, list)):
        return any(_has_symbols(v) for v in value)
    if isinstance(value, dict):
        return any(_has_symbols(v) for v in value.values())
    if isinstance(value, slice):
        return any(_has_symbols(v) for v in (value.start, value.stop, value.step))
    return False


def _has_tensor(value) -> bool:
    if isinstance(value, TensorVariable):
        return True
    if isinstance(value, (TupleVariable, ListVariable)):
        return any(_has_tensor(v) for v in value.items)
    if isinstance(value, SliceVariable):
        return any(_has_tensor(v) for v in (value.start, value.stop, value.step))
    return False


def output_views(state: GraphState, outputs: list) -> tuple[OutputView, ...]:
    """OutputViews for the outputs that alias an input or another output (hidden outputs for
    roots nobody returned are appended to `outputs`)."""
    views = []
    for index, var in enumerate(list(outputs)):
        if var.base is None and var.input_node is not None:
            # An input returned (written in place or not): the caller's own tensor, as in
            # eager (inductor's wrapper would return a copy).
            views.append(OutputView(index, state.input_vars.index(var), True))
            continue
        if var.base is None:
            continue
        if any(_has_tensor(a) for s in var.chain for a in (*s.args, *dict(s.kwargs).values())):
            continue   # a view that reads another tensor (view_as): returned as a copy
        root = var.base
        if root.input_node is not None:
            where, from_input = state.input_vars.index(root), True
        else:
            where = next((k for k, o in enumerate(outputs) if o.node is root.node), None)
            if where is None:
                outputs.append(root)
                where = len(outputs) - 1
            from_input = False
        steps = tuple((s.target, tuple(to_arg(a, state) for a in s.args),
                       {k: to_arg(v, state) for k, v in s.kwargs}, s.grad_enabled, s.item)
                      for s in var.chain)
        views.append(OutputView(index, where, from_input, steps))
    return tuple(views)


# ---------------------------------------------------------------------- aliased inputs
def aliasing_conflict(mutated, tensors: list, sources: list, checked: int | None = None):
    """Why these inputs can't run a graph that writes the `mutated` (input, output) pairs: a
    written input shares memory with another input (the graph treats them as independent
    values), else None. Memory is compared by storage, so disjoint slices of one tensor count.

    With `checked`, only the first `checked` inputs (the user's arguments) and the written ones
    are compared: module parameters and buffers were compared when the entry was captured.
    """
    written = {i for i, _ in mutated}
    owners: dict[int, list[int]] = {}
    compared = range(len(tensors)) if checked is None else \
        sorted(written.union(range(min(checked, len(tensors)))))
    for i in compared:
        ptr = tensors[i].untyped_storage().data_ptr()
        if ptr:
            owners.setdefault(ptr, []).append(i)
    for i in sorted(written):
        ptr = tensors[i].untyped_storage().data_ptr()
        others = [j for j in owners.get(ptr, ()) if j != i] if ptr else []
        if others:
            return (f"input {sources[i]} is written in place and shares memory with input "
                    f"{sources[others[0]]}")
    return None
