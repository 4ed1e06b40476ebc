"""The values on capture's stack: what the interpreter knows about each Python value.

    TensorVariable(node=%add, meta=f32[s0, 768])   a tensor in the graph being built
    SymIntVariable(s0*12)                          a symbolic size (stays symbolic)
    SymBoolVariable(s0 > 8)                        a size comparison, decided when branched on
    ConstVariable(3), TupleVariable([...]), ObjectVariable(module, source=L['self'])

Variables that came from the frame's inputs carry the `Source` to read them again, so guards can
name them. Mutable containers (list, dict) are created by the program itself; inputs are copied
into fresh containers and any mutation of those is still local to the capture.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy
import torch.fx as fx

from symbolic import Source, TensorMeta


class Variable:
    """Base of all stack values. `source` is where the value is read at run time, if anywhere."""

    source: Source | None = None

    def python_type(self) -> type:
        return object


@dataclass(eq=False)
class ConstVariable(Variable):
    """A Python constant (number, str, None, dtype, device, Ellipsis, ...) fixed for this entry."""

    value: object
    source: Source | None = None

    def python_type(self) -> type:
        return type(self.value)

    def __repr__(self) -> str:
        return f"Const({self.value!r})"


@dataclass(eq=False)
class SymIntVariable(Variable):
    """An integer size expression (sympy) over the env's symbols."""

    expr: sympy.Expr
    source: Source | None = None

    def python_type(self) -> type:
        return int


@dataclass(eq=False)
class SymFloatVariable(Variable):
    """A Python float computed at run time (capture.symfloat): a sympy `expr` over size symbols
    and float-input symbols, `hint` its value at the example as Python computed it."""

    expr: sympy.Expr
    hint: float
    source: Source | None = None   # set for a float argument itself

    def python_type(self) -> type:
        return float


@dataclass(eq=False)
class SymBoolVariable(Variable):
    """A relation between sizes; a branch decides it through the ShapeEnv (guard or assert)."""

    expr: sympy.Basic

    def python_type(self) -> type:
        return bool


@dataclass(frozen=True)
class ViewStep:
    """One view op from a tensor to its view: `target(parent, *args, **kwargs)[item]`.

    `args` are the call's Variables after the tensor; `item` picks one result of a multi-output
    view (split, chunk, unbind); `grad_enabled` is the grad mode the view was taken under.
    """

    target: object
    args: tuple = ()
    kwargs: tuple = ()            # (name, Variable) pairs
    grad_enabled: bool = True
    item: int | None = None

    @property
    def name(self) -> str:
        return getattr(self.target, "__name__", str(self.target))


@dataclass(eq=False)
class TensorVariable(Variable):
    """A tensor in the graph: its current fx node and meta. In-place ops rebind `node`.

    `base` is the root tensor of a view (never itself a view) and `chain` the view ops from it;
    a root lists its live views (weak references) so a write to the root or to any of its views
    re-derives them all (capture.functionalize). `input_node` is the placeholder of a graph input,
    to detect writes that must be copied back.
    """

    node: fx.Node
    meta: TensorMeta
    source: Source | None = None
    base: TensorVariable | None = None
    input_node: fx.Node | None = None
    chain: tuple = ()
    views: list = field(default_factory=list, repr=False)
    exact_type: type | None = None   # an input's own class (Tensor or nn.Parameter)
    layout: object = None            # an input's capture.layout.InputLayout (example strides)

    def python_type(self) -> type:
        import torch

        return self.exact_type or torch.Tensor

    def derive_view(self, node: fx.Node, meta: TensorMeta, step: ViewStep | None = None):
        """A view of this tensor's root computed by `node`: this tensor's view `step`, or (with
        no step) the same view as this tensor (a no-grad detach of it). Registered with the root."""
        import weakref

        root = self.base or self
        chain = self.chain if step is None else (*self.chain, step)
        view = TensorVariable(node, meta, base=root, chain=chain)
        root.views.append(weakref.ref(view))
        return view

    def __repr__(self) -> str:
        return f"Tensor({self.node.name}: {self.meta})"


