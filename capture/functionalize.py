"""Functionalization: in-place writes on tensors and on their views become functional graph ops.

    v = a[1:]; v.mul_(3)     ->  v1 = mul(v, 3)
                                 a1 = where(mask, pad(v1), a)   # v1 written back into `a`
                                 `a` now names a1, and every live view of `a` (v too) is
                                 taken again from a1
A write to a view goes back into its root one view op at a time (SCATTER_RULES, keyed by the
view op's name); the root then names the new value and its live views are re-derived. Writes
to graph inputs become extra graph outputs that the runtime copies back (symc/mutation.py);
outputs that are views are re-derived from their root at run time (capture/aliasing.py). A
view op with no rule (expand, diagonal, chunk, ...) makes a write through it a graph break.
"""

from __future__ import annotations

import sympy
import torch

from capture.assign import assign, bound, full_slice
from capture.errors import Unsupported
from capture.graph import VIEW_NAMES, GraphState
from capture.if_conversion import refuse_write
from capture.variables import (
    ConstVariable,
    ListVariable,
    SizeVariable,
    SliceVariable,
    SymIntVariable,
    TensorVariable,
    TupleVariable,
    Variable,
    ViewStep,
    sym_value,
)

# Views of contiguous tensors only; of others they are copies (eager decides by strides).
RESHAPES = frozenset({"reshape", "flatten", "unflatten"})
# In-place methods that change a tensor's metadata or autograd flags, not its values.
METADATA_WRITES = frozenset(
    "requires_grad_ retain_grad share_memory_ resize_ resize_as_ set_ as_strided_ squeeze_ "
    "unsqueeze_ t_ transpose_ swapdims_ swapaxes_ detach_ rename_ pin_memory_".split()
)
# In-place methods whose out-of-place namesake means something else (`x.bernoulli()` draws
# with probabilities x): written as the in-place op applied to a clone.
CLONE_FIRST = frozenset({"bernoulli_", "fill_", "zero_", "copy_"})


# ---------------------------------------------------------------------- which calls are views
def view_parent(name: str, t: TensorVariable, args: list) -> TensorVariable | None:
    """`t` if `t.<name>(*args)` returns a view of `t` (sharing its memory), else None."""
    if name == "__getitem__":
        return t if is_basic_index(args[0]) else None
    if name in RESHAPES:
        return t if t.meta.is_contiguous else None
    return t if name in VIEW_NAMES else None


def is_basic_index(index: Variable) -> bool:
    """Ints, slices, None and Ellipsis only: indexing with tensors or lists copies."""
    items = index.items if isinstance(index, TupleVariable) else [index]
    return not any(isinstance(i, (TensorVariable, ListVariable, TupleVariable)) for i in items)


# ---------------------------------------------------------------------- entry points
def inplace_method(state: GraphState, name: str, t: TensorVariable, args: list, kwargs: dict):
    """`t.<name>_(*args)`: the functional op, then a write of its value into `t`."""
    if name in METADATA_WRITES:
        raise Unsupported(f"Tensor.{name} (changes the tensor's metadata) in a compiled region")
    functional = getattr(torch.Tensor, name[:-1], None)
    if functional is None or name in CLONE_FIRST or not callable(functional):
        clone = state.call(torch.Tensor.clone, [t], {})
        out = state.call(getattr(torch.Tensor, name), [clone, *args], kwargs)
        if state.grad_enabled and t.meta.requires_grad:
            # Eager's `t.fill_(v)` keeps `t` in the autograd graph: what is computed from it
            # afterwards gives `t`'s history a zero gradient, not None. `where(True, new, t)`
            # keeps that edge (with a zero derivative even where `t` holds inf or NaN).
            keep = state.call(torch.ones_like, [t], {"dtype": ConstVariable(torch.bool)})
            out = state.call(torch.where, [keep, out, t], {})
    else:
        out = state.call(functional, [t, *args], kwargs)
    return write(state, t, out, name)


# ---------------------------------------------------------------------- writes
def write(state: GraphState, t: TensorVariable, new: Variable, what: str) -> TensorVariable:
    """Make `t` hold `new`'s value: through its view chain into its root, then re-derive views."""
    if not isinstance(new, TensorVariable):
        raise Unsupported(f"in-place {what} did not produce a tensor")
    refuse_write(t, what)
    new = _like(state, t, new, what)
    root = t.base or t
    value = new if t.base is None else _write_back(state, t, new, what)
    if not state.grad_enabled and root.meta.requires_grad:
        value = keep_history(state, root, value)
    if state.grad_enabled and not any(step.name == "detach" for step in t.chain):
        root.grad_write = True   # eager refuses this on a leaf that requires grad
    root.node, root.meta = value.node, value.meta
    refresh_views(state, root)
    return t


