"""Binding call arguments to an inlined function's parameters, CPython's rules in small.

    bind(code, "f", [x], {"k": 1}, defaults=(...), kwdefaults={})  ->  {"x": ..., "k": ..., ...}

Positional-only, keyword-only, defaults, `*args` (a TupleVariable) and `**kwargs` (a
DictVariable). A generator function's call returns a lazy GeneratorVariable (its frame runs as
the consumer asks). A call Python would reject is a graph break, so eager raises the real
TypeError.
"""

from __future__ import annotations

import inspect

from capture.errors import Unsupported
from capture.variables import DictVariable, TupleVariable, Variable

UNSUPPORTED_FLAGS = {
    inspect.CO_COROUTINE: "a coroutine",
    inspect.CO_ASYNC_GENERATOR: "an async generator",
}


class LazyDefault:
    """A default read from a function object: wrapped (and so guarded) only if a call uses it."""

    __slots__ = ("make",)

    def __init__(self, make):
        self.make = make


def _used(value):
    return value.make() if isinstance(value, LazyDefault) else value


def check_code(code, name: str) -> None:
    for flag, what in UNSUPPORTED_FLAGS.items():
        if code.co_flags & flag:
            raise Unsupported(f"calling {what} ({name})")


def bind(code, name: str, args: list, kwargs: dict, defaults: tuple = (),
         kwdefaults: dict | None = None) -> dict[str, Variable]:
    """Map parameter names of `code` to argument Variables, applying defaults."""
    check_code(code, name)
    kwdefaults = kwdefaults or {}
    nargs, nkw = code.co_argcount, code.co_kwonlyargcount
    names = code.co_varnames
    positional, kwonly = names[:nargs], names[nargs:nargs + nkw]
    i = nargs + nkw
    varargs = names[i] if code.co_flags & inspect.CO_VARARGS else None
    varkw = names[i + bool(varargs)] if code.co_flags & inspect.CO_VARKEYWORDS else None

    bound: dict[str, Variable] = dict(zip(positional, args))
    extra = list(args[nargs:])
    if extra and varargs is None:
        raise Unsupported(f"{name}() takes {nargs} positional arguments, got {len(args)}")
    if varargs is not None:
        bound[varargs] = TupleVariable(extra)
    keyword_ok = set(positional[code.co_posonlyargcount:]) | set(kwonly)
    extra_kw = {}
    for key, value in kwargs.items():
        if key in keyword_ok:
            if key in bound:
                raise Unsupported(f"{name}() got multiple values for {key!r}")
            bound[key] = value
        elif varkw is not None:
            extra_kw[key] = value
        else:
            raise Unsupported(f"{name}() got an unexpected keyword argument {key!r}")
    if varkw is not None:
        bound[varkw] = DictVariable(extra_kw)
    first_default = nargs - len(defaults)
    for j, pname in enumerate(positional):
        if pname not in bound:
            if j < first_default:
                raise Unsupported(f"{name}() missing argument {pname!r}")
            bound[pname] = _used(defaults[j - first_default])
    for pname in kwonly:
        if pname not in bound:
            if pname not in kwdefaults:
                raise Unsupported(f"{name}() missing keyword argument {pname!r}")
            bound[pname] = _used(kwdefaults[pname])
    return bound