@dataclass(eq=False)
class TupleVariable(Variable):
    items: list
    source: Source | None = None

    def python_type(self) -> type:
        return tuple


@dataclass(eq=False)
class StructSeqVariable(TupleVariable):
    """A `torch.return_types.*` result (`x.max(-1)`): a tuple whose fields are also attributes."""

    tuple_type: type = tuple

    def python_type(self) -> type:
        return self.tuple_type


@dataclass(eq=False)
class TensorItemVariable(Variable):
    """A Python scalar eager computes from tensors (`torch.allclose(a, b)`): a 0-d tensor of
    the graph, read as `python_type` after the graph ran. It can only be returned or passed to
    resumed code; branching on it, or any other use, is a graph break there."""

    tensor: TensorVariable
    scalar_type: type = bool

    def python_type(self) -> type:
        return self.scalar_type


@dataclass(eq=False)
class SizeVariable(TupleVariable):
    """`x.shape` / `x.size()`: a tuple of SymInt/Const items that is also a torch.Size."""

    def python_type(self) -> type:
        import torch

        return torch.Size


@dataclass(eq=False)
class ListVariable(Variable):
    items: list
    source: Source | None = None

    def python_type(self) -> type:
        return list


class LazyListVariable(ListVariable):
    """A list the program reads from its state (a global, an attribute, a closure): its length
    and items are wrapped, and so guarded, only once the program reads them. Appending to a
    global log list then guards nothing about its contents (which change at every call).

    Capture never mutates such a list (a side effect: a graph break), so `items` stays as
    loaded.
    """

    def __init__(self, load, source: Source):
        self._load = load
        self._items = None
        self.source = source

    @property
    def items(self) -> list:
        if self._items is None:
            self._items = self._load()
        return self._items

    @items.setter
    def items(self, value: list) -> None:
        self._items = value

    @property
    def loaded_items(self) -> list:
        """The items if the program read them already, else none (without reading them)."""
        return self._items or []

    def __repr__(self) -> str:
        return f"LazyList({self.source})"


@dataclass(eq=False)
class DictVariable(Variable):
    """A dict whose keys are Python constants and values Variables (insertion ordered)."""

    items: dict
    source: Source | None = None

    def python_type(self) -> type:
        return dict


@dataclass(eq=False)
class SliceVariable(Variable):
    start: Variable
    stop: Variable
    step: Variable

    def python_type(self) -> type:
        return slice


@dataclass(eq=False)
class IteratorVariable(Variable):
    """An iterator over already-known items (lists, tuples, ranges, zip, enumerate...)."""

    items: list
    position: int = 0

    def next(self) -> Variable | None:
        if self.position >= len(self.items):
            return None
        self.position += 1
        return self.items[self.position - 1]

    def rest(self) -> list:
        """Every item not yet consumed (a `for` loop unrolled over them consumes them all)."""
        items = self.items[self.position:]
        self.position = len(self.items)
        return items


@dataclass(eq=False)
class GeneratorVariable(IteratorVariable):
    """A generator called in the captured code, run lazily: each `next` resumes its frame (a
    capture.interpreter.Frame) up to its next `yield`, as Python does, so a consumer that stops
    early (an infinite generator and a `break`) never runs the rest."""

    frame: object = None
    done: bool = False

    def next(self) -> Variable | None:
        if self.position >= len(self.items) and not self.done:
            self._resume()
        return super().next()

    def rest(self) -> list:
        while not self.done:
            self._resume()
        return super().rest()

    def _resume(self) -> None:
        env = self.frame.state.env
        outer = env.asserts_as_guards
        self.frame.outer_try = outer  # a check inside it is inside the consumer's try, if any
        result = self.frame.run()
        env.asserts_as_guards = outer
        if isinstance(result, Yielded):
            self.items.append(result.value)
        else:
            self.done = True


@dataclass(frozen=True)
class Yielded:
    """What a generator frame's `run()` returns at a `yield` (it goes on from there later)."""

    value: Variable


