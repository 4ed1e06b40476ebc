"""prims: the closed set of primitive ops and the decompositions of the torch API into them.

In: torch-level calls (functions, Tensor methods, operators) with TensorMeta/real/traced tensors.
Out: prim calls, each with a symbolic meta function and a reference implementation.

    >>> with tracing(MetaTracer()): prims.add(TensorMeta.contiguous((s0, 4), f32), 1.0)
    f32[s0, 4]
"""

from prims.core import PRIMS, Prim, PrimError, PrimKind, current_tracer, register_prim, tracing
from prims.trace import GraphTracer, MetaTracer, TracedTensor, getitem, meta_value

__all__ = [
    "PRIMS", "GraphTracer", "MetaTracer", "Prim", "PrimError", "PrimKind", "TracedTensor",
    "current_tracer", "getitem", "meta_value", "register_prim", "tracing",
]
