"""Python objects built inside the captured code: user and library classes (a KV cache).

    cache = DynamicCache(config=cfg)     -> UserObjectVariable(DynamicCache, attrs={...})
    cache.layers.append(layer)           # attributes are Variables: reads, writes, methods inline
    return cache                         # escapes: rebuilt after the graph (capture.translate)

`cls(...)` of a plain Python class (no custom metaclass call, `__new__`, `__setattr__`,
`__getattribute__`, `__slots__` or `__del__`) makes a UserObjectVariable and inlines
`__init__` on it. Attribute lookup follows Python's order: a data descriptor of the class
(a property), then the instance's attributes, then the class (methods bind, staticmethods,
classmethods, plain class values guarded through the class's source), then `__getattr__`.
Dunders the program reaches through syntax (`len`, truth, `iter`, `[]`, `in`, calls) inline
the class's Python method. Anything else (a C-level descriptor, a builtin base class) is a
graph break with the reason.

An object that does not escape leaves nothing behind: its tensors are graph values only if
used. One that escapes is rebuilt by `new_instance`: `cls.__new__(cls)`, then its final
attributes set in their first-write order (the order its `__dict__` has in eager).
"""

from __future__ import annotations

import abc
import collections.abc
import types
from dataclasses import dataclass

from capture.errors import Raised, Unsupported
from capture.variables import (
    BoundMethodVariable,
    ConstVariable,
    GeneratorVariable,
    IteratorVariable,
    ObjectVariable,
    UserObjectVariable,
    Variable,
)

MISSING = object()
_HEAPTYPE = 1 << 9   # Py_TPFLAGS_HEAPTYPE: a class defined by a class statement
_PLAIN_SLOTS = ("__setattr__", "__delattr__", "__getattribute__")


def untracked_reason(cls: type) -> str | None:
    """Why instances of `cls` cannot be tracked as attribute dicts, or None when they can."""
    name = cls.__qualname__
    if type(cls) not in (type, abc.ABCMeta):
        return f"{name} has the metaclass {type(cls).__name__}"
    for klass in cls.__mro__[:-1]:
        if not klass.__flags__ & _HEAPTYPE:
            return f"{name} derives from the builtin {klass.__name__}"
        if vars(klass).get("__slots__"):
            return f"{name} declares __slots__"
    if class_lookup(cls, "__dict__") is MISSING:
        return f"{name} instances have no __dict__ (__slots__)"
    if cls.__new__ is not object.__new__:
        return f"{name} defines __new__"
    for slot in _PLAIN_SLOTS:
        if getattr(cls, slot) is not getattr(object, slot) and not (
                _frozen_dataclass(cls) and slot != "__getattribute__"):
            return f"{name} defines {slot}"
    if hasattr(cls, "__del__"):
        return f"{name} defines __del__ (a finalizer)"
    if getattr(cls, "__abstractmethods__", None):
        return f"{name} is abstract (eager raises TypeError)"
    init = cls.__init__
    if init is not object.__init__ and not isinstance(init, types.FunctionType):
        return f"{name}.__init__ is not a Python function"
    return None


def _frozen_dataclass(cls: type) -> bool:
    """A frozen dataclass: its generated __setattr__/__delattr__ only raise (writes break)."""
    params = getattr(cls, "__dataclass_params__", None)
    return params is not None and params.frozen


def construct_object(tx, cls: type, args: list, kwargs: dict, cls_source, frame) -> Variable:
    """`cls(*args, **kwargs)`: a new tracked object with `__init__` inlined on it."""
    reason = untracked_reason(cls)
    if reason is not None:
        raise Unsupported(f"constructing a {cls.__qualname__} object: {reason}")
    obj = UserObjectVariable(cls, {}, cls_source)
    if cls.__init__ is object.__init__:
        if args or kwargs:
            raise Unsupported(f"{cls.__qualname__}() takes no arguments")
        return obj
    result = tx.call(ObjectVariable(cls.__init__), [obj, *args], kwargs, frame)
    if not (isinstance(result, ConstVariable) and result.value is None):
        raise Unsupported(f"{cls.__qualname__}.__init__ returned a value (eager raises "
                          f"TypeError)")
    return obj