@dataclass(eq=False)
class ObjectVariable(Variable):
    """Any other Python object read through: modules, functions, classes, configs, builtins."""

    value: object
    source: Source | None = None

    def python_type(self) -> type:
        return type(self.value)

    def __repr__(self) -> str:
        return f"Object({type(self.value).__name__} at {self.source})"


@dataclass(eq=False)
class UserFunctionVariable(Variable):
    """A function created inside the captured code (MAKE_FUNCTION): code, defaults, cells."""

    code: object
    globals: dict
    name: str
    defaults: tuple = ()
    kwdefaults: dict = field(default_factory=dict)
    closure: tuple = ()  # CellVariables

    def python_type(self) -> type:
        import types

        return types.FunctionType


@dataclass(eq=False)
class BoundMethodVariable(Variable):
    """`obj.method` where `method` is inlined (`fn` a Variable) with `self_var` bound first."""

    fn: Variable
    self_var: Variable


@dataclass(eq=False)
class TensorMethodVariable(Variable):
    """`x.view`: a Tensor method bound to a TensorVariable, keyed by `torch.Tensor.<name>`."""

    name: str
    tensor: TensorVariable


@dataclass(eq=False)
class SuperVariable(Variable):
    """`super()` inside a method of `cls` bound to `self_var`: lookups start after `cls`."""

    cls: type
    self_var: Variable


@dataclass(eq=False)
class NewObjectVariable(Variable):
    """An instance of a dataclass-like class created in the captured code (rebuilt after)."""

    cls: type
    fields: dict
    cls_source: Source | None = None  # where the class was read (its attributes are guarded)

    def python_type(self) -> type:
        return self.cls


@dataclass(eq=False)
class UserObjectVariable(Variable):
    """An instance of a plain Python class constructed in the captured code (capture.objects):
    its instance attributes as Variables, in `__dict__` order. Nothing exists at run time until
    it escapes (returned, stored on outer state, live at a break): then it is rebuilt after the
    graph from `attrs`; one that does not escape costs nothing."""

    cls: type
    attrs: dict = field(default_factory=dict)
    cls_source: Source | None = None  # where the class was read (its attributes are guarded)

    def python_type(self) -> type:
        return self.cls

    def __repr__(self) -> str:
        return f"UserObject({self.cls.__name__}: {', '.join(self.attrs)})"


@dataclass(eq=False)
class CellVariable(Variable):
    """A closure cell; `contents` is None while unbound."""

    contents: Variable | None = None


@dataclass(eq=False)
class ContextVariable(Variable):
    """A context manager capture understands: kind "grad" (`torch.no_grad()`,
    `torch.enable_grad()`: `grad_enabled` inside), "null" (`contextlib.nullcontext(v)`: no
    effect; `with` binds `enter_result`) or "generator" (a @contextlib.contextmanager whose
    `generator` runs to its yield on entry, to its end on exit: capture.contexts)."""

    kind: str
    grad_enabled: bool | None = None
    enter_result: Variable | None = None
    generator: Variable | None = None


@dataclass(eq=False)
class ContextExitVariable(Variable):
    """The `__exit__` BEFORE_WITH pushes: calling it leaves the context."""

    context: ContextVariable


class NullVariable(Variable):
    """The NULL that LOAD_GLOBAL/LOAD_ATTR/PUSH_NULL put below a callable."""

    def __repr__(self) -> str:
        return "NULL"


NULL = NullVariable()


def const(value) -> ConstVariable:
    return ConstVariable(value)


def is_const(var: Variable) -> bool:
    return isinstance(var, ConstVariable)


def as_sym_or_int(var: Variable):
    """The int or sympy expression a ConstVariable(int)/SymIntVariable holds, else None."""
    if isinstance(var, SymIntVariable):
        return var.expr
    if isinstance(var, ConstVariable) and isinstance(var.value, int):
        return var.value
    return None


def sym_value(expr) -> Variable:
    """A SymIntVariable, or a ConstVariable when the expression is a plain integer."""
    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return ConstVariable(int(expr))
    return SymIntVariable(expr)
