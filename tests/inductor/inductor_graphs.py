"""Build tiny prims graphs for inductor tests: placeholders with symbolic metas, a traced body.

    graph, env, syms = prims_graph(lambda x: ops.exp(x), [("s0", "s1")], torch.float32)
"""

from __future__ import annotations

import sympy
import torch
import torch.fx as fx

from prims import GraphTracer, TracedTensor, tracing
from prims.decompositions import DECOMPOSITIONS
from symbolic import LocalSource, ShapeEnv, SizeSource, TensorMeta


def symbolic_shape(env, name, shape, hints):
    out = []
    for d, s in enumerate(shape):
        if isinstance(s, str):
            if s not in hints:
                hints[s] = env.create_symbol(7 + len(hints), SizeSource(LocalSource(name), d))
            out.append(hints[s])
        else:
            out.append(sympy.Integer(s))
    return tuple(out)


def prims_graph(fn, shapes, dtypes=torch.float32, env=None, device="cpu"):
    """Trace `fn(*traced)` into a prims graph; shapes hold ints or symbol names ("a", "b")."""
    env = env or ShapeEnv()
    graph = fx.Graph()
    if not isinstance(dtypes, (list, tuple)):
        dtypes = [dtypes] * len(shapes)
    named: dict = {}
    args = []
    for i, (shape, dtype) in enumerate(zip(shapes, dtypes)):
        node = graph.placeholder(f"x{i}")
        meta = TensorMeta.contiguous(symbolic_shape(env, f"x{i}", shape, named), dtype, device)
        node.meta["val"] = meta
        args.append(TracedTensor(node, meta))
    with tracing(GraphTracer(graph, env)):
        out = fn(*args)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    graph.output(tuple(o.node if isinstance(o, TracedTensor) else o for o in outs))
    return graph, env, named


def decomposed(torch_fn, *args, **kwargs):
    """Call the prims decomposition of `torch_fn` (used inside a traced body)."""
    return DECOMPOSITIONS[torch_fn](*args, **kwargs)


def sized(shape, named_sizes: dict, sizes: dict):
    """A concrete shape: symbol names replaced by `sizes[name]`."""
    return tuple(sizes[s] if isinstance(s, str) else s for s in shape)
