"""translate(fn, args, kwargs) -> Capture: run the interpreter on one call and package the result.

    cap = translate(model.forward.__func__, (model, x), {})
    cap.graph        # torch-level fx.Graph: placeholders (inputs, then params/buffers), one output
    cap.guards       # guards.GuardSet (shape guards live in cap.env)
    cap.inputs       # [L['x'], L['self'].wte.weight, ...]  one Source per placeholder
    cap.output       # OutputSpec tree to rebuild the Python return value
    cap.mutated      # [(input index, output index)]: graph inputs written in place

Frame locals `L` at run time hold the bound arguments plus the function's closure contents
(by free-variable name); `G` is the function's globals.
"""

from __future__ import annotations

import builtins
import inspect
import time
import weakref
from dataclasses import dataclass, field

import torch
import torch.fx as fx

from capture import calls
from capture.builder import wrap
from capture.errors import CaptureError, Unsupported
from capture.graph import GraphState
from capture.interpreter import TORCH_DIR, Frame
from capture.resume import FrameBreak, partial_capture
from capture.sources import ModuleGlobalSource
from capture.variables import (
    CellVariable,
    ConstVariable,
    DictVariable,
    ListVariable,
    NewObjectVariable,
    ObjectVariable,
    SymBoolVariable,
    SymIntVariable,
    TensorVariable,
    StructSeqVariable,
    TupleVariable,
    Variable,
)
from guards import GuardSet
from symbolic import GlobalSource, LocalSource, ShapeEnv, ShapeError, Source

MAX_STEPS = 2_000_000


@dataclass(frozen=True)
class OutputSpec:
    """How to rebuild one returned value: kind is tensor/const/sym/tuple/list/dict/object."""

    kind: str
    value: object = None          # output index, constant, sympy expr, class, or dict keys
    children: tuple = ()

    def rebuild(self, outputs, symbol_values):
        if self.kind == "tensor":
            return outputs[self.value]
        if self.kind == "const":
            return self.value
        if self.kind == "sym":
            return int(self.value.xreplace(symbol_values))
        items = [c.rebuild(outputs, symbol_values) for c in self.children]
        if self.kind == "tuple":
            return tuple(items)
        if self.kind == "size":
            return torch.Size(items)
        if self.kind == "list":
            return items
        if self.kind == "dict":
            return dict(zip(self.value, items))
        if self.kind == "structseq":
            return self.value(items)
        cls, names = self.value
        return cls(**dict(zip(names, items)))


@dataclass
class Capture:
    graph: fx.Graph
    guards: GuardSet
    env: ShapeEnv
    inputs: list[Source]
    output: OutputSpec
    mutated: list[tuple[int, int]] = field(default_factory=list)
    user_inputs: int = 0
    capture_seconds: float = 0.0
    resume: object = None    # capture.resume.ResumePoint: the frame goes on after the graph

    @property
    def output_structure(self) -> OutputSpec:
        return self.output


class Translation:
    """The state of one capture shared by its frames: graph, root globals, step budget."""

    def __init__(self, root_globals: dict, dynamic: bool):
        self.state = GraphState(dynamic=dynamic)
        self.root_globals = root_globals
        self.user_inputs = 0
        self.steps = 0

    def count_step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Unsupported(f"more than {MAX_STEPS} bytecode steps (a very long loop?)")

    def load_global(self, f_globals: dict, name: str) -> Variable:
        if name in f_globals:
            if f_globals is self.root_globals:
                source = GlobalSource(name)
            else:
                module = f_globals.get("__name__")
                source = ModuleGlobalSource(module, name) if module else None
            return wrap(self.state, f_globals[name], source)
        if hasattr(builtins, name):
            return ObjectVariable(getattr(builtins, name))
        raise Unsupported(f"name {name!r} is not defined")

    def load_attr(self, obj: Variable, name: str) -> Variable:
        return calls.load_attr(self, obj, name)

    def call(self, fn, args, kwargs, frame) -> Variable:
        return calls.call(self, fn, args, kwargs, frame)


def frame_locals(fn, args: tuple, kwargs: dict, sig=None) -> dict:
    """The `L` dict of a call: bound arguments (defaults applied) plus closure contents.

    Names are the code object's own: a `functools.wraps` wrapper binds its `*args, **kwargs`,
    not the parameters of the function it wraps (which `inspect.signature` reports by default).
    """
    code = fn.__code__
    if sig is None or hasattr(fn, "__wrapped__"):
        sig = code_signature(fn)
    bound = sig.bind(*args, **kwargs)
    bound.apply_defaults()
    local = dict(bound.arguments)
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            local[name] = cell.cell_contents
        except ValueError:
            pass
    return local


