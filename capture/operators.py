"""Python operators on Variables: arithmetic, comparisons, `is`, `in`, subscripts, truth.

    s0 * 12             -> SymIntVariable(12*s0)          (sizes stay symbolic)
    x.shape[0] > 8      -> SymBoolVariable(s0 > 8)        (decided only when branched on)
    x + y               -> call_function operator.add(x, y)
    3 + 4               -> Const(7)

A condition is decided (`truth`) through the ShapeEnv, which records a guard with the user's
file:line; branching on a tensor's value is a graph break.
"""

from __future__ import annotations

import operator
import os

import sympy
import torch

from capture.builder import wrap
from capture.errors import MissingKey, Unsupported
from capture.graph import GraphState
from capture.if_conversion import merged
from capture.torch_ops import getitem as tensor_getitem
from capture.variables import (
    ConstVariable,
    DictVariable,
    ListVariable,
    NewObjectVariable,
    UserObjectVariable,
    ObjectVariable,
    SizeVariable,
    SliceVariable,
    SymBoolVariable,
    SymFloatVariable,
    SymIntVariable,
    TensorItemVariable,
    TensorVariable,
    TupleVariable,
    Variable,
    as_sym_or_int,
    sym_value,
)
from capture.sources import ContainsSource
from capture.symfloat import float_binary, number, scalar_operand, specialise_float
from guards import LengthGuard, ValueGuard
from symbolic import FloorDiv, ItemSource

BINARY = {
    "+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
    "//": operator.floordiv, "%": operator.mod, "**": operator.pow, "@": operator.matmul,
    "&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift,
    ">>": operator.rshift,
}
COMPARE = {
    "<": (operator.lt, sympy.Lt), "<=": (operator.le, sympy.Le), ">": (operator.gt, sympy.Gt),
    ">=": (operator.ge, sympy.Ge), "==": (operator.eq, sympy.Eq), "!=": (operator.ne, sympy.Ne),
}


def binary(state: GraphState, symbol: str, a: Variable, b: Variable) -> Variable:
    inplace = symbol.endswith("=") and symbol not in COMPARE
    op = BINARY[symbol[:-1] if inplace else symbol]
    a, b = _tensor_scalars(state, a, b)
    if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
        # `a @ b` is torch.matmul (prims has no operator.matmul entry).
        out = state.call(torch.matmul if op is operator.matmul else op, [a, b], {})
        if inplace and isinstance(a, TensorVariable):
            from capture.functionalize import write

            return write(state, a, out, symbol)
        return out
    if inplace and isinstance(a, ListVariable) and op is operator.add:
        if a.source is not None:
            raise Unsupported("+= on a list the caller passed in (a side effect)")
        a.items.extend(iterate(state, b))
        return a
    if isinstance(a, ConstVariable) and isinstance(b, ConstVariable):
        return _python(op, a.value, b.value)
    symbolic = float_binary(state, op, a, b)
    if symbolic is not None:
        return symbolic
    x, y = as_sym_or_int(a), as_sym_or_int(b)
    if x is not None and y is not None:
        return _sizes(state, op, x, y)
    if isinstance(a, (TupleVariable, ListVariable)) and isinstance(b, (TupleVariable,
                                                                      ListVariable)):
        if op is operator.add:
            kind = ListVariable if isinstance(a, ListVariable) else type(a)
            return kind(list(a.items) + list(b.items))
    if isinstance(a, (TupleVariable, ListVariable)) and op is operator.mul:
        n = as_sym_or_int(b)
        if isinstance(n, int):
            return type(a)(list(a.items) * n)
    fa, fb = as_float(state, a), as_float(state, b)
    if fa is not None and fb is not None:
        return _python(op, fa, fb)
    if _symbolic_number(a) or _symbolic_number(b):  # `[0] * n`, `"%d" % n`: the value, guarded
        return binary(state, symbol, _value_of(state, a), _value_of(state, b))
    raise Unsupported(f"operator {symbol} on {_kind(a)} and {_kind(b)}")


def _symbolic_number(var: Variable) -> bool:
    return isinstance(var, SymIntVariable | SymFloatVariable)


def _value_of(state: GraphState, var: Variable) -> Variable:
    return ConstVariable(number(state, var)) if _symbolic_number(var) else var


def _tensor_scalars(state: GraphState, a: Variable, b: Variable):
    """A SymFloat next to a tensor becomes the 0-d tensor eager's Python scalar acts as."""
    if isinstance(a, TensorVariable) and isinstance(b, SymFloatVariable):
        return a, scalar_operand(state, b, a)
    if isinstance(b, TensorVariable) and isinstance(a, SymFloatVariable):
        return scalar_operand(state, a, b), b
    return a, b


