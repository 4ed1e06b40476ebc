"""`with` statements: which context managers capture enters, and what entering/leaving does.

    with torch.no_grad(): ...              # kind "grad": grad mode inside, restored after
    with contextlib.nullcontext(v) as a:   # kind "null": no effect, `a` is v
    with torch._C._DisableFuncTorch(): ... # kind "null" as well (see NO_EFFECT)
    with my_contextmanager(x) as a: ...    # kind "generator": a @contextlib.contextmanager

A `@contextlib.contextmanager` function is inlined: calling it builds the
`contextlib._GeneratorContextManager` as any tracked object (capture.objects), whose
`__init__` calls the function, which makes a lazily run generator (capture.variables
`GeneratorVariable`). Entering runs the generator's frame to its first `yield` (the yielded
value is the `as` target); leaving normally resumes it to its end, so the code after the
`yield` (a `finally` that restores state included) is captured in program order. What capture
cannot follow exactly is a graph break with a reason:
  - an exception inside the block (a `raise`, an error eager would raise) is already a break:
    the block is a try region (capture.interpreter `_in_try_block`), so the context manager
    would see the exception; capture never runs its exception path;
  - a break inside the block does not split the frame (the generator's state lives in the
    graph before the break): the whole frame runs eagerly (capture.live_values);
  - a generator that does not yield (RuntimeError in eager), or yields a second time (eager
    raises RuntimeError "generator didn't stop"), breaks the whole frame, so eager raises.
"""

from __future__ import annotations

import contextlib

import torch

from capture.builtins import rule
from capture.errors import Unsupported
from capture.variables import (
    ConstVariable,
    ContextExitVariable,
    ContextVariable,
    GeneratorVariable,
    UserObjectVariable,
    Variable,
)

# Contexts that change nothing a compiled graph can observe: they switch off Python dispatch
# modes / functorch transforms for eager code in the block (torch.testing's freeze_rng_state
# enters them around its get/set_rng_state calls); compiled code runs no such mode.
NO_EFFECT = (torch._C._DisableTorchDispatch, torch._C._DisableFuncTorch)


@rule(torch.no_grad)
def _no_grad(tx, args, kwargs) -> Variable:
    return ContextVariable("grad", grad_enabled=False)


@rule(torch.enable_grad)
def _enable_grad(tx, args, kwargs) -> Variable:
    return ContextVariable("grad", grad_enabled=True)


@rule(contextlib.nullcontext)
def _null_context(tx, args, kwargs) -> Variable:
    """`contextlib.nullcontext(enter_result=None)`: a `with` over it changes nothing."""
    if len(args) + len(kwargs) > 1 or set(kwargs) - {"enter_result"}:
        raise Unsupported("contextlib.nullcontext: expected at most enter_result")
    return ContextVariable("null", enter_result=(args or list(kwargs.values()) or [None])[0])


@rule(*NO_EFFECT)
def _no_effect(tx, args, kwargs) -> Variable:
    if args or kwargs:
        raise Unsupported("torch._C._Disable* context with arguments")
    return ContextVariable("null")


def _generator_of(ctx: Variable) -> GeneratorVariable | None:
    """The generator of a `_GeneratorContextManager` built in the compiled code, else None."""
    if isinstance(ctx, UserObjectVariable) and ctx.cls is contextlib._GeneratorContextManager:
        gen = ctx.attrs.get("gen")
        return gen if isinstance(gen, GeneratorVariable) else None
    return None


def _whole_frame_break(reason: str) -> Unsupported:
    error = Unsupported(reason)
    error.resumable = False  # the generator's frame has moved on: no split could replay it
    return error


def enter(state, ctx: Variable) -> tuple[Variable, Variable]:
    """BEFORE_WITH: (the `__exit__` to push, the `__enter__` result to push)."""
    gen = _generator_of(ctx)
    if gen is not None:
        context = ContextVariable("generator", generator=gen)
        value = gen.next()
        if value is None:
            raise _whole_frame_break("a @contextmanager generator that did not yield (eager "
                                     "raises RuntimeError)")
        return ContextExitVariable(context), value
    if not isinstance(ctx, ContextVariable):
        raise Unsupported(f"with-statement over {type(ctx).__name__} (captured: torch.no_grad/"
                          "enable_grad, contextlib.nullcontext, @contextlib.contextmanager "
                          "functions; autocast is a graph break)")
    ctx.saved = state.grad_enabled
    if ctx.kind == "grad":
        state.grad_enabled = ctx.grad_enabled
    return ContextExitVariable(ctx), ctx.enter_result or ConstVariable(None)


def leave(state, exit_var: ContextExitVariable, args: list) -> Variable:
    """Calling the pushed `__exit__`: with (None, None, None) on a normal exit; with no
    arguments from a resume prologue re-entering a grad-mode block."""
    context = exit_var.context
    if context.kind == "grad":
        state.grad_enabled = context.saved if args else context.grad_enabled
    if context.kind == "generator":
        if not args:
            raise _whole_frame_break("re-entering a @contextmanager block in resumed code")
        if context.generator.next() is not None:
            raise _whole_frame_break("a @contextmanager generator yielded twice (eager raises "
                                     "RuntimeError: generator didn't stop)")
    return ConstVariable(None)


__all__ = ["NO_EFFECT", "enter", "leave"]
