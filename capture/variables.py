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
class SymBoolVariable(Variable):
    """A relation between sizes; a branch decides it through the ShapeEnv (guard or assert)."""

    expr: sympy.Basic

    def python_type(self) -> type:
        return bool


@dataclass(eq=False)
class TensorVariable(Variable):
    """A tensor in the graph: its current fx node and meta. In-place ops rebind `node`.

    `base` is set for views of another TensorVariable (in-place ops on those break the graph);
    `input_node` is the placeholder of a graph input, to detect writes that must be copied back.
    """

    node: fx.Node
    meta: TensorMeta
    source: Source | None = None
    base: TensorVariable | None = None
    input_node: fx.Node | None = None

    def python_type(self) -> type:
        import torch

        return torch.Tensor

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

    def python_type(self) -> type:
        return self.cls


@dataclass(eq=False)
class CellVariable(Variable):
    """A closure cell; `contents` is None while unbound."""

    contents: Variable | None = None


@dataclass(eq=False)
class ContextVariable(Variable):
    """A context manager capture understands (`torch.no_grad()`, `torch.enable_grad()`)."""

    kind: str
    grad_enabled: bool | None = None


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