def _like(state: GraphState, t: TensorVariable, new: TensorVariable, what: str):
    """`new` with `t`'s dtype and (checked) shape, as eager's in-place ops require."""
    if new.meta.ndim != t.meta.ndim:
        raise Unsupported(f"in-place {what} would change the rank of its target "
                          f"({t.meta} -> {new.meta})")
    for a, b in zip(new.meta.shape, t.meta.shape, strict=True):
        if a != b and not state.env.statically_known_true(sympy.Eq(a, b)):
            state.expect(sympy.Eq(a, b), f"in-place {what}: result size {a} != target size {b}")
    if new.meta.dtype != t.meta.dtype:
        if not torch.can_cast(new.meta.dtype, t.meta.dtype):
            raise Unsupported(f"in-place {what}: result type {new.meta.dtype} can't be cast to "
                              f"{t.meta.dtype}")
        new = state.call(torch.Tensor.to, [new, ConstVariable(t.meta.dtype)], {})
    return new


def keep_history(state: GraphState, old: TensorVariable, new: TensorVariable):
    """`new`'s value with `old`'s gradient path: `old + (new - old).detach()`.

    A write under no_grad (or through `.detach()`) changes values but not autograd's history.
    """
    if not old.meta.dtype.is_floating_point:
        return new
    saved, state.grad_enabled = state.grad_enabled, True
    try:
        delta = state.call(torch.Tensor.detach, [state.call(torch.sub, [new, old], {})], {})
        return state.call(torch.add, [old, delta], {})
    finally:
        state.grad_enabled = saved


def _write_back(state: GraphState, t: TensorVariable, new: TensorVariable, what: str):
    """The root's new value when view `t` of it takes the value `new`."""
    parents = [t.base]
    for step in t.chain[:-1]:
        parents.append(apply_step(state, parents[-1], step))
    value = new
    for step, parent in zip(reversed(t.chain), reversed(parents)):
        rule = SCATTER_RULES.get(step.name)
        if rule is None or (step.item is not None) != (step.name in MULTI_OUTPUT_VIEWS):
            raise Unsupported(f"in-place {what} through a {step.name} view: no rule writes it "
                              f"back into its base (add one to capture/functionalize.py "
                              f"SCATTER_RULES)")
        value = rule(state, parent, value, step)
    return value


def apply_step(state: GraphState, parent: TensorVariable, step: ViewStep) -> TensorVariable:
    saved, state.grad_enabled = state.grad_enabled, step.grad_enabled
    try:
        out = state.call(step.target, [parent, *step.args], dict(step.kwargs))
    finally:
        state.grad_enabled = saved
    return out.items[step.item] if step.item is not None else out


def refresh_views(state: GraphState, root: TensorVariable) -> None:
    """Take every live view of `root` again from its current value (shared prefixes once)."""
    last = next(iter(reversed(state.graph.nodes)), None)  # torch 2.11: a list, not an iterator
    memo: dict[tuple, TensorVariable] = {}
    alive = []
    for ref in root.views:
        view = ref()
        if view is None:
            continue
        alive.append(ref)
        current = root
        for k, step in enumerate(view.chain):
            key = tuple(id(s) for s in view.chain[: k + 1])
            if key not in memo:
                memo[key] = apply_step(state, current, step)
            current = memo[key]
        view.node, view.meta = current.node, current.meta
    root.views[:] = alive
    for node in reversed(state.graph.nodes):   # nodes of views nobody reads again are pruned
        if node is last:
            break
        node.meta["rederived"] = True


def prune_rederived(graph) -> None:
    """Erase re-derived view nodes that nothing uses (views that were never read again)."""
    for node in reversed(graph.nodes):
        if node.meta.get("rederived") and not node.users and node.op == "call_function":
            graph.erase_node(node)


# ---------------------------------------------------------------------- scatter rules
def _arg(step: ViewStep, index: int, name: str, default=None) -> Variable:
    kwargs = dict(step.kwargs)
    if name in kwargs:
        return kwargs[name]
    if index < len(step.args):
        return step.args[index]
    if default is None:
        raise Unsupported(f"{step.name} view without its {name} argument")
    return ConstVariable(default)


