"""translate(fn, args, kwargs) -> Capture: run the interpreter on one call and package the result.

    cap = translate(model.forward.__func__, (model, x), {})
    cap.graph        # torch-level fx.Graph: placeholders (inputs, then params/buffers), one output
    cap.guards       # guards.GuardSet (shape guards live in cap.env)
    cap.inputs       # [L['x'], L['self'].wte.weight, ...]  one Source per placeholder
    cap.output       # OutputSpec tree to rebuild the Python return value
    cap.mutated      # [(input index, output index)]: graph inputs written in place
    cap.output_views # capture.aliasing.OutputView: outputs re-derived as views at run time

Frame locals `L` at run time hold the bound arguments plus the function's closure contents
(by free-variable name); `G` is the function's globals.
"""

from __future__ import annotations

import builtins
import dataclasses
import inspect
import time
import types
import weakref
from dataclasses import dataclass, field

import torch
import torch.fx as fx

from capture import calls
from capture.aliasing import aliasing_conflict, output_views
from capture.builder import wrap
from capture.errors import CaptureError, Unsupported
from capture.functionalize import prune_rederived
from capture.graph import GraphState
from capture.interpreter import TORCH_DIR, Frame
from capture.resume import FrameBreak, partial_capture
from capture.resume_relations import apply as apply_relations
from capture.sources import DefaultDtypeSource, ModuleGlobalSource
from capture.variables import (
    CellVariable,
    ConstVariable,
    DictVariable,
    ListVariable,
    NewObjectVariable,
    ObjectVariable,
    SymBoolVariable,
    SymFloatVariable,
    SymIntVariable,
    TensorItemVariable,
    TensorVariable,
    StructSeqVariable,
    TupleVariable,
    UserObjectVariable,
    Variable,
)
from capture.objects import set_attributes
from guards import GuardSet, IdentityGuard
from symbolic import GlobalSource, LocalSource, ShapeEnv, ShapeError, Source

MAX_STEPS = 2_000_000
_LAZY_FLAGS = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
               | inspect.CO_ITERABLE_COROUTINE)


@dataclass(frozen=True)
class OutputSpec:
    """How to rebuild one returned value: kind is tensor/const/sym/tuple/list/dict/object."""

    kind: str
    value: object = None          # output index, constant, sympy expr, class, or dict keys
    children: tuple = ()

    def rebuild(self, outputs, symbol_values, memo: dict | None = None):
        """The value; `memo` (one per call) keeps each rebuilt object one object."""
        if self.kind == "tensor":
            return outputs[self.value]
        if self.kind == "const":
            return self.value
        if self.kind == "sym":
            return int(self.value.xreplace(symbol_values))
        if self.kind == "item":   # a Python scalar read from a 0-d output (torch.allclose)
            return self.value(self.children[0].rebuild(outputs, symbol_values, memo))
        memo = {} if memo is None else memo
        if self.kind == "pyobject":   # value: (class, attribute names, object key)
            return _rebuild_object(self, outputs, symbol_values, memo)
        items = [c.rebuild(outputs, symbol_values, memo) for c in self.children]
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
        return build_object(cls, dict(zip(names, items)))


def _rebuild_object(spec: OutputSpec, outputs, symbol_values, memo: dict):
    """A tracked object (capture.objects): made once per call (cycles and sharing included),
    then its attributes set in order."""
    cls, names, key = spec.value
    if key in memo:
        return memo[key]
    obj = memo[key] = cls.__new__(cls)
    values = [c.rebuild(outputs, symbol_values, memo) for c in spec.children]
    set_attributes(obj, names, values)
    return obj


