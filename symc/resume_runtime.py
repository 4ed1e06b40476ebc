"""Running a frame that a graph break split: graph, the breaking instruction eagerly, the rest.

    attach_resume(owner, entry)     # entry.capture.resume is set: record the break, wire the call
    entry(L, G)                     # graph -> ResumePoint.run -> resume function (compiled)

Each resume function (the rest of the frame after one break) is a CompiledFunction of its own,
with its own guards and cache entries, kept among the owner's `children`, so `symc.explain`
lists its graphs after the owner's. A user function called by the breaking instruction (the
break was inside a call capture had inlined) is compiled on its own too, so the part of it
before its own break is a graph and the rest resumes there.
"""

from __future__ import annotations

import os
import sys
import threading
import types
from dataclasses import dataclass

import torch

from symc.logs import log
from symc.module_hooks import has_hooks

_TORCH_DIR = os.path.dirname(os.path.abspath(torch.__file__))
_LIBRARY_DIRS = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix, _TORCH_DIR})
_STATE = threading.local()   # .tail_for: the resume function a trampoline is calling now


@dataclass(frozen=True)
class BreakRecord:
    """A graph break: what capture could not translate, and where."""

    reason: str
    where: str | None
    line: str | None
    function: str
    resumed_in: str | None = None   # the resume function(s) the frame goes on in, if split

    def __str__(self) -> str:
        at = f" at {self.where}" if self.where else ""
        text = f"{self.function}: {self.reason}{at}"
        text += f" (resumed in {self.resumed_in})" if self.resumed_in else ""
        return text + (f"\n      {self.line}" if self.line else "")


@dataclass(frozen=True)
class TailCall:
    """A resume function's own resume, handed back to the trampoline that called it."""

    fn: object
    args: list


class ResumeContext:
    """What `ResumePoint.run` needs from symc: calls and resume functions of one owner."""

    def __init__(self, owner, G: dict):
        self.owner = owner
        self.globals = G

    def resume(self, code, args: list, grad_enabled: bool):
        """Call the resume function of `code` (a tail call: loops do not nest frames); the
        frame returns in grad mode `grad_enabled`, the caller's (compiled resume functions
        do not run the `__exit__` of a `with torch.no_grad()` block they finish)."""
        fn = self.resume_function(code)
        if getattr(_STATE, "tail_for", None) is self.owner:
            _STATE.tail_for = None
            return TailCall(fn, args)
        saved = getattr(_STATE, "tail_for", None)
        try:
            while True:
                _STATE.tail_for = fn
                result = fn(*args)
                if not isinstance(result, TailCall):
                    return result
                fn, args = result.fn, result.args
        finally:
            _STATE.tail_for = saved
            torch.set_grad_enabled(grad_enabled)

    def resume_function(self, code):
        """The CompiledFunction of resume code `code`, one per code object under the root."""
        owner = getattr(self.owner, "resume_root", self.owner)
        key = f"<resume {code.co_name} {id(code)}>"
        compiled = owner.children.get(key)
        if compiled is None or compiled.fn.__code__ is not code:
            fn = types.FunctionType(code, owner.fn.__globals__, code.co_name, None,
                                    owner.fn.__closure__)
            compiled = owner.children[key] = _child(owner, fn, None, _name(owner, code.co_name))
            compiled.resume_root = owner
        return compiled

    def call(self, fn, args, kwargs):
        """The breaking instruction's call, run eagerly (a user function compiled on its own)."""
        compiled = _compiled_callee(self.owner, fn)
        return (compiled or fn)(*args, **kwargs)


def _name(owner, suffix: str) -> str:
    head = owner.name.rsplit(".", 1)[0] + "." if "." in owner.name else ""
    return head + suffix


def _child(owner, fn, self_obj, name):
    """A CompiledFunction (the class of `owner`) of `fn`, with `owner`'s options."""
    compiled = type(owner)(fn, backend=owner.backend, dynamic=owner.dynamic,
                                self_obj=self_obj, name=name)
    compiled.backend_name = owner.backend_name
    return compiled


def _is_user_code(fn) -> bool:
    code = getattr(fn, "__code__", None)
    if code is None or code.co_flags & 0x3A0:  # generators, coroutines: not compiled alone
        return False
    filename = os.path.abspath(code.co_filename)
    return "site-packages" not in filename and not filename.startswith(_LIBRARY_DIRS)


def _compiled_callee(owner, fn):
    """A CompiledFunction calling `fn` (a user function, method or module), else None."""
    if isinstance(fn, types.FunctionType) and _is_user_code(fn):
        target, self_obj = fn, None
    elif isinstance(fn, types.MethodType) and isinstance(fn.__func__, types.FunctionType) \
            and _is_user_code(fn.__func__):
        target, self_obj = fn.__func__, fn.__self__
    elif isinstance(fn, torch.nn.Module) and not has_hooks(fn) \
            and _is_user_code(type(fn).forward):
        target, self_obj = type(fn).forward, fn
    else:
        return None
    key = f"<call {target.__qualname__} {id(target)} {id(self_obj)}>"
    compiled = owner.children.get(key)
    if compiled is None or compiled.fn is not target or compiled.self_obj is not self_obj:
        compiled = owner.children[key] = _child(owner, target, self_obj, target.__qualname__)
    return compiled


def attach_resume(owner, entry) -> None:
    """Wire `entry` (whose capture stops at a break) to run the rest of the frame; record it."""
    point = entry.capture.resume
    successors = ", ".join(point.resume_names())
    record = BreakRecord(point.reason, point.where, point.line, owner.name,
                         resumed_in=successors or None)
    owner.breaks.append(record)
    log("breaks", "graph break, resumed in %s: %s", successors, record)

    def resume(outputs, L, G):
        symbols = {}
        if point.has_symbols:
            symbols = entry.capture.env.bind_symbols(L, G)
        return point.run(outputs, symbols, L, G, ResumeContext(owner, G))

    entry.resume = resume


__all__ = ["BreakRecord", "ResumeContext", "attach_resume"]