def code_signature(fn) -> inspect.Signature:
    """`fn`'s signature as its code binds arguments (never the `__wrapped__` function's)."""
    sig = _SIGNATURES.get(fn)
    if sig is None:
        sig = _SIGNATURES[fn] = inspect.signature(fn, follow_wrapped=False)
    return sig


_SIGNATURES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _fresh_containers(code) -> set[str]:
    """The `*args` tuple and `**kwargs` dict: built for each call, so mutating them is local."""
    names = code.co_varnames[code.co_argcount + code.co_kwonlyargcount:]
    count = bool(code.co_flags & inspect.CO_VARARGS) + bool(code.co_flags & inspect.CO_VARKEYWORDS)
    return set(names[:count])


def translate(fn, args: tuple = (), kwargs: dict | None = None, *, dynamic: bool = True,
              resume: bool = False) -> Capture:
    """Capture one call of the plain function `fn` (for a method, pass its `__func__` + self).

    With `resume=True`, a break at a call of `fn`'s own frame may end the graph there instead:
    the Capture's `resume` (a capture.resume.ResumePoint) says how the frame goes on.
    """
    start = time.perf_counter()
    kwargs = kwargs or {}
    if not hasattr(fn, "__code__"):
        raise CaptureError(f"can only capture Python functions, got {type(fn).__name__}")
    tx = Translation(fn.__globals__, dynamic)
    state = tx.state
    local_values = frame_locals(fn, args, kwargs)
    code = fn.__code__
    f_locals, cells = {}, {}
    fresh = _fresh_containers(code)
    try:
        for name, value in local_values.items():
            var = wrap(state, value, LocalSource(name), user=True)
            if name in fresh:
                var.source = None  # its items keep their sources (and guards)
            if name in code.co_freevars:
                cells[name] = CellVariable(var)
                cells[name].external = True
            else:
                f_locals[name] = var
        tx.user_inputs = len(state.input_vars)
        for name in code.co_freevars:
            cells.setdefault(name, CellVariable(None))
        frame = Frame(tx, code, fn.__globals__, f_locals, cells)
        # torch's own frames (DDP.forward ...) stay whole: their children compile on their own.
        frame.resumable = resume and not code.co_filename.startswith(TORCH_DIR)
        outputs: list[TensorVariable] = []
        point = None
        try:
            result = frame.run()
        except FrameBreak as brk:
            point = partial_capture(tx, brk, outputs)
            spec = OutputSpec("const", None)
        else:
            spec = _output_spec(tx, result, outputs)
        state.attr_writes.finish(state)
    except ShapeError as exc:
        raise Unsupported(f"size check fails for these inputs: {exc}", state.where,
                          state.line) from None
    mutated = []
    for i, var in enumerate(state.input_vars):
        if var.node is not var.input_node:
            mutated.append((i, len(outputs)))
            outputs.append(var)
    state.output(outputs)
    state.graph.lint()
    return Capture(state.graph, state.guards, state.env, list(state.inputs), spec, mutated,
                   tx.user_inputs, time.perf_counter() - start, point)


def _output_spec(tx: Translation, var: Variable, outputs: list) -> OutputSpec:
    if isinstance(var, TensorVariable):
        for i, existing in enumerate(outputs):
            if existing.node is var.node:
                return OutputSpec("tensor", i)
        outputs.append(var)
        return OutputSpec("tensor", len(outputs) - 1)
    if isinstance(var, ConstVariable):
        return OutputSpec("const", var.value)
    if isinstance(var, SymIntVariable):
        return OutputSpec("sym", var.expr)
    if isinstance(var, SymBoolVariable):
        return OutputSpec("const", tx.state.evaluate(var.expr))
    if isinstance(var, StructSeqVariable):
        return OutputSpec("structseq", var.tuple_type,
                          tuple(_output_spec(tx, v, outputs) for v in var.items))
    if isinstance(var, (TupleVariable, ListVariable)):
        from capture.variables import SizeVariable

        kind = "size" if isinstance(var, SizeVariable) else (
            "list" if isinstance(var, ListVariable) else "tuple")
        return OutputSpec(kind, None, tuple(_output_spec(tx, v, outputs) for v in var.items))
    if isinstance(var, DictVariable):
        return OutputSpec("dict", tuple(var.items),
                          tuple(_output_spec(tx, v, outputs) for v in var.items.values()))
    if isinstance(var, NewObjectVariable):
        names = tuple(var.fields)
        children = tuple(_output_spec(tx, v, outputs) for v in var.fields.values())
        return OutputSpec("object", (var.cls, names), children)
    if isinstance(var, ObjectVariable) and var.value is None:
        return OutputSpec("const", None)
    raise Unsupported(f"returning a {type(var).__name__} from a compiled region")


__all__ = ["Capture", "OutputSpec", "Translation", "frame_locals", "translate"]
