"""Live values at a graph break: how to rebuild each stack slot and local after the graph ran.

    specs = LiveSpecs(tx, outputs)       # `outputs`: the graph's output tensors, appended to
    spec = specs.spec(var)               # LiveSpec("out", OutputSpec tensor 3), ("source", L['x'])
    value = spec.rebuild(outputs, symbol_values, L, G, memo={})

Tensors computed by the graph become graph outputs; inputs are read again from their sources
(after in-place writes were copied back); containers are rebuilt item by item, sharing objects
the frame shared (one memo per break). A value that cannot be rebuilt is Unsupported.
"""

from __future__ import annotations

import types
from dataclasses import dataclass

from capture.errors import Unsupported
from capture.variables import (
    BoundMethodVariable,
    ConstVariable,
    ContextExitVariable,
    DictVariable,
    GeneratorVariable,
    IteratorVariable,
    ListVariable,
    NullVariable,
    ObjectVariable,
    SizeVariable,
    SymBoolVariable,
    SymFloatVariable,
    SymIntVariable,
    TensorItemVariable,
    TensorMethodVariable,
    TensorVariable,
    StructSeqVariable,
    TupleVariable,
    UserObjectVariable,
    Variable,
)


class _Null:
    """The NULL slot of a call site, rebuilt: the resume prologue pushes a real NULL there."""

    def __repr__(self) -> str:
        return "NULL"


NULL_VALUE = _Null()


class IterItems(tuple):
    """A loop's remaining items: passed as a tuple, turned back into an iterator by GET_ITER."""


class GradModeExit:
    """The `__exit__` of a `torch.no_grad()`/`enable_grad()` block a break resumes inside.
    The resume prologue calls it with no arguments to re-enter the block (grad mode `inside`);
    the block's end calls it with the exception info to leave (grad mode `restore`). Four
    instances, so guards can hold their identity."""

    def __init__(self, inside: bool, restore: bool):
        self.inside = inside
        self.restore = restore

    def __call__(self, *exc) -> bool:
        import torch

        torch.set_grad_enabled(self.restore if exc else self.inside)
        return False

    def __repr__(self) -> str:
        return f"<grad mode {self.inside} block, exit to {self.restore}>"


GRAD_MODE_EXITS = {(a, b): GradModeExit(a, b) for a in (True, False) for b in (True, False)}


@dataclass(eq=False)
class LiveSpec:
    """How to rebuild one live value. kind: out (graph output, `value` an OutputSpec), source,
    const, null, iter, tuple, size, list, dict (`value` the keys), attr (`value` the name),
    method, grad_exit (`value` the grad mode it restores), pyobject (`value` the class and
    attribute names: an object built in the compiled code, capture.objects)."""

    kind: str
    value: object = None
    children: tuple = ()

    def rebuild(self, outputs, symbols, L, G, memo: dict):
        if id(self) in memo:
            return memo[id(self)]
        kind = self.kind
        if kind == "pyobject":   # made before its attributes: they may refer back to it
            from capture.objects import set_attributes

            cls, names = self.value
            obj = memo[id(self)] = cls.__new__(cls)
            set_attributes(obj, names, [c.rebuild(outputs, symbols, L, G, memo)
                                        for c in self.children])
            return obj
        if kind == "out":
            value = self.value.rebuild(outputs, symbols)
        elif kind == "source":
            value = self.value.read(L, G)
        elif kind == "const":
            value = self.value
        elif kind == "null":
            value = NULL_VALUE
        elif kind == "grad_exit":
            value = GRAD_MODE_EXITS[self.value]
        else:
            value = self._rebuild_container([c.rebuild(outputs, symbols, L, G, memo)
                                             for c in self.children])
        memo[id(self)] = value
        return value

    def _rebuild_container(self, items: list):
        kind = self.kind
        if kind == "tuple":
            return tuple(items)
        if kind == "structseq":
            return self.value(items)
        if kind == "iter":
            return IterItems(items)
        if kind == "size":
            import torch

            return torch.Size(items)
        if kind == "list":
            return items
        if kind == "dict":
            return dict(zip(self.value, items))
        if kind == "attr":
            return getattr(items[0], self.value)
        return types.MethodType(items[0], items[1])

    def has_symbols(self) -> bool:
        if self.kind == "out":
            return _spec_has_symbols(self.value)
        return any(c.has_symbols() for c in self.children)


