"""Library calls that are pure functions of one object's state, run at capture time.

    decoder_config = config.get_text_config(decoder=True)   # transformers' DynamicCache(config=)

Interpreting such a call is possible in principle but walks `copy.deepcopy` (`id()`, memo dicts,
`__reduce_ex__`) and `to_dict()` of a class with its own `__setattr__`: capture cannot track it
and broke the whole forward. These calls read only their receiver (an existing object reached
through a source) and constant arguments and return the receiver or a fresh object; capture
runs them on the real receiver and, when the result is a fresh object, guards the entry on the
receiver's `__dict__` (`frozen(L['self'].config.__dict__) == (...)`), so a later change to the
object recompiles. The fresh result is a source-less constant: reading it is constant, writing
to it a graph break. A call that returns its receiver is interpreted as before (its reads are
guarded one by one).
"""

from __future__ import annotations

import sys

import torch

from capture.sources import StateSource
from capture.variables import ConstVariable, ObjectVariable, Variable
from guards import ValueGuard

# (module, qualified name) of each function; looked up only when the module is loaded
STATE_CALLS = (
    ("transformers.configuration_utils", "PreTrainedConfig.get_text_config"),
)


def _functions() -> set:
    found = set()
    for module_name, qualname in STATE_CALLS:
        value = sys.modules.get(module_name)
        for part in qualname.split(".") if value is not None else ():
            value = getattr(value, part, None)
        if value is not None:
            found.add(value)
    return found


def is_state_call(fn) -> bool:
    try:
        return fn in _functions()
    except TypeError:  # unhashable
        return False


def state_call(tx, fn, args: list, kwargs: dict) -> Variable | None:
    """`fn(receiver, *constants)` run now, guarded on the receiver's state; None: inline it."""
    receiver, rest = (args[0], args[1:]) if args else (None, [])
    if not isinstance(receiver, ObjectVariable) or receiver.source is None or not all(
            isinstance(a, ConstVariable) for a in [*rest, *kwargs.values()]):
        return None
    obj = receiver.value
    snapshot = frozen(getattr(obj, "__dict__", None))
    if snapshot is None:  # a state without value equality: no guard could hold it
        return None
    result = fn(obj, *[a.value for a in rest], **{k: v.value for k, v in kwargs.items()})
    if result is obj:
        return None
    assert frozen(getattr(obj, "__dict__", None)) == snapshot, \
        f"{fn.__qualname__} changed its receiver (listed in STATE_CALLS as pure)"
    tx.state.guard(ValueGuard, StateSource(receiver.source), snapshot)
    return ObjectVariable(result)


_PLAIN = (int, float, str, bytes, bool, type(None), torch.dtype, torch.device)


class _NotComparable(Exception):
    pass


def frozen(value):
    """`value` as nested tuples, equal exactly when the values are; None: not comparable (a
    value whose equality is its identity, which a snapshot could never match)."""
    try:
        return _freeze(value)
    except _NotComparable:
        return None


def _freeze(value):
    if type(value) in _PLAIN:
        return value
    if type(value) in (list, tuple):
        return (type(value).__name__, tuple(_freeze(v) for v in value))
    if type(value) is dict:
        return ("dict", tuple((_freeze(k), _freeze(v)) for k, v in value.items()))
    raise _NotComparable(type(value).__name__)


__all__ = ["STATE_CALLS", "frozen", "is_state_call", "state_call"]
