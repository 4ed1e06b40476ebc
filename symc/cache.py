"""The guard cache of one compiled function: entries tried in order, a miss recompiles.

    cf = CompiledFunction(fn, backend="eager")
    cf(x)    # miss: capture, compile, check guards -> entry 0
    cf(y)    # entry 0's generated checker passes -> run entry 0 (no capture)
    cf(z)    # entry 0 fails `s0 <= 8` -> RecompileReason recorded, capture again -> entry 1

A graph break (capture.Unsupported) makes the frame run eagerly from then on; for a module its
direct children are compiled on their own. Past `config.cache_size_limit` entries the function
runs eagerly, with one warning.
"""

from __future__ import annotations

import functools
import inspect
import time
import traceback
import warnings
import weakref
from dataclasses import dataclass, field

import torch

import guards
from capture import Capture, CaptureError, Unsupported, frame_locals, translate
from prims import autocast_state, current_autocast_state
from guards import MISS
from symc import mutation
from symc.backends import get_backend
from symc.call_mode import (
    TRANSFORM_REASON,
    grad_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    mode_reason,
    peek_transform,
    with_grad_enabled,
)
from symc.config import config
from symc.fast_path import autocast_is_on, make_binder, make_entry_call
from symc.logs import log
from symc.resume_runtime import BreakRecord, attach_resume

_ALL: weakref.WeakSet = weakref.WeakSet()
_RECORDERS: list[list] = []


@dataclass
class CacheEntry:
    capture: Capture
    checker: object          # guards.Checker: (L, G) -> -1 or index of the first failing guard
    asserts: object          # guards.AssertChecker: raises ShapeError on a failing assert
    minimized: object        # guards.MinimizedGuards
    run: object              # the backend's callable
    read_inputs: object = None     # (L, G) -> the graph's inputs (guards.compile_reader)
    compile_seconds: float = 0.0
    hits: int = 0
    autocast: tuple | None = None   # the caller's autocast state it was compiled under
    grad_mode: tuple = (True, False)   # (grad enabled, inference mode) it was compiled under
    guarded: object = None   # (L, G) -> guards.MISS or the result: the per-call fast path
    resume: object = None    # (outputs, L, G) -> result: the rest of a split frame

    def __call__(self, L: dict, G: dict):
        """The entry's result for these frame values, or MISS when its inputs alias in a way
        the graph does not allow (a written input sharing memory with another input)."""
        cap = self.capture
        inputs = self.read_inputs(L, G)
        if cap.mutated and mutation.refuse_inputs(cap, inputs) is not None:
            return MISS
        self.hits += 1
        if cap.env.asserts:
            self.asserts(L, G)
        if cap.mutated:
            outputs = self.run(*mutation.graph_inputs(cap, inputs))
            mutation.copy_back(cap, inputs, outputs)
        else:
            outputs = self.run(*inputs)
        outputs = mutation.alias_outputs(cap, inputs, outputs, L, G)
        if self.resume is not None:
            return self.resume(outputs, L, G)
        values = {}
        if any(_has_symbols(s) for s in (cap.output, *(e[2] for e in cap.effects))):
            values = self.capture.env.bind_symbols(L, G)
        return cap.finish_call(outputs, values, L, G)


def _has_symbols(spec) -> bool:
    return spec.kind == "sym" or any(_has_symbols(c) for c in spec.children)


def _autocast_text(state) -> str:
    if not state:
        return "off"
    return ", ".join(f"{device} {str(dtype).removeprefix('torch.')}" for device, dtype in state)