def build_object(cls: type, values: dict):
    """An instance of the dataclass or namedtuple `cls` with these field values; fields the
    constructor does not take (`field(init=False)`) are set after it, as the program did."""
    if not dataclasses.is_dataclass(cls):
        return cls(**values)
    taken = {f.name for f in dataclasses.fields(cls) if f.init}
    obj = cls(**{k: v for k, v in values.items() if k in taken})
    for name, value in values.items():
        if name not in taken:
            object.__setattr__(obj, name, value)  # frozen dataclasses included
    return obj


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
    output_views: tuple = ()   # capture.aliasing.OutputView per output that is a view
    grad_writes: frozenset = frozenset()   # inputs written with grad enabled (leaf check)
    # Some op was recorded with grad enabled (`with torch.enable_grad():` in a call made with
    # grad disabled): the graph must run with grad enabled; ops of no-grad regions are detached.
    grad_recorded: bool = False
    # (target, name, OutputSpec): writes replayed after the graph, in order, sharing the
    # output's rebuilt objects: an object built in the compiled code stored on outer state
    # (`self.cache = Cache()`: target the Source of `self`; `CACHE = Cache()`: the globals dict).
    effects: tuple = ()

    def finish_call(self, outputs, symbol_values, L, G):
        """The call's result after the graph ran: effects replayed, then the output rebuilt."""
        memo: dict = {}
        for target, name, spec in self.effects:
            value = spec.rebuild(outputs, symbol_values, memo)
            if isinstance(target, dict):
                target[name] = value
            else:
                setattr(target.read(L, G), name, value)
        return self.output.rebuild(outputs, symbol_values, memo)

    @property
    def output_structure(self) -> OutputSpec:
        return self.output