def class_lookup(cls: type, name: str):
    """The attribute `name` as found in the class's MRO dicts (no descriptor applied)."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return vars(klass)[name]
    return MISSING


def _is_data_descriptor(value) -> bool:
    kind = type(value)
    return hasattr(kind, "__set__") or hasattr(kind, "__delete__")


def load_object_attr(tx, obj: UserObjectVariable, name: str, class_attribute) -> Variable:
    """`obj.name` in Python's lookup order (see the module docstring); `class_attribute` is
    capture.calls' lookup of a class attribute bound to `obj` (methods, staticmethods, ...)."""

    if name == "__class__":
        return ObjectVariable(obj.cls, obj.cls_source)
    static = class_lookup(obj.cls, name)
    if static is not MISSING and _is_data_descriptor(static):
        if isinstance(static, property) and isinstance(static.fget, types.FunctionType):
            return tx.call(ObjectVariable(static.fget), [obj], {}, None)
        raise Unsupported(f"attribute {name!r} of a {obj.cls.__qualname__}: a "
                          f"{type(static).__name__} descriptor")
    if name in obj.attrs:
        return obj.attrs[name]
    if name == "__dict__":
        raise Unsupported(f"__dict__ of a {obj.cls.__qualname__} built in the compiled code")
    if static is not MISSING:
        plain = isinstance(static, (types.FunctionType, staticmethod, classmethod, property))
        if not plain and hasattr(type(static), "__get__"):
            raise Unsupported(f"attribute {name!r} of a {obj.cls.__qualname__}: a "
                              f"{type(static).__name__} descriptor")
        return class_attribute(tx, obj, obj.cls, name)
    fallback = class_lookup(obj.cls, "__getattr__")
    if isinstance(fallback, types.FunctionType):
        return tx.call(ObjectVariable(fallback), [obj, ConstVariable(name)], {}, None)
    raise Unsupported(f"{obj.cls.__qualname__} has no attribute {name!r}")


def has_object_attr(tx, obj: UserObjectVariable, name: str) -> bool:
    """`hasattr(obj, name)`: the lookup run as `getattr` would (a property, `__getattr__`);
    an AttributeError it raises means False, as in Python."""
    static = class_lookup(obj.cls, name)
    plain = static is MISSING or not hasattr(type(static), "__get__") or isinstance(
        static, types.FunctionType)
    if plain and (name in obj.attrs or static is not MISSING):
        return True
    if static is MISSING and class_lookup(obj.cls, "__getattr__") is MISSING:
        return False
    try:
        tx.load_attr(obj, name)
    except Raised as exc:
        if isinstance(exc.exception, AttributeError):
            return False
        raise
    return True


def store_object_attr(tx, obj: UserObjectVariable, name: str, value: Variable) -> None:
    """`obj.name = value`: a property's setter inlined, else the instance attribute."""
    if _frozen_dataclass(obj.cls):
        raise Unsupported(f"assignment to .{name} of a frozen {obj.cls.__qualname__} (eager "
                          f"raises FrozenInstanceError)")
    static = class_lookup(obj.cls, name)
    if static is not MISSING and _is_data_descriptor(static):
        if isinstance(static, property) and isinstance(static.fset, types.FunctionType):
            tx.call(ObjectVariable(static.fset), [obj, value], {}, None)
            return
        raise Unsupported(f"assignment to {name!r} of a {obj.cls.__qualname__}: a "
                          f"{type(static).__name__} descriptor")
    obj.attrs[name] = value


def delete_object_attr(obj: UserObjectVariable, name: str) -> None:
    if _frozen_dataclass(obj.cls):
        raise Unsupported(f"del of .{name} of a frozen {obj.cls.__qualname__}")
    static = class_lookup(obj.cls, name)
    if static is not MISSING and _is_data_descriptor(static):
        raise Unsupported(f"del of {name!r} of a {obj.cls.__qualname__}: a descriptor")
    if name not in obj.attrs:
        raise Unsupported(f"del of a missing attribute {name!r} (eager raises AttributeError)")
    del obj.attrs[name]


def dunder(obj: Variable, name: str):
    """The class's Python function `name` (`__len__`, `__iter__`...) for a tracked object."""
    if not isinstance(obj, UserObjectVariable):
        return None
    method = class_lookup(obj.cls, name)
    return method if isinstance(method, types.FunctionType) else None


def call_dunder(tx, obj: UserObjectVariable, name: str, args: list, frame) -> Variable:
    """`type(obj).name(obj, *args)` inlined; a break naming it when the class has none."""
    method = dunder(obj, name)
    if method is None:
        raise Unsupported(f"{obj.cls.__qualname__} built in the compiled code has no Python "
                          f"{name}")
    return tx.call(ObjectVariable(method), [obj, *args], {}, frame)


def object_truth(tx, obj: UserObjectVariable, frame) -> Variable:
    """A value with the truth of `bool(obj)`: `__bool__()`, else `__len__()` (true when not
    0), else True (Python's rule); capture.operators.truth decides it."""
    if dunder(obj, "__bool__") is not None:
        return call_dunder(tx, obj, "__bool__", [], frame)
    if dunder(obj, "__len__") is not None:
        return call_dunder(tx, obj, "__len__", [], frame)
    for name in ("__bool__", "__len__"):
        if class_lookup(obj.cls, name) is not MISSING:
            raise Unsupported(f"truth value of a {obj.cls.__qualname__}: {name} is not Python")
    return ConstVariable(True)


@dataclass(eq=False)
class SequenceIterator(GeneratorVariable):
    """`iter(obj)` by the sequence protocol (`collections.abc.Sequence.__iter__`, or a class
    with `__getitem__` and no `__iter__`): `obj[0]`, `obj[1]`... each when the loop asks, until
    `__getitem__` raises IndexError, as Python does."""

    tx: object = None
    obj: Variable = None

    def _resume(self) -> None:
        index = ConstVariable(len(self.items))
        try:
            item = self.tx.call(ObjectVariable(dunder(self.obj, "__getitem__")),
                        [self.obj, index], {}, None)
        except Raised as exc:
            if not isinstance(exc.exception, IndexError):
                raise
            self.done = True
            return
        self.items.append(item)


