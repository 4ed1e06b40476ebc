"""Attribute writes on Python objects the program reads (`self.flag = True` on a helper object).

    writes.store(obj_var, "compiling", Const(True), where)   # later reads in the capture see it
    writes.load(obj, "compiling")                            # -> Const(True)
    writes.finish(state, wrap, spec_of)   # each attribute ends as it began (guarded), or
                                          # holds a new object (replayed), or it breaks

Writes with no net effect are captured: a value set and later restored (a flag around a call,
a context variable's set/reset); the attribute's value at capture time is guarded, so later
calls start from the same state. A write storing an object built in the compiled code
(`self.cache = Cache()`) is replayed after the graph (`Capture.effects`); any other is a break.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from capture.errors import Unsupported
from capture.variables import (
    ConstVariable,
    ListVariable,
    ObjectVariable,
    TupleVariable,
    UserObjectVariable,
    Variable,
)
from symbolic import AttrSource

MISSING = object()


@dataclass
class Write:
    var: ObjectVariable
    value: Variable
    where: str | None
    line: str | None


@dataclass
class AttributeWrites:
    """Pending writes, keyed by (id of the object, attribute name); the last one wins."""

    writes: dict = field(default_factory=dict)

    def store(self, obj: ObjectVariable, name: str, value: Variable, where, line) -> None:
        if obj.source is None:
            raise Unsupported(f"attribute assignment .{name} on an object with no source "
                              f"(a side effect on Python state)")
        self.writes[id(obj.value), name] = Write(obj, value, where, line)

    def load(self, obj: object, name: str) -> Variable | None:
        write = self.writes.get((id(obj), name))
        return None if write is None else write.value

    def finish(self, state, wrap, spec_of) -> list:
        """Check every written attribute ends with the value it had; guard that value (through
        `wrap`: capture.builder.wrap). A write that stores an object built in the compiled code
        (capture.objects) is replayed after the graph instead: the (target source, name,
        OutputSpec made by `spec_of`) list returned, in order."""
        replayed = []
        for (_, name), write in self.writes.items():
            before = getattr(write.var.value, name, MISSING)
            after = write.value
            restored = isinstance(after, ConstVariable) and type(after.value) is type(before) \
                and (after.value is before or after.value == before)
            if not restored and holds_tracked(after):
                replayed.append((write.var.source, name, spec_of(after)))
                continue
            if not restored:
                raise Unsupported(f"attribute assignment .{name} (a side effect on Python state)",
                                  write.where, write.line)
            wrap(state, before, AttrSource(write.var.source, name))
        return replayed


def holds_tracked(var: Variable) -> bool:
    """Whether `var` is, or directly holds, an object built in the compiled code."""
    if isinstance(var, UserObjectVariable):
        return True
    return isinstance(var, (ListVariable, TupleVariable)) and var.source is None and any(
        isinstance(item, UserObjectVariable) for item in var.items)
