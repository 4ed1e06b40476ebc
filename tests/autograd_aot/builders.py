"""Building small prims graphs for the autograd_aot tests, with real inputs to match.

`build_case(fn, n)` runs `fn(d, n, make)` twice: once with real tensors (d = n) and once under a
GraphTracer with symbolic sizes (d = a symbol with hint n), so one description gives both the
prims graph and its example inputs. `make(shape, kind, ...)` returns a tensor or a placeholder.
"""

from __future__ import annotations

import torch
import torch.fx as fx

from prims import GraphTracer, TracedTensor, tracing
from symbolic import LocalSource, ShapeEnv, SizeSource, TensorMeta


class RealMaker:
    def __init__(self, seed: int):
        self.gen = torch.Generator().manual_seed(seed)
        self.tensors, self.grads = [], []

    def __call__(self, shape, kind="randn", dtype=torch.float64, high=None, grad=True):
        shape = tuple(int(s) for s in shape)
        if kind == "index":
            t = torch.randint(0, max(int(high), 1), shape, generator=self.gen)
        elif kind == "perm":
            t = torch.randperm(int(high), generator=self.gen)[: shape[0]]
        elif kind == "bool":
            t = torch.rand(shape, generator=self.gen) > 0.5
        else:
            t = torch.randn(shape, generator=self.gen, dtype=torch.float64)
            if kind == "positive":
                t = t.abs() + 0.5
            elif kind == "unit":
                t = t.tanh() * 0.9
            elif kind == "with_zeros":  # some exact zeros, one or two per row at most
                t = t.abs() + 0.5
                t[..., 0] = 0.0
                t[::2, ..., 1] = 0.0
            elif kind == "distinct":  # well separated values: no ties for max/sort
                t = torch.randperm(t.numel(), generator=self.gen).reshape(shape).double() * 0.1
            t = t.to(dtype)
        self.tensors.append(t)
        self.grads.append(grad and t.dtype.is_floating_point)
        return t


class GraphMaker:
    """Adds a placeholder per tensor, with the symbolic shape it was asked for."""

    def __init__(self, graph: fx.Graph, real: RealMaker):
        self.graph, self.real, self.count = graph, real, 0

    def __call__(self, shape, kind="randn", dtype=torch.float64, high=None, grad=True):
        like = self.real.tensors[self.count]
        node = self.graph.placeholder(f"in{self.count}")
        node.meta["val"] = TensorMeta.contiguous(tuple(shape), like.dtype)
        self.count += 1
        return TracedTensor(node, node.meta["val"])


def build_case(fn, n: int, seed: int = 0):
    """-> (graph, env, real inputs, requires_grad flags, real args) for `fn(d, n, make)`."""
    real = RealMaker(seed)
    real_args = fn(n, n, real)
    env = ShapeEnv()
    d = env.create_symbol(n, SizeSource(LocalSource("x"), 0))
    graph = fx.Graph()
    with tracing(GraphTracer(graph, env)):
        maker = GraphMaker(graph, RealMaker(seed))
        maker.real = real
        out = fn(d, n, maker)
    outs = out if isinstance(out, tuple) else (out,)
    graph.output(tuple(o.node for o in outs))
    return graph, env, list(real.tensors), list(real.grads), real_args
