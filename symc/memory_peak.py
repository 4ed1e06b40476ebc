"""Peak memory of a step on CPU, and what is alive at the peak (torch's CPU allocator keeps no
peak counter, so this reads the profiler's allocation events).

    trace = memory_trace(lambda: model(**batch)[1].backward())
    trace.peak_bytes        # the highest live total above what was live before the step
    trace.live_at_peak      # [Block(bytes, phase, site, text)], largest first

Every allocation and free the CPU allocator reports (torch.profiler, profile_memory=True)
is replayed in time order: the live total's maximum is the peak, and the blocks not yet
freed at that instant are what is alive there. Each block is named by where it was allocated:
a line of a symc wrapper (`buf12 = empty((s0, 64), ...)`: the buffer and its symbolic
shape), else the innermost Python frame and the aten op. `phase` is the step phase
(`forward`, `backward`, or whatever `phase()` ranges the step opened) it was allocated in: a
forward block alive at a backward peak is held for the backward (saved tensors, outputs).
The same accounting covers eager and compiled code (both allocate through torch), so it is
the oracle for "symc's peak is at most eager's".
"""

from __future__ import annotations

import contextlib
import linecache
import re
import time
from dataclasses import dataclass, field

import torch
from torch.profiler import ProfilerActivity, profile

_FRAME = re.compile(r"^(?P<file>.+)\((?P<line>\d+)\): (?P<fn>.+)$")


@dataclass(frozen=True)
class Block:
    bytes: int
    phase: str   # the step phase the block was allocated in
    site: str    # the innermost Python frame and aten op that allocated it
    text: str    # the source line of that frame (a wrapper's `bufN = empty(...)` line)


@dataclass
class MemoryTrace:
    peak_bytes: int = 0          # highest live total above the step's starting total
    end_bytes: int = 0           # live total after the step, above the starting total
    allocations: int = 0
    live_at_peak: list = field(default_factory=list)  # [Block], largest first
    live_at_end: list = field(default_factory=list)   # [Block] allocated in the step, still live

    def summary(self, top: int = 10) -> dict:
        return {"peak_bytes": self.peak_bytes, "end_bytes": self.end_bytes,
                "allocations": self.allocations,
                "live_at_peak": [vars(b) for b in self.live_at_peak[:top]],
                "live_at_end": [vars(b) for b in self.live_at_end[:top]]}


_PHASES: list = []  # (name, start ns, end ns) of the phases of the step being traced


@contextlib.contextmanager
def phase(name: str):
    """Mark a part of the step (`forward`, `backward`): blocks allocated inside carry its name."""
    begin = time.time_ns()
    try:
        yield
    finally:
        _PHASES.append((name, begin, time.time_ns()))


def _walk(event):
    stack = [event]
    while stack:
        ev = stack.pop()
        yield ev
        stack.extend(ev.children)


_EMPTY_OPS = ("aten::empty", "aten::empty_strided")  # a wrapper's `empty` (torch.empty_strided)


class _Namer:
    """Names allocation events by where they were made: the n-th `torch.empty` of one call of
    a symc wrapper is the n-th `= empty(` line of its source (the wrapper is straight-line)."""

    def __init__(self):
        self.count: dict = {}  # id of a wrapper call's frame event -> empties seen

    def describe(self, event) -> tuple[str, str]:
        op, frame, parent = "", None, event.parent
        while parent is not None and frame is None:
            name = parent.name
            if name.startswith("aten::") and not op:
                op = name
            elif _FRAME.match(name) and "torch/" not in name:
                frame = parent
            parent = parent.parent
        if frame is None:
            return op, ""
        match = _FRAME.match(frame.name)
        site = f"{frame.name} {op}"
        if not match["file"].startswith("<symc wrapper") or op not in _EMPTY_OPS:
            return site, linecache.getline(match["file"], int(match["line"])).strip()
        key = (frame.name, frame.start_time_ns)
        n = self.count.get(key, 0)
        self.count[key] = n + 1
        lines = [ln.strip() for ln in linecache.getlines(match["file"]) if "= empty(" in ln]
        return site, lines[n] if n < len(lines) else ""


def _phase_at(ns: int) -> str:
    return next((name for name, a, b in _PHASES if a <= ns <= b), "-")


def memory_trace(step) -> MemoryTrace:
    """Run `step()` once under the profiler and replay its CPU allocations (see the module)."""
    _PHASES.clear()
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True,
                 with_stack=True) as prof:
        step()
    roots = prof.profiler.kineto_results.experimental_event_tree()
    allocs = sorted((ev for root in roots for ev in _walk(root)
                     if ev.tag == torch._C._profiler._EventType.Allocation
                     and ev.extra_fields.device.type == "cpu"),
                    key=lambda ev: (ev.start_time_ns, ev.extra_fields.id))
    namer = _Namer()
    names = {id(ev): namer.describe(ev) for ev in allocs if ev.extra_fields.alloc_size > 0}
    trace = MemoryTrace(allocations=len(names))
    live: dict = {}  # ptr -> allocation event
    total = peak = 0
    peak_live: dict = {}
    for ev in allocs:
        f = ev.extra_fields
        total += f.alloc_size
        if f.alloc_size > 0:
            live[f.ptr] = ev
        else:
            live.pop(f.ptr, None)  # a block allocated before the step: only its bytes count
        if total > peak:
            peak, peak_live = total, dict(live)
    trace.peak_bytes, trace.end_bytes = peak, total

    def blocks(events):
        out = [Block(ev.extra_fields.alloc_size, _phase_at(ev.start_time_ns), *names[id(ev)])
               for ev in events]
        return sorted(out, key=lambda b: -b.bytes)
    trace.live_at_peak, trace.live_at_end = blocks(peak_live.values()), blocks(live.values())
    return trace


def training_step(model, batch: dict, loss_of=lambda out: out[1], traced: bool = True):
    """One forward + backward of `model(**batch)`, gradients set to None first so the step
    allocates them as a real step does: its MemoryTrace, or None when not `traced` (a warm-up:
    never profile a compilation, its Python events are many)."""
    model.zero_grad(set_to_none=True)

    def step():
        with phase("forward"):
            loss = loss_of(model(**batch))
        with phase("backward"):
            loss.backward()
    if not traced:
        step()
        return None
    return memory_trace(step)