def _kind(var: Variable) -> str:
    return getattr(var.python_type(), "__name__", type(var).__name__)


def _python(op, x, y) -> Variable:
    try:
        return ConstVariable(op(x, y))
    except Exception as exc:  # noqa: BLE001 - eager will raise the same error
        raise Unsupported(f"{op.__name__}({x!r}, {y!r}) raises {type(exc).__name__}") from None


def _sizes(state: GraphState, op, x, y) -> Variable:
    if op is operator.add:
        return sym_value(sympy.sympify(x) + y)
    if op is operator.sub:
        return sym_value(sympy.sympify(x) - y)
    if op is operator.mul:
        return sym_value(sympy.sympify(x) * y)
    if op is operator.floordiv:
        return sym_value(FloorDiv(x, y))
    if op is operator.mod:
        return sym_value(sympy.Mod(x, y))
    if op is operator.pow and isinstance(y, int) and y >= 0:
        return sym_value(sympy.sympify(x) ** y)
    # Floats, shifts, bit ops: specialise the sizes (a guard) and compute in Python.
    return _python(op, specialise(state, x), specialise(state, y))


def specialise(state: GraphState, expr) -> int:
    return state.specialise(expr)


def as_float(state: GraphState, var: Variable):
    """A Python number for a Const, SymInt or SymFloat (specialised with guards), else None."""
    return number(state, var)


def unary(state: GraphState, symbol: str, a: Variable) -> Variable:
    if symbol == "not":
        if isinstance(a, SymBoolVariable):
            return _symbool(sympy.Not(a.expr))
        return ConstVariable(not truth(state, a))
    op = {"-": operator.neg, "+": operator.pos, "~": operator.invert}[symbol]
    if isinstance(a, TensorVariable):
        return state.call(op, [a], {})
    if isinstance(a, SymIntVariable):
        if op is operator.invert:
            return ConstVariable(~specialise(state, a.expr))
        return sym_value(op(a.expr))
    if isinstance(a, SymFloatVariable) and op is not operator.invert:
        return SymFloatVariable(op(a.expr), op(a.hint))
    if isinstance(a, ConstVariable):
        return _python(lambda v, _: op(v), a.value, None)
    raise Unsupported(f"unary {symbol} on {_kind(a)}")


def _symbool(expr) -> Variable:
    if expr in (sympy.true, sympy.false):
        return ConstVariable(bool(expr))
    return SymBoolVariable(expr)


def compare(state: GraphState, symbol: str, a: Variable, b: Variable) -> Variable:
    from capture.objects import identity_compare

    op, rel = COMPARE[symbol]
    same = identity_compare(symbol, a, b)
    if same is not None:
        return same
    a, b = _tensor_scalars(state, a, b)
    if isinstance(a, TensorVariable) or isinstance(b, TensorVariable):
        return state.call(op, [a, b], {})
    if isinstance(a, ConstVariable) and isinstance(b, ConstVariable):
        return _python(op, a.value, b.value)
    x, y = as_sym_or_int(a), as_sym_or_int(b)
    if x is not None and y is not None:
        return _symbool(rel(x, y))
    seq = (TupleVariable, ListVariable)
    if isinstance(a, seq) and isinstance(b, seq) and symbol in ("==", "!="):
        if len(a.items) != len(b.items):
            return ConstVariable(symbol == "!=")
        parts = [compare(state, "==", u, v) for u, v in zip(a.items, b.items)]
        if any(isinstance(p, ConstVariable) and not p.value for p in parts):
            return ConstVariable(symbol == "!=")
        exprs = [p.expr for p in parts if isinstance(p, SymBoolVariable)]
        if not exprs:
            return ConstVariable(symbol == "==")
        both = sympy.And(*exprs)
        return _symbool(both if symbol == "==" else sympy.Not(both))
    if isinstance(a, ConstVariable) and a.value is None or isinstance(b, ConstVariable) \
            and b.value is None:
        return ConstVariable(symbol == "!=")
    fa, fb = as_float(state, a), as_float(state, b)
    if fa is not None and fb is not None:
        return _python(op, fa, fb)
    if _symbolic_number(a) or _symbolic_number(b):
        return compare(state, symbol, _value_of(state, a), _value_of(state, b))
    raise Unsupported(f"comparison {symbol} of {_kind(a)} and {_kind(b)}")