def _sequence_protocol(obj: UserObjectVariable) -> bool:
    method = class_lookup(obj.cls, "__iter__")
    if method is collections.abc.Sequence.__iter__:
        return dunder(obj, "__getitem__") is not None
    return method is MISSING and dunder(obj, "__getitem__") is not None


def object_iter(tx, obj: UserObjectVariable, frame) -> IteratorVariable:
    """`iter(obj)`: `__iter__` inlined; it must give an iterator capture follows (a generator
    function, or iter() of a container)."""
    if _sequence_protocol(obj):
        return SequenceIterator([], tx=tx, obj=obj)
    result = call_dunder(tx, obj, "__iter__", [], frame)
    if not isinstance(result, IteratorVariable):
        raise Unsupported(f"{obj.cls.__qualname__}.__iter__ returned a "
                          f"{type(result).__name__}")
    return result


def bound_call(obj: UserObjectVariable) -> Variable:
    """`obj(...)`: its class's `__call__`, bound."""
    method = dunder(obj, "__call__")
    if method is None:
        raise Unsupported(f"calling a {obj.cls.__qualname__} (no Python __call__)")
    return BoundMethodVariable(ObjectVariable(method), obj)


def object_builtin(tx, fn, args: list, kwargs: dict, frame) -> Variable | None:
    """A builtin applied to a tracked object (`len(cache)`, `hasattr(obj, "x")`,
    `setattr(obj, "x", v)`...), or None when `fn` is not one of these or `args[0]` is not a
    tracked object (the ordinary builtin rules answer then)."""
    if not args or not isinstance(args[0], UserObjectVariable) or kwargs:
        return None
    obj, rest = args[0], args[1:]
    if fn is object.__init__ and not rest:   # `super().__init__()` reaching object
        return ConstVariable(None)
    if fn is object.__setattr__ and len(rest) == 2 and isinstance(rest[0], ConstVariable):
        obj.attrs[rest[0].value] = rest[1]   # a frozen dataclass's __init__ (no descriptor)
        return ConstVariable(None)
    if fn is len and not rest:
        return call_dunder(tx, obj, "__len__", [], frame)
    if fn is iter and not rest:
        return object_iter(tx, obj, frame)
    if fn is callable and not rest:
        return ConstVariable(class_lookup(obj.cls, "__call__") is not MISSING)
    names = [a.value for a in rest[:1] if isinstance(a, ConstVariable)
             and isinstance(a.value, str)]
    if fn is hasattr and len(rest) == 1 and names:
        return ConstVariable(has_object_attr(tx, obj, names[0]))
    if fn is setattr and len(rest) == 2 and names:
        store_object_attr(tx, obj, names[0], rest[1])
        return ConstVariable(None)
    if fn is delattr and len(rest) == 1 and names:
        delete_object_attr(obj, names[0])
        return ConstVariable(None)
    return None


def plain_module_store(module, name: str, value: Variable) -> bool:
    """`module.name = obj` of a tracked object: nn.Module.__setattr__ then stores it as a plain
    attribute (it is no parameter, buffer, submodule or tensor), as object.__setattr__ would."""
    import torch

    return isinstance(module, torch.nn.Module) and isinstance(value, UserObjectVariable) and \
        not any(name in module.__dict__.get(d, ()) for d in ("_parameters", "_buffers",
                                                             "_modules"))


def identity_compare(symbol: str, a: Variable, b: Variable) -> Variable | None:
    """`a == b` / `a != b` with a tracked object and no Python `__eq__`: object.__eq__ is
    identity (a new object equals only itself); None when this rule does not apply."""
    if symbol not in ("==", "!=") or not any(isinstance(v, UserObjectVariable) for v in (a, b)):
        return None
    for v in (a, b):
        cls = v.cls if isinstance(v, UserObjectVariable) else type(getattr(v, "value", None))
        if isinstance(v, UserObjectVariable) and class_lookup(cls, "__eq__") is not object.__eq__:
            return None
    return ConstVariable((a is b) == (symbol == "=="))


def new_instance(cls: type, names, values) -> object:
    """An instance of `cls` (checked by `untracked_reason` at capture) with no __init__ run."""
    obj = cls.__new__(cls)
    set_attributes(obj, names, values)
    return obj


def set_attributes(obj, names, values) -> None:
    for name, value in zip(names, values, strict=True):
        object.__setattr__(obj, name, value)


__all__ = [
    "call_dunder", "class_lookup", "construct_object", "delete_object_attr", "dunder",
    "has_object_attr", "load_object_attr", "new_instance", "object_builtin", "object_iter",
    "object_truth",
    "store_object_attr", "untracked_reason",
]
