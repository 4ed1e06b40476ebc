"""Turning Python values the program reads into Variables, recording the guards they need.

    wrap(state, 3, AttrSource(L['self'], 'n_head'))   -> Const(3), guard  L['self'].n_head == 3
    wrap(state, tensor, LocalSource('x'), user=True)   -> placeholder with symbolic sizes
    wrap(state, module.weight, AttrSource(...))        -> placeholder with static sizes

Guards: constants by value, functions/classes/modules/dtypes by identity, containers by type
and length (dicts by keys), configs and other objects by type (their attributes when read).
"""

from __future__ import annotations

import enum
import types

import torch

from capture.errors import Unsupported
from capture.graph import GraphState
from capture.live_values import GRAD_MODE_EXITS, IterItems
from capture.variables import (
    ConstVariable,
    ContextExitVariable,
    ContextVariable,
    DictVariable,
    LazyListVariable,
    ListVariable,
    ObjectVariable,
    TupleVariable,
    Variable,
)
from guards import DictKeysGuard, IdentityGuard, LengthGuard, TypeGuard, ValueGuard
from symbolic import AttrSource, ItemSource, Source

GradModeExitType = type(GRAD_MODE_EXITS[True, True])
CONST_TYPES = (int, float, bool, str, type(None), bytes, complex)
IDENTITY_CONSTS = (torch.dtype, torch.device, torch.layout, torch.memory_format)


def wrap(state: GraphState, value, source: Source | None, *, user: bool = False) -> Variable:
    """The Variable for `value` read from `source`; `user` marks the frame's own arguments."""
    if isinstance(value, torch.Tensor):
        if source is None:
            raise Unsupported("a tensor with no source (a constant tensor in code)")
        static = not user or isinstance(value, torch.nn.Parameter)
        return state.add_input(value, source, static=static)
    if user and type(value) is float and state.dynamic and source is not None:
        from capture.symfloat import float_input

        return float_input(state, value, source)  # a graph input, not a constant
    if user and type(value) is int and state.dynamic and source is not None:
        from capture.int_args import int_input

        return int_input(state, value, source)  # a size symbol, not a constant
    if isinstance(value, CONST_TYPES):
        if type(value) in CONST_TYPES:
            state.guard(ValueGuard, source, value)
            return ConstVariable(value, source)
    if value is Ellipsis or value is NotImplemented:
        return ConstVariable(value, source)
    if isinstance(value, IDENTITY_CONSTS):
        state.guard(IdentityGuard, source, id(value), repr(value))
        return ConstVariable(value, source)
    if isinstance(value, enum.Enum):
        state.guard(IdentityGuard, source, id(value), repr(value))
        return ConstVariable(value, source)
    if isinstance(value, GradModeExitType):  # a resume function inside `with torch.no_grad()`
        state.guard(IdentityGuard, source, id(value), repr(value))
        context = ContextVariable("grad", value.inside)  # the prologue calls it to re-enter
        context.saved = value.restore
        return ContextExitVariable(context)
    if type(value) in (tuple, list, torch.Size, IterItems):
        state.guard(TypeGuard, source, type(value))
        if type(value) is list and source is not None and not user:
            return LazyListVariable(lambda: _list_items(state, value, source), source)
        state.guard(LengthGuard, source, len(value))
        items = [wrap(state, v, _item(source, i), user=user) for i, v in enumerate(value)]
        return ListVariable(items, source) if type(value) is list else TupleVariable(items, source)
    if type(value) is dict and all(isinstance(k, (str, int)) for k in value):
        state.guard(TypeGuard, source, dict)
        state.guard(DictKeysGuard, source, tuple(value.keys()))
        items = {k: wrap(state, v, _item(source, k), user=user) for k, v in value.items()}
        return DictVariable(items, source)
    if isinstance(value, types.MethodType) and source is not None:
        # A new object at each attribute read (an identity guard would never pass again): guard
        # the function; `__self__` is wrapped (and guarded) with its own source when called.
        state.guard(IdentityGuard, AttrSource(source, "__func__"), id(value.__func__),
                    _describe(value.__func__))
        return ObjectVariable(value, source)
    if _fresh_bound_method(value) and source is not None:
        # A builtin method handed out anew at each read has no `__func__`: guard its object.
        state.guard(IdentityGuard, AttrSource(source, "__self__"), id(value.__self__),
                    _describe(value.__self__))
        return ObjectVariable(value, source)
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type,
                          torch.nn.Module, types.MethodType)) or callable(value):
        if not isinstance(value, types.ModuleType):
            state.guard(IdentityGuard, source, id(value), _describe(value))
        return ObjectVariable(value, source)
    if isinstance(value, types.ModuleType):
        return ObjectVariable(value, source)
    state.guard(TypeGuard, source, type(value))
    return ObjectVariable(value, source)


def _fresh_bound_method(value) -> bool:
    """A builtin bound method that its object hands out anew at each access."""
    if not isinstance(value, types.BuiltinMethodType):
        return False
    owner = getattr(value, "__self__", None)
    if owner is None or isinstance(owner, types.ModuleType | type):
        return False
    try:
        return getattr(owner, value.__name__) is not value
    except Exception:  # noqa: BLE001 - a property raising, a name that is not an attribute
        return False


def _list_items(state: GraphState, value: list, source: Source) -> list:
    state.guard(LengthGuard, source, len(value))
    return [wrap(state, v, ItemSource(source, i)) for i, v in enumerate(value)]


def _item(source: Source | None, index) -> Source | None:
    return None if source is None else ItemSource(source, index)


def _describe(value) -> str:
    if isinstance(value, torch.nn.Module):
        return f"<{type(value).__name__} module>"
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    return f"<{name}>" if name else f"<{type(value).__name__}>"