def identical(a: Variable, b: Variable) -> bool:
    if any(isinstance(v, TensorVariable) and merged(v) for v in (a, b)):
        raise Unsupported("`is` on a tensor that an if-converted size branch merged")
    if a is b:
        return True
    if isinstance(a, TensorItemVariable) or isinstance(b, TensorItemVariable):
        raise Unsupported("identity of a value read from a tensor (`allclose(a, b) is True`)")
    values = []
    for v in (a, b):
        if isinstance(v, (ConstVariable, ObjectVariable)):
            values.append(v.value)
        else:
            return False
    return values[0] is values[1]


def contains(state: GraphState, item: Variable, container: Variable) -> bool:
    if isinstance(item, SymIntVariable) and not isinstance(container, TupleVariable
                                                           | ListVariable):
        item = ConstVariable(specialise(state, item.expr))  # a key or member: its value
    if isinstance(container, DictVariable):
        return _const(item, "key") in container.items
    if isinstance(container, (TupleVariable, ListVariable)):
        for candidate in container.items:
            if identical(item, candidate):
                return True
            outcome = compare(state, "==", item, candidate)
            if truth(state, outcome):
                return True
        return False
    if isinstance(container, ConstVariable) and isinstance(item, ConstVariable):
        return item.value in container.value
    if isinstance(container, ObjectVariable) and isinstance(container.value, (set, frozenset)):
        return _const(item, "member") in container.value
    if is_state_dict(container):
        return has_key(state, container, item)
    raise Unsupported(f"`in` on {_kind(container)}")


def _slice_modules(state: GraphState, container: ObjectVariable, index: SliceVariable):
    """`layers[:n]` of a ModuleList/Sequential: the selected modules, each read by its index."""
    modules = container.value
    if not isinstance(modules, (torch.nn.ModuleList, torch.nn.Sequential)):
        raise Unsupported(f"slicing a {type(modules).__name__}")
    if container.source is None:
        raise Unsupported("slicing a module container with no source")
    state.guard(LengthGuard, container.source, len(modules))
    bounds = [_index_part(state, v) for v in (index.start, index.stop, index.step)]
    return ListVariable([wrap(state, modules[i], ItemSource(container.source, i))
                         for i in range(len(modules))[slice(*bounds)]])


def is_state_dict(var: Variable) -> bool:
    """A mapping the program reads from its state (a registry, `os.environ`), not one it built.

    Dicts whose item lookup is dict's own (a Python `__getitem__` is inlined instead), and
    `os.environ`.
    """
    if not isinstance(var, ObjectVariable):
        return False
    value = var.value
    return isinstance(value, os._Environ) or (
        isinstance(value, dict) and type(value).__getitem__ is dict.__getitem__)


def has_key(state: GraphState, container: ObjectVariable, index: Variable) -> bool:
    """`key in d` for a state mapping, guarded: adding or removing that key recompiles."""
    key = _const(index, "key")
    if container.source is None or type(key) not in (str, int):
        raise Unsupported(f"lookup of {key!r} in a {_kind(container)} that cannot be guarded")
    present = key in container.value
    state.guard(ValueGuard, ContainsSource(container.source, key), present)
    return present


def dict_lookup(state: GraphState, container: ObjectVariable, index: Variable) -> Variable:
    """`d[key]` of a state mapping: guards the key's presence and the value read."""
    if not has_key(state, container, index):
        raise MissingKey(f"missing dict key {index.value!r}")
    return wrap(state, container.value[index.value], ItemSource(container.source, index.value))


def _const(var: Variable, what: str):
    if not isinstance(var, ConstVariable):
        raise Unsupported(f"non-constant dict {what}")
    return var.value


def truth(state: GraphState, var: Variable) -> bool:
    """Decide a branch condition: constants directly, sizes through the ShapeEnv (guard)."""
    if isinstance(var, ConstVariable):
        return bool(var.value)
    if isinstance(var, SymBoolVariable):
        return state.evaluate(var.expr)
    if isinstance(var, SymIntVariable):
        return state.evaluate(sympy.Ne(var.expr, 0))
    if isinstance(var, SymFloatVariable):
        return bool(specialise_float(state, var))
    if isinstance(var, TensorVariable):
        raise Unsupported("data-dependent branch on a tensor value")
    if isinstance(var, TensorItemVariable):
        raise Unsupported("data-dependent branch on a value read from a tensor")
    if isinstance(var, (TupleVariable, ListVariable)):
        return bool(var.items)
    if isinstance(var, DictVariable):
        return bool(var.items)
    if isinstance(var, NewObjectVariable):
        return True
    if isinstance(var, UserObjectVariable):   # its __bool__/__len__ inlined
        from capture.objects import object_truth

        return truth(state, object_truth(state.tx, var, None))
    if isinstance(var, ObjectVariable):
        kind = type(var.value)
        if isinstance(var.value, torch.nn.Module):
            # Containers (ModuleList, Sequential) are falsy when empty.
            return len(var.value) > 0 if hasattr(kind, "__len__") else True
        if not (hasattr(kind, "__bool__") or hasattr(kind, "__len__")):
            return True
        raise Unsupported(f"truth value of a {kind.__name__}")
    return True