def _spec_has_symbols(spec) -> bool:
    return spec.kind == "sym" or any(_spec_has_symbols(c) for c in spec.children)


class LiveSpecs:
    """LiveSpecs of one break's values; tensors computed by the graph are added to `outputs`."""

    def __init__(self, tx, outputs: list):
        self.tx = tx
        self.outputs = outputs
        self.memo: dict = {}

    def spec(self, var: Variable) -> LiveSpec:
        known = self.memo.get(id(var))
        if known is None and isinstance(var, UserObjectVariable):
            known = self.memo[id(var)] = LiveSpec("pyobject", (var.cls, tuple(var.attrs)))
            known.children = tuple(self.spec(v) for v in var.attrs.values())
        if known is None:
            known = self.memo[id(var)] = self._spec(var)
        return known

    def _out(self, var: Variable) -> LiveSpec:
        return LiveSpec("out", self.tx.output_spec(var, self.outputs))

    def _spec(self, var: Variable) -> LiveSpec:
        if isinstance(var, NullVariable):
            return LiveSpec("null")
        if isinstance(var, TensorVariable):
            if var.source is not None and var.input_node is not None:
                return LiveSpec("source", var.source)  # in-place writes are copied back first
            return self._out(var)
        if isinstance(var, (SymIntVariable, SymBoolVariable, TensorItemVariable)):
            return self._out(var)
        if isinstance(var, SymFloatVariable) and var.source is not None:
            return LiveSpec("source", var.source)   # a float argument, read again
        if isinstance(var, SymFloatVariable):
            return self._out(var)
        if isinstance(var, ConstVariable):
            return LiveSpec("const", var.value)
        if isinstance(var, ObjectVariable):
            if var.source is not None:
                return LiveSpec("source", var.source)
            return LiveSpec("const", var.value)
        if isinstance(var, (TupleVariable, ListVariable, DictVariable)) and var.source is not None:
            return LiveSpec("source", var.source)
        if isinstance(var, StructSeqVariable):
            return LiveSpec("structseq", var.tuple_type, tuple(self.spec(v) for v in var.items))
        if isinstance(var, (TupleVariable, ListVariable)):
            kind = "size" if isinstance(var, SizeVariable) else (
                "list" if isinstance(var, ListVariable) else "tuple")
            return LiveSpec(kind, None, tuple(self.spec(v) for v in var.items))
        if isinstance(var, DictVariable):
            return LiveSpec("dict", tuple(var.items),
                            tuple(self.spec(v) for v in var.items.values()))
        if isinstance(var, GeneratorVariable):
            raise Unsupported("a generator being consumed cannot be passed to the resumed code")
        if isinstance(var, IteratorVariable):
            rest = var.items[var.position:]
            return LiveSpec("iter", None, tuple(self.spec(v) for v in rest))
        if isinstance(var, ContextExitVariable) and var.context.kind == "null":
            raise Unsupported("a break inside a `with contextlib.nullcontext()` block is not "
                              "resumed")
        if isinstance(var, ContextExitVariable) and var.context.kind == "generator":
            raise Unsupported("a break inside a @contextmanager block is not resumed (its "
                              "generator ran in the graph before the break)")
        if isinstance(var, ContextExitVariable) and var.context.grad_enabled is not None:
            return LiveSpec("grad_exit", (bool(var.context.grad_enabled),
                                          bool(var.context.saved)))
        if isinstance(var, TensorMethodVariable):
            return LiveSpec("attr", var.name, (self.spec(var.tensor),))
        if isinstance(var, BoundMethodVariable) and isinstance(var.fn, ConstVariable):
            return LiveSpec("attr", var.fn.value, (self.spec(var.self_var),))  # list.append
        if isinstance(var, BoundMethodVariable):
            return LiveSpec("method", None, (self.spec(var.fn), self.spec(var.self_var)))
        raise Unsupported(f"a live {type(var).__name__} cannot be passed to the resumed code")


__all__ = ["GRAD_MODE_EXITS", "GradModeExit", "IterItems", "LiveSpec", "LiveSpecs", "NULL_VALUE"]