class Translation:
    """The state of one capture shared by its frames: graph, root globals, step budget."""

    def __init__(self, root_globals: dict, dynamic: bool):
        self.state = GraphState(dynamic=dynamic)
        self.state.tx = self   # iteration and truth of tracked objects inline their dunders
        self.root_globals = root_globals
        self.user_inputs = 0
        self.steps = 0
        # (id of a globals dict, name) -> (the dict, Variable): a tracked object stored in a
        # global, replayed after the graph (Capture.effects)
        self.global_writes: dict = {}
        self.object_keys: dict = {}   # id of a tracked object -> (key, the Variable)
        self.building: set = set()    # keys of tracked objects whose spec was made

    def count_step(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Unsupported(f"more than {MAX_STEPS} bytecode steps (a very long loop?)")

    def load_global(self, f_globals: dict, name: str) -> Variable:
        written = self.global_writes.get((id(f_globals), name))
        if written is not None:
            return written[1]
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

    def new_frame(self, code, f_globals, f_locals, cells, depth=0, parent=None) -> Frame:
        """A Frame of this capture (an inlined call's, from capture/calls.py)."""
        return Frame(self, code, f_globals, f_locals, cells, depth, parent)

    def output_spec(self, var: Variable, outputs: list) -> OutputSpec:
        """How the value `var` is rebuilt from the graph's `outputs` (appended to) at run time."""
        return _output_spec(self, var, outputs)


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
    """`fn`'s signature as its code binds arguments (never the `__wrapped__` function's), with
    its defaults as they are now (a cached signature is redone when they were reassigned)."""
    cached = _SIGNATURES.get(fn)
    defaults = (fn.__defaults__, getattr(fn, "__kwdefaults__", None))
    if cached is None or cached[1][0] is not defaults[0] or cached[1][1] is not defaults[1]:
        cached = _SIGNATURES[fn] = (inspect.signature(fn, follow_wrapped=False), defaults)
    return cached[0]


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
    if fn.__code__.co_flags & _LAZY_FLAGS:  # calling it returns a generator/coroutine object
        raise Unsupported(f"{fn.__qualname__} is a generator or coroutine function: it runs "
                          "eagerly (its body runs only as its result is consumed)")
    tx = Translation(fn.__globals__, dynamic)
    state = tx.state
    # Factory calls without a dtype and Python-float promotion read torch's default dtype.
    default_dtype = torch.get_default_dtype()
    state.guard(IdentityGuard, DefaultDtypeSource(), id(default_dtype), repr(default_dtype))
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
        apply_relations(state, code, f_locals)  # a resume function: sizes its caller knew equal
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
            state.env.asserts_as_guards = False
            point = partial_capture(tx, brk, outputs)
            spec = OutputSpec("const", None)
        else:
            state.env.asserts_as_guards = False  # later stages' checks are runtime asserts
            spec = _output_spec(tx, result, outputs)
        effects = state.attr_writes.finish(state, wrap, lambda var: _output_spec(tx, var, outputs))
        effects += [(f_globals, name, _output_spec(tx, value, outputs))
                    for (_, name), (f_globals, value) in tx.global_writes.items()]
        if effects and point is not None:
            raise Unsupported(f"an object built in the compiled code stored on outer state "
                              f"(.{effects[0][1]}) before a break", point.where, point.line)
    except ShapeError as exc:
        raise Unsupported(f"size check fails for these inputs: {exc}", state.where,
                          state.line) from None
    views = output_views(state, outputs)
    mutated, grad_writes = [], set()
    for i, var in enumerate(state.input_vars):
        if var.node is not var.input_node:
            mutated.append((i, len(outputs)))
            outputs.append(var)
            if getattr(var, "grad_write", False):
                grad_writes.add(i)
    if mutated:   # the graph treats inputs as independent values: aliased ones break here
        conflict = aliasing_conflict(mutated, [src.read(local_values, fn.__globals__)
                                               for src in state.inputs], state.inputs)
        if conflict is not None:
            raise Unsupported(conflict)
    state.output(outputs)
    prune_rederived(state.graph)
    state.graph.lint()
    return Capture(state.graph, state.guards, state.env, list(state.inputs), spec, mutated,
                   tx.user_inputs, time.perf_counter() - start, point, views,
                   frozenset(grad_writes), state.grad_recorded, tuple(effects))


def _output_spec(tx: Translation, var: Variable, outputs: list) -> OutputSpec:
    if isinstance(var, TensorVariable):
        for i, existing in enumerate(outputs):
            if existing.node is var.node:
                return OutputSpec("tensor", i)
        outputs.append(var)
        return OutputSpec("tensor", len(outputs) - 1)
    if isinstance(var, ConstVariable):
        return OutputSpec("const", var.value)
    if isinstance(var, TensorItemVariable):
        return OutputSpec("item", var.scalar_type, (_output_spec(tx, var.tensor, outputs),))
    if isinstance(var, SymIntVariable):
        return OutputSpec("sym", var.expr)
    if isinstance(var, SymBoolVariable):
        return OutputSpec("const", tx.state.evaluate(var.expr))
    if isinstance(var, SymFloatVariable):  # returned as the Python float: specialised
        from capture.symfloat import specialise_float

        return OutputSpec("const", specialise_float(tx.state, var))
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
    if isinstance(var, UserObjectVariable):
        return _object_spec(tx, var, outputs)
    if isinstance(var, ObjectVariable) and (var.value is None or isinstance(
            var.value, _FIXED) or var.source is not None and isinstance(var.value, torch.nn.Module)):
        return OutputSpec("const", var.value)   # the same object at every call of this entry
    raise Unsupported(f"returning a {type(var).__name__} from a compiled region")


# Classes and functions a capture reads are fixed for its entry (read through a source, they
# are guarded by identity: capture.builder.wrap); so is a module read through a source.
_FIXED = (type, types.FunctionType, types.BuiltinFunctionType)


def _object_spec(tx: Translation, var: UserObjectVariable, outputs: list) -> OutputSpec:
    """A tracked object's spec; one met again (shared, or a cycle) refers to the first by key,
    which `rebuild` makes first (depth-first order, the same as here)."""
    key = tx.object_keys.setdefault(id(var), (len(tx.object_keys), var))[0]
    head = (var.cls, tuple(var.attrs), key)
    if key in tx.building:
        return OutputSpec("pyobject", head)
    tx.building.add(key)
    children = tuple(_output_spec(tx, v, outputs) for v in var.attrs.values())
    return OutputSpec("pyobject", head, children)


__all__ = ["Capture", "OutputSpec", "Translation", "frame_locals", "translate"]
