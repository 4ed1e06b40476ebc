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

from prims import opcodes
from prims.opcodes import PrimOp
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
    op: PrimOp
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


# The family each kind's prims belong to (prims/opcodes.py).
KIND_FAMILIES = {
    PrimKind.POINTWISE: opcodes.POINTWISE, PrimKind.REDUCTION: opcodes.REDUCTIONS,
    PrimKind.VIEW: opcodes.VIEWS, PrimKind.INDEXING: opcodes.INDEXING,
    PrimKind.CREATION: opcodes.CREATION, PrimKind.SCAN: opcodes.SCANS,
    PrimKind.RANDOM: opcodes.RANDOM, PrimKind.EXTERN: opcodes.EXTERNS,
}

PRIMS: dict[PrimOp, Prim] = {}  # a PrimOp is a str: PRIMS["exp"] is PRIMS[PrimOp.EXP]


def prim_op(name, table: str) -> PrimOp:
    """`name` as a PrimOp; an unknown name is a PrimError naming the table it was given to."""
    try:
        return PrimOp(name)
    except ValueError:
        raise PrimError(f"expected a prim name (a PrimOp in prims/opcodes.py), found {name!r} "
                        f"registered in {table}") from None


def register_prim(name, kind: PrimKind, meta: Callable, ref: Callable, doc: str = "",
                  tags=()) -> Prim:
    op = prim_op(name, "the prims table")
    if op in PRIMS:
        raise PrimError(f"prim {name!r} registered twice")
    if op not in KIND_FAMILIES[kind]:
        raise PrimError(f"prim {name!r}: expected kind {kind.value} to match its family in "
                        "prims/opcodes.py, found it in another family")
    prim = Prim(op.value, kind, op, meta, ref, doc, frozenset(tags))
    PRIMS[op] = prim
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
