"""Python builtins called inside captured code: one rule per builtin in `BUILTIN_RULES`.

    len(x.shape) -> Const(2)      int(x.size(1)) -> SymInt(s1)      range(n) -> Const(range(n))
    zip(a, b)    -> an iterator over already-known pairs (loops over it unroll)

A rule gets the calling frame `tx` (for the graph state, attribute reads and iteration) and the
argument Variables; builtins without a rule, and those with side effects (print, id), break.
"""

from __future__ import annotations

import builtins
import inspect
import math
import operator
import types

import sympy
import torch

from capture.errors import Unsupported
from capture.operators import as_float, binary, compare, iterate, specialise, truth, unary
from capture.sources import TypeOfSource
from capture.symfloat import math_call, number, to_float
from capture.variables import (
    ConstVariable,
    DictVariable,
    IteratorVariable,
    ListVariable,
    NewObjectVariable,
    ObjectVariable,
    SizeVariable,
    SymBoolVariable,
    SymFloatVariable,
    SymIntVariable,
    TensorVariable,
    TupleVariable,
    Variable,
    as_sym_or_int,
    sym_value,
)

BUILTIN_RULES: dict = {}


def rule(*fns):
    def register(impl):
        for fn in fns:
            BUILTIN_RULES[fn] = impl
        return impl

    return register


def _consts(args) -> list | None:
    if all(isinstance(a, ConstVariable) for a in args):
        return [a.value for a in args]
    return None


@rule(len)
def _len(tx, args, kwargs):
    (v,) = args
    if isinstance(v, (TupleVariable, ListVariable)):
        return ConstVariable(len(v.items))
    if isinstance(v, DictVariable):
        return ConstVariable(len(v.items))
    if isinstance(v, TensorVariable):
        if v.meta.ndim == 0:
            raise Unsupported("len() of a 0-d tensor")
        return sym_value(v.meta.shape[0])
    if isinstance(v, ConstVariable):
        return ConstVariable(len(v.value))
    if isinstance(v, ObjectVariable) and isinstance(v.value, torch.nn.Module):
        return ConstVariable(len(v.value))
    raise Unsupported(f"len() of {type(v).__name__}")


def _type_of(v: Variable) -> type:
    if isinstance(v, (ConstVariable, ObjectVariable)):
        return type(v.value)
    return v.python_type()


@rule(isinstance)
def _isinstance(tx, args, kwargs):
    v, cls = args
    classes = _class_arg(cls)
    return ConstVariable(issubclass(_type_of(v), classes))


@rule(callable)
def _callable(tx, args, kwargs):
    (v,) = args
    if isinstance(v, (ConstVariable, ObjectVariable)):
        return ConstVariable(callable(v.value))
    if isinstance(v, NewObjectVariable):
        return ConstVariable(any("__call__" in vars(k) for k in v.cls.__mro__))
    plain = (TensorVariable, SymIntVariable, SymBoolVariable, TupleVariable, ListVariable,
             DictVariable, IteratorVariable)
    return ConstVariable(not isinstance(v, plain))


@rule(inspect.signature)
def _signature(tx, args, kwargs):
    """The signature of a function whose identity is fixed (guarded, or a method of one)."""
    from capture.variables import BoundMethodVariable

    if kwargs or len(args) != 1:
        raise Unsupported("inspect.signature() with options")
    (v,) = args
    bound = isinstance(v, BoundMethodVariable) and isinstance(v.fn, ObjectVariable)
    fn = v.fn.value if bound else getattr(v, "value", None)
    if not isinstance(v, ObjectVariable | BoundMethodVariable) or not callable(fn):
        raise Unsupported(f"inspect.signature() of {type(v).__name__}")
    sig = inspect.signature(fn)
    if bound:  # like inspect.signature of the bound method: `self` is not a parameter
        sig = sig.replace(parameters=list(sig.parameters.values())[1:])
    return ConstVariable(sig)


@rule(issubclass)
def _issubclass(tx, args, kwargs):
    a, b = args
    return ConstVariable(issubclass(_class_arg(a), _class_arg(b)))


def _class_arg(cls: Variable):
    if isinstance(cls, (ObjectVariable, ConstVariable)) and isinstance(cls.value, (type, tuple)):
        return cls.value
    if isinstance(cls, TupleVariable):
        return tuple(_class_arg(c) for c in cls.items)
    raise Unsupported("isinstance() with a non-class argument")


@rule(range)
def _range(tx, args, kwargs):
    values = []
    for a in args:
        x = as_sym_or_int(a)
        if x is None:
            raise Unsupported("range() of a non-integer")
        values.append(specialise(tx.state, x))
    return ConstVariable(range(*values))


@rule(enumerate)
def _enumerate(tx, args, kwargs):
    start = args[1] if len(args) > 1 else kwargs.get("start", ConstVariable(0))
    items = iterate(tx.state, args[0])
    return IteratorVariable([
        TupleVariable([binary(tx.state, "+", start, ConstVariable(i)), item])
        for i, item in enumerate(items)
    ])


