"""The autograd state a cache entry was compiled for, and calls that must run eagerly.

    mode = grad_mode()                 # (grad enabled, inference mode): part of an entry's key
    entry.grad_mode == mode            # else a miss, with `mode_reason(...)` as its reason
    transform_active()                 # a torch.func transform (grad, vmap, ...) is running

Grad mode decides what a capture records (`torch.no_grad()` regions are detached, outputs of a
call made with grad disabled require no grad) and which graphs an AOT backend runs, so an entry
compiled in one mode is never reused in another: a validation pass under `torch.no_grad()`
before training compiles its own entry. Under a functorch transform the tensors are wrappers
(BatchedTensor, GradTrackingTensor) that compiled kernels cannot read, so the call runs eagerly.
"""

from __future__ import annotations

import functools

import torch

is_grad_enabled = torch.is_grad_enabled
is_inference_mode_enabled = torch.is_inference_mode_enabled
# the innermost torch.func transform running, None when none is (the per-call path calls it)
peek_transform = torch._C._functorch.peek_interpreter_stack

TRANSFORM_REASON = ("called under a torch.func transform (grad/vmap/jacrev...): its tensors are "
                    "functorch wrappers, so the function ran eagerly")


def grad_mode() -> tuple[bool, bool]:
    """(torch.is_grad_enabled(), torch.is_inference_mode_enabled()) of the caller."""
    return (is_grad_enabled(), is_inference_mode_enabled())


def transform_active() -> bool:
    return peek_transform() is not None


def mode_text(mode: tuple[bool, bool]) -> str:
    grad, inference = mode
    if inference:
        return "inference mode"
    return "grad enabled" if grad else "grad disabled (torch.no_grad)"


def mode_reason(index: int, mode, compiled_mode) -> str:
    return (f"entry {index}: grad mode {mode_text(mode)} differs from "
            f"{mode_text(compiled_mode)} it was compiled under")


def with_grad_enabled(run):
    """`run` under torch.enable_grad(): for an entry compiled with grad disabled whose function
    enables it inside (`with torch.enable_grad():`). Every op the capture recorded with grad
    disabled is followed by a detach in the graph, so only the enabled regions record grads."""

    @functools.wraps(run)
    def run_with_grad(*inputs):
        with torch.enable_grad():
            return run(*inputs)

    return run_with_grad
