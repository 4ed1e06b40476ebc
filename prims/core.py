"""The Prim record and how a prim call is dispatched.

A prim call `prims.add(a, b)` does one of three things, chosen by the active *tracer*:
  - no tracer: run the reference implementation on real tensors (the "prims" backend, tests);
  - `MetaTracer`: run the meta function on TensorMetas (capture asks this for output metas);
  - `GraphTracer`: add a node to an fx graph, its meta computed by the meta function.
Decompositions are written once against prims and run unchanged in all three modes.
"""

from __future__ import annotations

import contextlib
import contextvars
import enum
from collections.abc import Callable
from dataclasses import dataclass, field

from symbolic import SymcError


class PrimError(SymcError):
    """A prim was called with arguments its meta function rejects, or a prim/rule is missing.

    The message names the prim, what was expected and what was found.
    """


class PrimKind(enum.Enum):
    POINTWISE = "pointwise"
    REDUCTION = "reduction"
    VIEW = "view"
    INDEXING = "indexing"
    CREATION = "creation"
    SCAN = "scan"
    RANDOM = "random"
    EXTERN = "extern"


@dataclass(frozen=True, eq=False)
class Prim:
    """One primitive op: its name, kind, symbolic meta function and reference implementation.

    `meta(*args)` takes TensorMetas (and Python/sympy scalars) and returns a TensorMeta or a tuple
    of them; `ref(*args)` takes real tensors and returns tensors, with the same signature.
    """

    name: str
    kind: PrimKind
    meta: Callable
    ref: Callable
    doc: str = ""
    tags: frozenset = field(default_factory=frozenset)

    @property
    def __name__(self) -> str:  # fx and printers look for it
        return self.name

    def __call__(self, *args, **kwargs):
        tracer = _TRACER.get()
        if tracer is None:
            return self.ref(*args, **kwargs)
        return tracer.bind(self, args, kwargs)

    def __repr__(self) -> str:
        return f"prims.{self.name}"


PRIMS: dict[str, Prim] = {}


def register_prim(name: str, kind: PrimKind, meta: Callable, ref: Callable, doc: str = "",
                  tags=()) -> Prim:
    if name in PRIMS:
        raise PrimError(f"prim {name!r} registered twice")
    prim = Prim(name, kind, meta, ref, doc, frozenset(tags))
    PRIMS[name] = prim
    return prim


_TRACER: contextvars.ContextVar = contextvars.ContextVar("symc_prim_tracer", default=None)


@contextlib.contextmanager
def tracing(tracer):
    """Route prim calls inside the block to `tracer.bind(prim, args, kwargs)`."""
    token = _TRACER.set(tracer)
    try:
        yield tracer
    finally:
        _TRACER.reset(token)


def current_tracer():
    return _TRACER.get()