@rule(zip)
def _zip(tx, args, kwargs):
    lists = [iterate(tx.state, a) for a in args]
    return IteratorVariable([TupleVariable(list(t)) for t in zip(*lists)])


@rule(iter)
def _iter(tx, args, kwargs):
    if len(args) == 1 and isinstance(args[0], IteratorVariable):
        return args[0]  # an iterator is its own iterator (a generator stays lazy)
    return IteratorVariable(iterate(tx.state, args[0]))


@rule(next)
def _next(tx, args, kwargs):
    if kwargs or not args or not isinstance(args[0], IteratorVariable):
        raise Unsupported("next() of something other than an iterator")
    item = args[0].next()
    if item is not None:
        return item
    if len(args) == 2:
        return args[1]
    raise Unsupported("next() of an exhausted iterator (StopIteration)")


@rule(reversed)
def _reversed(tx, args, kwargs):
    return IteratorVariable(list(reversed(iterate(tx.state, args[0]))))


@rule(sorted)
def _sorted(tx, args, kwargs):
    values = _consts(iterate(tx.state, args[0]))
    if values is None or kwargs:
        raise Unsupported("sorted() of non-constants")
    return ListVariable([ConstVariable(v) for v in sorted(values)])


def _fold_minmax(tx, args, pick, sym):
    items = iterate(tx.state, args[0]) if len(args) == 1 else list(args)
    if not items:
        raise Unsupported("min()/max() of an empty sequence")
    if any(isinstance(i, TensorVariable) for i in items):
        raise Unsupported("min()/max() over tensors compares tensor values")
    values = _consts(items)
    if values is not None:
        return ConstVariable(pick(values))
    exprs = [as_sym_or_int(i) for i in items]
    if all(e is not None for e in exprs):
        return sym_value(sym(*exprs))
    numbers = [as_float(tx.state, i) for i in items]
    if all(n is not None for n in numbers):
        return ConstVariable(pick(numbers))
    raise Unsupported("min()/max() of mixed values")


@rule(min)
def _min(tx, args, kwargs):
    return _fold_minmax(tx, args, min, sympy.Min)


@rule(max)
def _max(tx, args, kwargs):
    return _fold_minmax(tx, args, max, sympy.Max)


@rule(getattr)
def _getattr(tx, args, kwargs):
    name = _const_str(args[1])
    if len(args) == 3:
        try:
            return tx.load_attr(args[0], name)
        except Unsupported as exc:   # a missing attribute, or AttributeError raised by Python
            if "no attribute" not in exc.reason and not isinstance(
                    getattr(exc, "exception", None), AttributeError):
                raise
            return args[2]
    return tx.load_attr(args[0], name)


@rule(hasattr)
def _hasattr(tx, args, kwargs):
    obj, name = args[0], _const_str(args[1])
    if isinstance(obj, (ObjectVariable, ConstVariable)):
        return ConstVariable(hasattr(obj.value, name))
    if isinstance(obj, NewObjectVariable):
        return ConstVariable(name in obj.fields or hasattr(obj.cls, name))
    if isinstance(obj, TensorVariable):
        return ConstVariable(hasattr(torch.Tensor, name))
    raise Unsupported(f"hasattr() on {type(obj).__name__}")


def _const_str(var):
    if not isinstance(var, ConstVariable) or not isinstance(var.value, str):
        raise Unsupported("attribute name is not a constant string")
    return var.value


@rule(int)
def _int(tx, args, kwargs):
    (v,) = args or [ConstVariable(0)]
    if isinstance(v, SymIntVariable):
        return v
    if isinstance(v, ConstVariable):
        return ConstVariable(int(v.value))
    if isinstance(v, SymBoolVariable):
        return ConstVariable(int(truth(tx.state, v)))
    if isinstance(v, SymFloatVariable):
        return math_call(tx.state, math.trunc, [v]) or ConstVariable(int(number(tx.state, v)))
    raise Unsupported(f"int() of {type(v).__name__}")


@rule(float)
def _float(tx, args, kwargs):
    (v,) = args or [ConstVariable(0.0)]
    if isinstance(v, ConstVariable) and isinstance(v.value, str):
        return ConstVariable(float(v.value))
    symbolic = to_float(tx.state, v)
    if symbolic is not None:
        return symbolic
    value = number(tx.state, v)
    if value is None:
        raise Unsupported(f"float() of {type(v).__name__}")
    return ConstVariable(float(value))


@rule(bool)
def _bool(tx, args, kwargs):
    return ConstVariable(truth(tx.state, args[0]) if args else False)


@rule(tuple)
def _tuple(tx, args, kwargs):
    return TupleVariable(iterate(tx.state, args[0]) if args else [])


@rule(list)
def _list(tx, args, kwargs):
    return ListVariable(iterate(tx.state, args[0]) if args else [])