def subscript(state: GraphState, container: Variable, index: Variable) -> Variable:
    if isinstance(container, TensorVariable):
        return tensor_getitem(state, container, index)
    if isinstance(container, (TupleVariable, ListVariable)):
        if isinstance(index, SliceVariable):
            bounds = [_index_part(state, v) for v in (index.start, index.stop, index.step)]
            items = container.items[slice(*bounds)]
            kind = type(container)
            return kind(items) if kind in (TupleVariable, ListVariable, SizeVariable) else \
                TupleVariable(items)
        i = _index_part(state, index)
        try:
            return container.items[i]
        except (IndexError, TypeError) as exc:
            raise Unsupported(f"indexing a {_kind(container)}: {exc}") from None
    if isinstance(index, SymIntVariable) and (isinstance(container, DictVariable)
                                              or is_state_dict(container)):
        index = ConstVariable(specialise(state, index.expr))  # an int argument as a key
    if isinstance(container, DictVariable):
        key = _const(index, "key")
        if key not in container.items:
            raise MissingKey(f"missing dict key {key!r}")
        return container.items[key]
    if is_state_dict(container):
        return dict_lookup(state, container, index)
    if isinstance(container, NewObjectVariable) and isinstance(index, ConstVariable):
        if isinstance(index.value, str) and index.value in container.fields:
            return container.fields[index.value]
        if isinstance(index.value, int) and issubclass(container.cls, tuple):
            return list(container.fields.values())[index.value]
        if isinstance(index.value, int) and issubclass(container.cls, dict):
            present = [v for v in container.fields.values()
                       if not (isinstance(v, ConstVariable) and v.value is None)]
            return present[index.value]
    if isinstance(container, ObjectVariable) and isinstance(
        container.value, (torch.nn.ModuleList, torch.nn.ModuleDict, torch.nn.Sequential,
                          torch.nn.ParameterList, torch.nn.ParameterDict)
    ):
        if isinstance(index, SliceVariable):
            return _slice_modules(state, container, index)
        key = _index_part(state, index)
        src = ItemSource(container.source, key) if container.source is not None else None
        return wrap(state, container.value[key], src)
    if isinstance(container, ConstVariable) and isinstance(index, ConstVariable):
        return _python(operator.getitem, container.value, index.value)
    raise Unsupported(f"subscript of {_kind(container)}")


def _index_part(state: GraphState, var: Variable):
    if isinstance(var, ConstVariable):
        return var.value
    if isinstance(var, SymIntVariable):
        return specialise(state, var.expr)
    raise Unsupported(f"index of type {_kind(var)}")


def iterate(state: GraphState, var: Variable) -> list[Variable]:
    """The items a `for` loop over `var` sees (loops unroll)."""
    from capture.variables import IteratorVariable

    if isinstance(var, IteratorVariable):
        return var.rest()
    if isinstance(var, UserObjectVariable):   # zip(obj, ...), list(obj): all items at once
        from capture.objects import object_iter

        return object_iter(state.tx, var, None).rest()
    if isinstance(var, (TupleVariable, ListVariable)):
        return list(var.items)
    if isinstance(var, DictVariable):
        return [ConstVariable(k) for k in var.items]
    if isinstance(var, NewObjectVariable) and issubclass(var.cls, tuple):
        return list(var.fields.values())
    if isinstance(var, TensorVariable):
        n = specialise(state, var.meta.shape[0]) if var.meta.ndim else None
        if n is None:
            raise Unsupported("iterating over a 0-d tensor")
        return [tensor_getitem(state, var, ConstVariable(i)) for i in range(n)]
    if isinstance(var, ConstVariable) and isinstance(var.value, (str, tuple, range, bytes)):
        return [ConstVariable(v) for v in var.value]
    if isinstance(var, ObjectVariable) and isinstance(
        var.value, (torch.nn.ModuleList, torch.nn.Sequential, torch.nn.ParameterList)
    ):
        return [wrap(state, m, ItemSource(var.source, i) if var.source else None)
                for i, m in enumerate(var.value)]
    if isinstance(var, ObjectVariable) and isinstance(var.value, torch.nn.ModuleDict):
        return [ConstVariable(k) for k in var.value.keys()]
    raise Unsupported(f"iterating over a {_kind(var)}")


__all__ = ["binary", "compare", "contains", "iterate", "subscript", "truth", "unary"]
