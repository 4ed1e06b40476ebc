"""Splitting a frame at a graph break: the graph so far, the instruction run eagerly, the rest.

    cap = translate(fn, args, kwargs, resume=True)
    cap.resume        # None, or a ResumePoint when an instruction of fn's own frame broke
    value = cap.resume.run(outputs, symbol_values, L, G, ctx)
    # rebuilds the stack and live locals, runs the instruction eagerly (capture.eager_steps),
    # then returns ctx.resume(code, args) (code: fn from the next instruction, see resume_code)

Only a break at an instruction of the root frame that `eager_steps` can run is split (a call
capture could not inline runs whole, eagerly); its stack and live locals must be rebuildable
(capture.live_values), and the instruction must have left capture's state as it found it.
Anything else (inside a try block, a generator frame, a call that mutated state before
breaking) stays a whole-frame fallback: `FrameBreak` is never raised for those.
"""

from __future__ import annotations

import dis
from dataclasses import dataclass

from capture.eager_steps import EAGER_STEPS, EagerStep
from capture.errors import Unsupported
from capture.if_conversion import merged
from capture.live_values import NULL_VALUE, GradModeExit, IterItems, LiveSpecs
from capture.resume_code import live_locals, origin, resume_code, why_not_resumable
from capture.resume_relations import register as register_relations
from capture.resume_relations import size_groups
from capture.variables import (
    BoundMethodVariable,
    CellVariable,
    DictVariable,
    LazyListVariable,
    ListVariable,
    NewObjectVariable,
    TensorMethodVariable,
    TensorVariable,
    TupleVariable,
    UserObjectVariable,
)


# ---------------------------------------------------------------------- checkpoints
def _mark(var) -> tuple | None:
    """What a failed call could have changed in `var` itself (None: nothing to watch)."""
    if isinstance(var, LazyListVariable):
        return (var,)  # never mutated by capture; reading its items must not load them
    if isinstance(var, TensorVariable):
        return (var, var.node, var.meta)
    if isinstance(var, (TupleVariable, ListVariable)):
        return (var, *var.items)
    if isinstance(var, DictVariable):
        return (var, *var.items, *var.items.values())
    if isinstance(var, NewObjectVariable):
        return (var, *var.fields, *var.fields.values())
    if isinstance(var, UserObjectVariable):
        return (var, *var.attrs, *var.attrs.values())
    if isinstance(var, CellVariable):
        return (var, var.contents)
    return None


def _children(var) -> list:
    if isinstance(var, LazyListVariable):
        return list(var.loaded_items)
    if isinstance(var, (TupleVariable, ListVariable)):
        return list(var.items)
    if isinstance(var, DictVariable):
        return list(var.items.values())
    if isinstance(var, NewObjectVariable):
        return list(var.fields.values())
    if isinstance(var, UserObjectVariable):
        return list(var.attrs.values())
    if isinstance(var, CellVariable):
        return [] if var.contents is None else [var.contents]
    if isinstance(var, BoundMethodVariable):
        return [var.fn, var.self_var]
    if isinstance(var, TensorMethodVariable):
        return [var.tensor]
    return []


def _fingerprint(roots, out: dict) -> None:
    """The marks of every Variable reachable from `roots`, by id."""
    todo = list(roots)
    while todo:
        var = todo.pop()
        if id(var) in out:
            continue
        out[id(var)] = _mark(var)
        todo += _children(var)


@dataclass
class Checkpoint:
    """The root frame's state before a call, and what the call could mutate."""

    stack: list
    kw_names: tuple
    locals: dict
    nodes: set
    grad_enabled: bool
    attr_writes: dict
    marks: dict

    @staticmethod
    def _roots(frame) -> list:
        state = frame.state
        return [*frame.stack, *frame.locals.values(), *frame.cells.values(), *state.input_vars]

    @classmethod
    def take(cls, frame) -> Checkpoint:
        state = frame.state
        marks: dict = {}
        _fingerprint(cls._roots(frame), marks)
        return cls(list(frame.stack), frame.kw_names, dict(frame.locals), set(state.graph.nodes),
                   state.grad_enabled, dict(state.attr_writes.writes), marks)

    def restore(self, frame) -> str | None:
        """Undo what the failed call did to the graph; why not (a side effect), or None."""
        state = frame.state
        state.grad_enabled = self.grad_enabled
        frame.kw_names = ()
        if dict(state.attr_writes.writes) != self.attr_writes:
            return "the call wrote attributes before breaking"
        for mark in self.marks.values():
            if mark is not None and not _same(_mark(mark[0]), mark):
                return "the call mutated a value of the frame before breaking"
        for node in reversed(list(state.graph.nodes)):
            if node not in self.nodes and node.op != "placeholder" and not node.users:
                state.graph.erase_node(node)
        return None


def _same(a, b) -> bool:
    return a is not None and len(a) == len(b) and all(x is y for x, y in zip(a, b))


# ---------------------------------------------------------------------- the break
class FrameBreak(Unsupported):
    """A break at an instruction of the root frame that it may resume after (`partial_capture`)."""

    def __init__(self, exc: Unsupported, frame, index: int, before: Checkpoint):
        super().__init__(exc.reason, exc.where, exc.line)
        self.original = exc
        self.frame = frame
        self.index = index
        self.before = before