class CompiledFunction:
    """A function (or a module's forward, with `self_obj`) behind a guard cache."""

    def __init__(self, fn, *, backend="inductor", dynamic=True, fullgraph=False,
                 self_obj=None, name: str | None = None):
        self.fn = fn
        self.self_obj = self_obj
        self.backend_name = backend if isinstance(backend, str) else getattr(
            backend, "__name__", "custom")
        self.backend = get_backend(backend)
        self.dynamic = dynamic
        self.fullgraph = fullgraph
        self.name = name or getattr(fn, "__qualname__", repr(fn))
        self.entries: list[CacheEntry] = []
        self.compiles = 0
        self.recompile_reasons: list = []
        self.breaks: list[BreakRecord] = []
        self.broken: Unsupported | None = None
        self.limit_hit = False
        self.children: dict[str, CompiledFunction] = {}
        self.signature = inspect.signature(fn)
        self._bind = make_binder(fn, self_obj)
        self._globals = fn.__globals__
        self._guarded: dict = {}   # (grad mode, autocast state) -> entries' guarded calls
        self.eager_calls: dict[str, int] = {}   # reason -> calls run eagerly for it
        functools.update_wrapper(self, fn, updated=())
        _ALL.add(self)
        for recorder in _RECORDERS:
            recorder.append(self)

    # ------------------------------------------------------------------ calls
    def __call__(self, *args, **kwargs):
        if peek_transform() is not None:  # a torch.func transform: functorch wrappers
            return self._run_eagerly(TRANSFORM_REASON, args, kwargs)
        L = self._bind(*args, **kwargs)
        G = self._globals
        # the entries compiled under this grad mode and autocast state (a bf16 training step
        # runs under autocast: its entries take this path too)
        key = (is_grad_enabled(), is_inference_mode_enabled(),
               current_autocast_state() if autocast_is_on() else None)
        for guarded in self._guarded.get(key, ()):  # generated: guards, input reads, run
            result = guarded(L, G)
            if result is not MISS:
                return result
        return self._general_call(L, args, kwargs)

    def _general_call(self, L, args, kwargs):
        """Every entry's exact checker (autocast state included), then a miss."""
        if self.self_obj is not None:
            args = (self.self_obj, *args)
        G = self._globals
        autocast = current_autocast_state()
        mode = grad_mode()
        for entry in self.entries:
            if entry.autocast == autocast and entry.grad_mode == mode and entry.checker(L, G) < 0:
                result = entry(L, G)
                if result is not MISS:
                    return result
        return self._miss(L, G, args, kwargs, autocast)

    def _refresh(self) -> None:
        guarded: dict = {}
        for e in self.entries:
            if e.guarded is not None:
                guarded.setdefault((*e.grad_mode, e.autocast), []).append(e.guarded)
        self._guarded = {key: tuple(calls) for key, calls in guarded.items()}

    def _run_eagerly(self, reason: str, args, kwargs):
        """Run the function itself (no capture, no compiled children), counted in explain."""
        self.eager_calls[reason] = self.eager_calls.get(reason, 0) + 1
        if self.self_obj is not None:
            args = (self.self_obj, *args)
        return self.fn(*args, **kwargs)

    def _miss(self, L, G, args, kwargs, autocast=None):
        if self.broken is not None:
            return self._eager(args, kwargs)
        if len(self.entries) >= config.cache_size_limit:
            if not self.limit_hit:
                self.limit_hit = True
                warnings.warn(f"symc: {self.name} hit cache_size_limit="
                              f"{config.cache_size_limit}; running eagerly from now on "
                              f"(last reason: {self._reasons(L, G, autocast)[-1:]})",
                              stacklevel=3)
            return self._eager(args, kwargs)
        reasons = self._reasons(L, G, autocast)
        for reason in reasons:
            log("recompiles", "%s: recompiling: %s", self.name, reason)
        self.recompile_reasons.extend(reasons)
        with autocast_state(autocast):
            entry = self._compile(args, kwargs)
        if entry is None:
            return self._eager(args, kwargs)
        self.entries.append(entry)
        self._refresh()
        return entry(L, G)

    def _reasons(self, L, G, autocast=None) -> list:
        reasons = []
        mode = grad_mode()
        for i, entry in enumerate(self.entries):
            if entry.grad_mode != mode:
                reasons.append(mode_reason(i, mode, entry.grad_mode))
                continue
            if entry.autocast != autocast:
                reasons.append(f"entry {i}: autocast state {_autocast_text(autocast)} differs "
                               f"from {_autocast_text(entry.autocast)} it was compiled under")
                continue
            index = entry.checker(L, G)
            if index >= 0:
                reasons.append(entry.checker.reason(L, G, index, i))
            elif entry.capture.mutated:
                why = mutation.refuse_inputs(entry.capture, entry.read_inputs(L, G))
                if why is not None:
                    reasons.append(f"entry {i}: {why}")
        return reasons

    def _compile(self, args, kwargs) -> CacheEntry | None:
        start = time.perf_counter()
        try:
            cap = translate(self.fn, args, kwargs, dynamic=self.dynamic,
                            resume=not self.fullgraph)
        except Unsupported as exc:
            return self._record_break(exc)
        except CaptureError:
            raise
        except Exception as exc:  # noqa: BLE001 - a capture bug must not break the user's run
            if not config.suppress_errors or self.fullgraph:
                raise
            log("breaks", "%s", traceback.format_exc())
            return self._record_break(Unsupported(f"internal capture error: "
                                                  f"{type(exc).__name__}: {exc}"))
        minimized = guards.minimize(cap.guards)
        example = (frame_locals(self.fn, args, kwargs, self.signature), self._globals)
        checker = guards.compile_checker(cap.guards, minimized, example=example,
                                         inputs=cap.inputs)
        asserts = guards.compile_assert_checker(cap.env)
        run = self.backend(cap)
        mode = grad_mode()
        if cap.grad_recorded and not mode[0] and not mode[1]:
            run = with_grad_enabled(run)
        self.compiles += 1
        entry = CacheEntry(cap, checker, asserts, minimized, run,
                           guards.compile_reader(cap.inputs), time.perf_counter() - start,
                           autocast=current_autocast_state(), grad_mode=mode)
        if cap.resume is not None:
            attach_resume(self, entry)
        entry.guarded = checker.guarded(make_entry_call(entry))
        log("graph", "%s entry %d:\n%s", self.name, len(self.entries), cap.graph)
        log("guards", "%s entry %d guards:\n%s", self.name, len(self.entries),
            guards.describe_guards(cap.guards, minimized))
        return entry

    def _record_break(self, exc: Unsupported) -> None:
        if self.fullgraph:
            raise exc
        record = BreakRecord(exc.reason, exc.where, exc.line, self.name)
        self.breaks.append(record)
        self.broken = exc
        log("breaks", "graph break: %s", record)
        return None

    # ------------------------------------------------------------------ eager fallback
    def _eager(self, args, kwargs):
        module = self.self_obj
        if not isinstance(module, torch.nn.Module):
            return self.fn(*args, **kwargs)
        patched = []
        try:
            for name, child in _compilable_children(module):
                if "forward" in child.__dict__:
                    continue
                compiled = self.children.get(name)
                if compiled is None or compiled.self_obj is not child:
                    compiled = CompiledFunction(
                        type(child).forward, backend=self.backend, dynamic=self.dynamic,
                        self_obj=child, name=f"{self.name.rsplit('.', 1)[0]}.{name}.forward")
                    compiled.backend_name = self.backend_name
                    self.children[name] = compiled
                child.forward = compiled
                patched.append(child)
            return self.fn(*args, **kwargs)
        finally:
            for child in patched:
                child.__dict__.pop("forward", None)

    def __reduce__(self):
        """Pickled and deep-copied as what was compiled, with its options; the entries
        (graphs, kernels, generated code) are not copied but rebuilt on the next call."""
        return (_rebuild, (self.fn, self.self_obj, self.backend, self.backend_name,
                           self.dynamic, self.fullgraph, self.name))

    def reset(self) -> None:
        self.entries.clear()
        self._refresh()
        self.broken = None
        self.limit_hit = False
        for child in self.children.values():
            child.reset()

    def all_functions(self) -> list[CompiledFunction]:
        out = [self]
        for child in self.children.values():
            out += child.all_functions()
        return out


def _rebuild(fn, self_obj, backend, backend_name, dynamic, fullgraph, name):
    compiled = CompiledFunction(fn, backend=backend, dynamic=dynamic, fullgraph=fullgraph,
                                self_obj=self_obj, name=name)
    compiled.backend_name = backend_name
    return compiled


def _compilable_children(module, prefix=""):
    """Direct children with their own forward; containers (ModuleList/Dict) are looked into."""
    containers = (torch.nn.ModuleList, torch.nn.ModuleDict, torch.nn.ParameterList,
                  torch.nn.ParameterDict)
    for name, child in module.named_children():
        full = f"{prefix}{name}"
        if isinstance(child, containers):
            yield from _compilable_children(child, f"{full}.")
        else:
            yield full, child


def reset_all() -> None:
    for fn in list(_ALL):
        fn.reset()
