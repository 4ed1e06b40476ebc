"""Every prim as a module attribute: `from prims import ops; ops.add(a, b)`.

Importing this module registers the whole table (each kind's module registers its rows).
Dims passed to prims are non-negative and already normalised by the decompositions.

    >>> ops.add(torch.ones(2), 1.0)
    tensor([2., 2.])
"""

from __future__ import annotations

from prims import (convolution, creation, externs, fused_attention, indexing, pointwise,
                   random, reductions, scans, torch_externs, views)
from prims.core import PRIMS
from prims.opcodes import PrimOp
from prims.trace import getitem

_MODULES = (convolution, creation, externs, fused_attention, indexing, pointwise, random,
            reductions, scans, torch_externs, views)

# `ops.<name>` for every prim, in PrimOp order (prims/opcodes.py); registering each kind's
# module above filled the table
for _op in PrimOp:
    globals()[_op.value] = PRIMS[_op]

__all__ = [op.value for op in PrimOp] + ["getitem"]