def break_at(frame, exc: Unsupported, before: Checkpoint) -> Unsupported:
    """The instruction at `frame.ip - 1` broke: a FrameBreak to resume after it, if the state
    allows, else `exc` saying why not."""
    why = before.restore(frame) or _merged_live(frame)
    if why is not None:
        return Unsupported(f"{exc.reason} (not resumed: {why})", exc.where, exc.line)
    return FrameBreak(exc, frame, frame.ip - 1, before)


def _merged_live(frame) -> str | None:
    """A resume function would get a tensor that an if-converted branch merged as a value of
    its own, though in one arm eager's is another live tensor (a later write would miss it)."""
    reachable: dict = {}
    _fingerprint(Checkpoint._roots(frame), reachable)
    if any(mark is not None and isinstance(mark[0], TensorVariable) and merged(mark[0])
           for mark in reachable.values()):
        return "a tensor merged by an if-converted size branch is live"
    return None


# ---------------------------------------------------------------------- the resume point
@dataclass
class ResumePoint:
    """What runs after the graph: `step` eagerly, then the rest of `code` as a resume function."""

    reason: str
    where: str | None
    line: str | None
    code: object                 # the original code object the frame runs
    step: EagerStep
    stack: list                  # LiveSpec per stack slot before the instruction, bottom first
    locals: dict                 # name -> LiveSpec, every local live at some successor
    live: dict                   # successor index -> names of its live locals, in order
    grad_enabled: bool           # grad mode at the break (inside `with torch.no_grad()` ...)
    has_symbols: bool = False
    relations: tuple = ()        # live locals' size slots known equal (capture.resume_relations)

    def run(self, outputs, symbols, L, G, ctx):
        import torch

        memo: dict = {}
        stack = [s.rebuild(outputs, symbols, L, G, memo) for s in self.stack]
        ambient = torch.is_grad_enabled()
        if ambient != self.grad_enabled:
            torch.set_grad_enabled(self.grad_enabled)
        try:
            index = EAGER_STEPS[self.step.opname](self.step, stack, ctx)
        finally:  # the resume prologue re-enters the with blocks around the break
            torch.set_grad_enabled(ambient)
        names = self.live[index]
        values = [self.locals[n].rebuild(outputs, symbols, L, G, memo) for n in names]
        layout = tuple(_slot_kind(v) for v in stack)
        code = resume_code(self.code, index, layout, names, _resume_name(self.code, index))
        register_relations(code, self.relations)
        args = [v for v in stack if v is not NULL_VALUE]
        return ctx.resume(code, [*args, *values], ambient)

    def resume_names(self) -> list[str]:
        """The names of the resume functions this break may continue in."""
        return [_resume_name(self.code, i) for i in self.step.successors]

    def describe(self) -> str:
        at = f" at {self.where}" if self.where else ""
        return f"{self.reason}{at}" + (f": `{self.line}`" if self.line else "")


def _slot_kind(value) -> str:
    if value is NULL_VALUE:
        return "null"
    if isinstance(value, GradModeExit):
        return "with"
    return "iter" if isinstance(value, IterItems) else "value"


def _resume_name(code, index: int) -> str:
    ins = list(dis.get_instructions(code))[index]
    lineno = ins.positions.lineno if ins.positions else None
    return f"{code.co_name}_resume_at_{lineno}" if lineno else f"{code.co_name}_resume"


def partial_capture(tx, brk: FrameBreak, outputs: list) -> ResumePoint:
    """The ResumePoint of `brk`, adding the live tensors to `outputs`; Unsupported if none."""
    try:
        return _partial_capture(tx, brk, outputs)
    except Unsupported as exc:
        raise Unsupported(f"{brk.reason} (not resumed: {exc.reason})", brk.where,
                          brk.line) from None


def _partial_capture(tx, brk: FrameBreak, outputs: list) -> ResumePoint:
    frame = brk.frame
    ins = frame.instructions[brk.index]
    try:
        code, index = origin(frame.code, brk.index)
    except ValueError as exc:
        raise Unsupported(f"resume code: {exc}") from None
    why = why_not_resumable(code, index)
    if why is not None:
        raise Unsupported(why)
    instructions = list(dis.get_instructions(code))
    index_of = {i.offset: n for n, i in enumerate(instructions)}
    step = EagerStep.of(instructions[index], index_of, index + 1, tuple(brk.before.kw_names))
    if step.opname != ins.opname:
        raise Unsupported(f"resume code: {ins.opname} maps to {step.opname}")
    specs = LiveSpecs(tx, outputs)
    stack_specs = [specs.spec(v) for v in brk.before.stack]
    live, local_specs = {}, {}
    for successor in step.successors:
        names = live_locals(code, successor)
        live[successor] = tuple(n for n in code.co_varnames
                                if n in names and n in brk.before.locals)
        for name in live[successor]:
            local_specs[name] = specs.spec(brk.before.locals[name])
    has_symbols = any(s.has_symbols() for s in [*stack_specs, *local_specs.values()])
    relations = size_groups(tx.state.env, {n: brk.before.locals[n] for n in local_specs})
    return ResumePoint(brk.reason, brk.where, brk.line, code, step, stack_specs, local_specs,
                       live, brk.before.grad_enabled, has_symbols, relations)


__all__ = ["Checkpoint", "FrameBreak", "ResumePoint", "break_at", "partial_capture"]
