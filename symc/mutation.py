"""The run-time half of functionalization: before the graph, after it, and its outputs' aliasing.

    why = refuse_inputs(cap, inputs)      # a written input shares memory with another: a miss
    outputs = run(*graph_inputs(cap, inputs))   # written inputs cloned if a backward may follow
    copy_back(cap, inputs, outputs)       # written inputs take their new values, in order
    outputs = alias_outputs(cap, inputs, outputs, L, G)   # views of inputs/outputs re-derived

Capture made every in-place write functional (capture/functionalize.py); this module makes the
caller see eager's effects: the writes land in the caller's tensors, autograd records them when
eager would, and outputs that are views in eager are views here.
"""

from __future__ import annotations

import torch

from capture.aliasing import aliasing_conflict

LEAF_MESSAGE = "a leaf Variable that requires grad is being used in an in-place operation."
VIEW_OF_LEAF_MESSAGE = ("a view of a leaf Variable that requires grad is being used in an "
                        "in-place operation.")


def refuse_inputs(cap, inputs: list) -> str | None:
    """Why this entry can't run these inputs (aliased written inputs), else None; raises
    eager's RuntimeError for a write, under grad mode, to a leaf that requires grad."""
    if torch.is_grad_enabled():
        for i in cap.grad_writes:
            t = inputs[i]
            if t.requires_grad and t.is_leaf:
                raise RuntimeError(LEAF_MESSAGE)
            base = t._base
            if base is not None and base.is_leaf and base.requires_grad:
                raise RuntimeError(VIEW_OF_LEAF_MESSAGE)
    return aliasing_conflict(cap.mutated, inputs, cap.inputs, cap.user_inputs)


def graph_inputs(cap, inputs: list) -> list:
    """The tensors the graph reads: written inputs are cloned when a backward may follow, since
    autograd may save their old values and the copy-back would overwrite them (eager's in-place
    ops save a copy of the original for the same reason)."""
    if not torch.is_grad_enabled() or not any(t.requires_grad for t in inputs):
        return inputs
    inputs = list(inputs)
    for i, _ in cap.mutated:
        inputs[i] = inputs[i].clone()
    return inputs


def copy_back(cap, inputs: list, outputs) -> None:
    """Write each mutated input's new value into the caller's tensor, in order. Written under
    grad mode, the copy is recorded by autograd (so later uses of the input get gradients
    through the graph); written only under no_grad, it is not, as in eager."""
    values = [outputs[j] for _, j in cap.mutated]
    written = {inputs[i].untyped_storage().data_ptr() for i, _ in cap.mutated}
    # A value that is itself a view of a written input (the eager backend passes inputs
    # through) must be read before any write lands.
    values = [v.clone() if v.untyped_storage().data_ptr() in written else v for v in values]
    for (i, _), value in zip(cap.mutated, values):
        with torch.set_grad_enabled(torch.is_grad_enabled() and i in cap.grad_writes):
            inputs[i].copy_(value)


def alias_outputs(cap, inputs: list, outputs, L: dict, G: dict):
    """`outputs` with every output that is a view in eager re-derived from its root tensor."""
    if not cap.output_views:
        return outputs
    outputs = list(outputs)
    symbol_values = None
    for view in cap.output_views:
        if symbol_values is None and view.has_symbols:
            symbol_values = cap.env.bind_symbols(L, G)
        root = inputs[view.root] if view.from_input else outputs[view.root]
        outputs[view.output] = view.replay(root, symbol_values or {})
    return outputs
