"""The autograd_aot error type."""

from __future__ import annotations

from symbolic import SymcError


class AutogradError(SymcError):
    """Differentiating or partitioning a prims graph failed.

    Causes: a prim without a VJP rule (add one to autograd_aot/vjp_rules.py), a rule whose
    cotangent has the wrong shape or dtype, or a graph the partitioner cannot split. The message
    names the prim and the graph node.
    """