@rule(dict)
def _dict(tx, args, kwargs):
    items = {}
    if args:
        source = args[0]
        if isinstance(source, DictVariable):
            items.update(source.items)
        else:
            for pair in iterate(tx.state, source):
                key, value = iterate(tx.state, pair)
                items[_key(key)] = value
    items.update(kwargs)
    return DictVariable(items)


def _key(var):
    if not isinstance(var, ConstVariable):
        raise Unsupported("non-constant dict key")
    return var.value


@rule(abs)
def _abs(tx, args, kwargs):
    (v,) = args
    if isinstance(v, TensorVariable):
        return tx.state.call(torch.abs, [v], {})
    if isinstance(v, SymIntVariable):
        return sym_value(sympy.Abs(v.expr))
    if isinstance(v, ConstVariable):
        return ConstVariable(abs(v.value))
    raise Unsupported(f"abs() of {type(v).__name__}")


@rule(sum)
def _sum(tx, args, kwargs):
    total = args[1] if len(args) > 1 else kwargs.get("start", ConstVariable(0))
    for item in iterate(tx.state, args[0]):
        total = binary(tx.state, "+", total, item)
    return total


@rule(all)
def _all(tx, args, kwargs):
    return ConstVariable(all(truth(tx.state, v) for v in iterate(tx.state, args[0])))


@rule(any)
def _any(tx, args, kwargs):
    return ConstVariable(any(truth(tx.state, v) for v in iterate(tx.state, args[0])))


def _fixed_text(var: Variable) -> bool:
    """A class or function: guarded by identity, so its str()/repr() is a constant."""
    value = getattr(var, "value", None)
    return isinstance(var, ObjectVariable) and isinstance(value, type | types.FunctionType)


def _make_pure(fn):
    def impl(tx, args, kwargs):
        if fn in (str, repr) and len(args) == 1 and not kwargs and _fixed_text(args[0]):
            return ConstVariable(fn(args[0].value))
        values = _consts(args)
        kw = _consts(list(kwargs.values()))
        if values is None or kw is None:
            numbers = [number(tx.state, a) for a in args]
            specialisable = fn in (round, pow, divmod) or getattr(fn, "__module__", "") == "math"
            if specialisable and all(n is not None for n in numbers) and not kwargs:
                return ConstVariable(fn(*numbers))
            raise Unsupported(f"{fn.__name__}() of non-constant arguments")
        return ConstVariable(fn(*values, **dict(zip(kwargs, kw))))

    return impl


for _fn in (str, repr, round, divmod, pow, chr, ord):
    BUILTIN_RULES[_fn] = _make_pure(_fn)

def _make_math(fn):
    pure = _make_pure(fn)

    def impl(tx, args, kwargs):
        symbolic = math_call(tx.state, fn, list(args), kwargs)
        return symbolic if symbolic is not None else pure(tx, args, kwargs)

    return impl


for _name in ("sqrt", "ceil", "floor", "log", "log2", "exp", "pow", "gcd", "prod", "isqrt",
              "sin", "cos", "tanh", "fabs", "isfinite", "isinf", "isnan", "erf", "trunc"):
    BUILTIN_RULES[getattr(math, _name)] = _make_math(getattr(math, _name))

_OPERATOR_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*",
                    operator.truediv: "/", operator.floordiv: "//", operator.mod: "%",
                    operator.pow: "**", operator.matmul: "@"}
_OPERATOR_COMPARE = {operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
                     operator.eq: "==", operator.ne: "!="}


def _operator_rule(fn):
    def impl(tx, args, kwargs):
        if fn in _OPERATOR_BINARY:
            return binary(tx.state, _OPERATOR_BINARY[fn], *args)
        if fn is operator.neg:
            return unary(tx.state, "-", *args)
        if fn is operator.getitem:
            from capture.operators import subscript

            return subscript(tx.state, *args)
        return compare(tx.state, _OPERATOR_COMPARE[fn], *args)

    return impl


for _fn in (*_OPERATOR_BINARY, *_OPERATOR_COMPARE, operator.neg, operator.getitem):
    BUILTIN_RULES[_fn] = _operator_rule(_fn)


@rule(builtins.print, builtins.id, builtins.input, builtins.open, builtins.setattr,
      builtins.delattr, builtins.exec, builtins.eval, builtins.globals, builtins.locals,
      builtins.vars)
def _side_effect(tx, args, kwargs):
    raise Unsupported("call to a builtin with side effects (print, id, setattr, ...)")


@rule(type)
def _type(tx, args, kwargs):
    if len(args) != 1:
        raise Unsupported("type() with three arguments")
    v = args[0]
    if isinstance(v, SizeVariable):
        return ObjectVariable(torch.Size)
    # An input's class is guarded (its type or identity): attributes read through it are too.
    source = TypeOfSource(v.source) if getattr(v, "source", None) is not None else None
    return ObjectVariable(_type_of(v), source)
