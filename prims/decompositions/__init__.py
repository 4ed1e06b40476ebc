"""Decompositions of the torch API into prims, one small function per torch op.

Importing this package fills `DECOMPOSITIONS` (each module registers its rows).

    DECOMPOSITIONS[torch.nn.functional.silu](x) == x * sigmoid(x), as prims
"""

from prims.decompositions import (  # noqa: F401  (imported to register)
    activations,
    arithmetic,
    comparisons,
    conv,
    creation,
    cross_entropy,
    diagonal,
    extern_ops,
    finite_differences,
    indexing,
    interpolate,
    linalg,
    literals,
    losses,
    masked,
    misc,
    nn,
    norms,
    order,
    pooling,
    products,
    random_draws,
    random_state,
    reductions,
    scatter,
    shapes,
    special,
    stacking,
    strided,
)
from prims.decompositions.registry import (
    DECOMPOSITIONS,
    decomposition_for,
    has_decomposition,
    register_decomposition,
    target_name,
)

__all__ = [
    "DECOMPOSITIONS", "decomposition_for", "has_decomposition", "register_decomposition",
    "target_name",
]