def _const(var: Variable, what: str) -> int:
    if not isinstance(var, ConstVariable) or not isinstance(var.value, int):
        raise Unsupported(f"writing through a view with a non-constant {what}")
    return var.value


def _scatter_getitem(state, parent, new, step):
    return assign(state, parent, step.args[0], new)


def _scatter_select(state, parent, new, step):
    dim = _const(_arg(step, 0, "dim"), "dim") % parent.meta.ndim
    index = TupleVariable([full_slice()] * dim + [_arg(step, 1, "index")])
    return assign(state, parent, index, new)


def _scatter_narrow(state, parent, new, step):
    dim = _const(_arg(step, 0, "dim"), "dim") % parent.meta.ndim
    start = bound(state, _arg(step, 1, "start"), parent.meta.shape[dim], 0)
    length = _arg(step, 2, "length")
    length = length.expr if isinstance(length, SymIntVariable) else sympy.sympify(length.value)
    stop = SymIntVariable(start + length) if not (start + length).is_Integer else \
        ConstVariable(int(start + length))
    piece = SliceVariable(sym_value(start), stop, ConstVariable(None))
    return assign(state, parent, TupleVariable([full_slice()] * dim + [piece]), new)


def _scatter_transpose(state, parent, new, step):
    return state.call(step.target, [new, *step.args], dict(step.kwargs))   # its own inverse


def _scatter_t(state, parent, new, step):
    return state.call(torch.Tensor.t, [new], {})


def _scatter_permute(state, parent, new, step):
    dims = list(step.args)
    if len(dims) == 1 and isinstance(dims[0], (TupleVariable, ListVariable)):
        dims = list(dims[0].items)
    if not dims:
        dims = list(dict(step.kwargs).get("dims", TupleVariable([])).items)
    order = [_const(d, "dim") % parent.meta.ndim for d in dims]
    inverse = [order.index(d) for d in range(len(order))]
    return state.call(torch.Tensor.permute, [new, *map(ConstVariable, inverse)], {})


def _scatter_reshape(state, parent, new, step):
    shape = SizeVariable([sym_value(s) for s in parent.meta.shape])
    return state.call(torch.Tensor.reshape, [new, shape], {})


def _scatter_detach(state, parent, new, step):
    return keep_history(state, parent, new)


def _scatter_split(state, parent, new, step):
    """Item i of `split(size, dim)` (an int size or a list of sizes) is a slice along dim."""
    sizes = _arg(step, 0, "split_size_or_sections")
    dim = _const(_arg(step, 1, "dim", 0), "dim") % parent.meta.ndim
    if isinstance(sizes, (TupleVariable, ListVariable)):
        lengths = [_const(v, "split size") for v in sizes.items]
        start, stop = sum(lengths[: step.item]), sum(lengths[: step.item + 1])
    else:
        size = _const(sizes, "split size")
        start, stop = step.item * size, (step.item + 1) * size
    piece = SliceVariable(ConstVariable(start), ConstVariable(stop), ConstVariable(None))
    return assign(state, parent, TupleVariable([full_slice()] * dim + [piece]), new)


def _scatter_unbind(state, parent, new, step):
    dim = _const(_arg(step, 0, "dim", 0), "dim") % parent.meta.ndim
    index = TupleVariable([full_slice()] * dim + [ConstVariable(step.item)])
    return assign(state, parent, index, new)


MULTI_OUTPUT_VIEWS = frozenset({"split", "unbind"})   # their rules write back one item

SCATTER_RULES = {
    "split": _scatter_split,
    "unbind": _scatter_unbind,
    "__getitem__": _scatter_getitem,
    "select": _scatter_select,
    "narrow": _scatter_narrow,
    "transpose": _scatter_transpose,
    "swapaxes": _scatter_transpose,
    "swapdims": _scatter_transpose,
    "t": _scatter_t,
    "permute": _scatter_permute,
    "view": _scatter_reshape,
    "view_as": _scatter_reshape,
    "reshape": _scatter_reshape,
    "flatten": _scatter_reshape,
    "unflatten": _scatter_reshape,
    "squeeze": _scatter_reshape,
    "unsqueeze": _scatter_reshape,
    "detach": _scatter_detach,
}
