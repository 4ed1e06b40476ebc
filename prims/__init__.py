"""prims: the closed set of primitive ops and the decompositions of the torch API into them.

In: torch-level calls (functions, Tensor methods, operators) with TensorMeta/real/traced tensors.
Out: prim calls, each with a symbolic meta function and a reference implementation.

    >>> with tracing(MetaTracer(env)): prims.ops.add(TensorMeta.contiguous((s0, 4), f32), 1.0)
    f32[s0, 4]
"""

from prims import ops
from prims.autocast import autocast_state, current_autocast_state
from prims.core import (PRIMS, Prim, PrimError, PrimKind, current_tracer, prim_op, register_prim,
                        tracing)
from prims.dtypes import PRIM_DTYPES
from prims.decompositions import DECOMPOSITIONS, has_decomposition, register_decomposition
from prims.opcodes import PrimOp
from prims.interpret import decompose, infer_meta, run_reference, symbol_values
from prims.random import next_offset, next_seed, philox_hash
from prims.return_types import field_names, python_scalar_type, structseq_type
from prims.trace import (
    RNG_SEED_NAME,
    GraphTracer,
    MetaTracer,
    TracedTensor,
    USER_OUTPUTS,
    getitem,
    meta_value,
)

__all__ = [
    "DECOMPOSITIONS", "PRIMS", "PRIM_DTYPES", "RNG_SEED_NAME", "GraphTracer", "MetaTracer", "Prim",
    "PrimError", "PrimKind", "PrimOp", "TracedTensor", "USER_OUTPUTS", "autocast_state",
    "current_autocast_state", "current_tracer", "decompose", "field_names", "getitem",
    "has_decomposition", "infer_meta",
    "meta_value", "next_offset", "next_seed", "ops", "philox_hash", "prim_op",
    "python_scalar_type", "register_decomposition", "register_prim", "run_reference",
    "structseq_type",
    "symbol_values", "tracing",
]
