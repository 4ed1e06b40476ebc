"""Common subexpressions of a prims graph: a pure prim applied twice to the same operands.

The lowering reads the second node as the first (one Value, its uses counted together), so a
value the graph computes twice is realized, if at all, into one buffer. Autocast's backward
casts one gradient to bf16 once per matmul that reads it: two casts, one buffer now.

    same = duplicates(graph)   # {duplicate node: the first node computing the same value}

Only pointwise prims, views and creation prims are merged (their results are functions of
their operands alone); externs, reductions (cheap to keep apart, and realized anyway) and
random draws are not. Scalars are compared with their type and, for floats, their repr, so
`add(x, 0.0)` and `add(x, -0.0)` or `mul(x, 1)` and `mul(x, 1.0)` stay apart.
"""

from __future__ import annotations

import torch.fx as fx

from prims import opcodes
from prims.core import Prim

MERGEABLE = opcodes.POINTWISE | opcodes.VIEWS | opcodes.CREATION


class _Unhashable(Exception):
    pass


def _key(value, same: dict):
    if isinstance(value, fx.Node):
        return ("node", same.get(value, value))
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, tuple(_key(v, same) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((k, _key(v, same)) for k, v in value.items())))
    if isinstance(value, float):
        return ("float", repr(value))
    try:
        hash(value)
    except TypeError:
        raise _Unhashable from None
    return (type(value).__name__, value)


def _outputs(graph: fx.Graph) -> set:
    found: set = set()
    for node in graph.nodes:
        if node.op == "output":
            fx.node.map_arg(node.args, lambda n: found.add(n) or n)
    return found


def duplicates(graph: fx.Graph) -> dict:
    """{node: the earlier node it duplicates} for mergeable prims (program order). Two graph
    outputs never become one node: eager returns two tensors, and a buffer shared by two
    outputs would show an in-place change of one in the other."""
    outputs = _outputs(graph)
    seen: dict = {}
    same: dict = {}
    claimed: set = set()  # nodes an output is, or was merged into
    for node in graph.nodes:
        if node.op != "call_function" or not isinstance(node.target, Prim) \
                or node.target.op not in MERGEABLE:
            continue
        try:
            key = (node.target.op, _key(node.args, same), _key(dict(node.kwargs), same))
        except _Unhashable:
            continue
        first = seen.setdefault(key, node)
        if node in outputs:
            if first is not node and first in claimed:
                continue
            claimed.add(first)
        if first is not node:
            same[node] = first
    return same


__all__ = ["MERGEABLE", "duplicates"]
