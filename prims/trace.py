"""Tracers: what a prim call does when it is not run on real tensors.

    with tracing(MetaTracer(env)):
        out = decomposition(TensorMeta.contiguous((s0, 768), f32))   # -> TensorMeta
    with tracing(GraphTracer(graph, env)):
        out = decomposition(TracedTensor(node, meta))                # -> TracedTensor, new nodes

`TracedTensor` quacks like a TensorMeta (shape, dtype, ndim, device, ...) so decompositions read
sizes the same way in every mode. Each tracer carries the `Analyzer` of the compilation's
ShapeEnv (`tracer.an`), passed in explicitly: the meta functions and decompositions it runs ask
their size questions there (prims/sizes.py), and record their guards and asserts in that env.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.fx as fx

from prims.core import PrimError
from prims.dtypes import check_dtypes
from symbolic import Analyzer, ShapeEnv, TensorMeta

RNG_SEED_NAME = "rng_seed"
# output-node meta of a training forward: how many of its outputs go to the user (the rest
# are saved for the backward and may share a user output's memory; see inductor's outputs)
USER_OUTPUTS = "user_outputs"
# placeholder meta of a backward graph: dims such that the saved tensor arrives as
# `buffer.permute(dims)` of a contiguous buffer (the compiled forward returned it so; see
# autograd_aot/runtime.py `_saved_layouts`); a tensor in any other layout is copied to it
INPUT_PERMUTE = "input_permute"


def _map(value, fn):
    """Apply `fn` to every leaf of nested tuples/lists/dicts."""
    if isinstance(value, tuple):
        return tuple(_map(v, fn) for v in value)
    if isinstance(value, list):
        return [_map(v, fn) for v in value]
    if isinstance(value, dict):
        return {k: _map(v, fn) for k, v in value.items()}
    return fn(value)


@dataclass(frozen=True, eq=False)
class TracedTensor:
    """A tensor value inside a graph being built: its fx node and its TensorMeta."""

    node: fx.Node
    meta: TensorMeta

    shape = property(lambda self: self.meta.shape)
    dtype = property(lambda self: self.meta.dtype)
    device = property(lambda self: self.meta.device)
    ndim = property(lambda self: self.meta.ndim)
    stride = property(lambda self: self.meta.stride)
    requires_grad = property(lambda self: self.meta.requires_grad)

    def dim(self) -> int:
        return self.meta.ndim

    def size(self, dim=None):
        return self.meta.size(dim)

    def numel(self):
        return self.meta.numel()

    def __repr__(self) -> str:
        return f"TracedTensor({self.node.name}: {self.meta})"


def meta_value(value):
    """TensorMeta for a TracedTensor or TensorMeta, leaves anything else alone (nested)."""
    return _map(value, lambda v: v.meta if isinstance(v, TracedTensor) else v)


class MetaTracer:
    """Evaluate prims on TensorMetas: the shape/dtype inference mode, in the ShapeEnv `env`."""

    def __init__(self, env: ShapeEnv):
        self.an = _analyzer_of(env, "MetaTracer")

    def bind(self, prim, args, kwargs):
        return checked_meta(prim, args, kwargs)


class GraphTracer:
    """Record prims into `graph`, each node's meta['val'] set from the prim's meta function.

    Random decompositions ask `rng_seed()` for the graph's seed: the first call adds one
    placeholder `rng_seed` (0-dim int64, `meta["rng_seed"] = True`) after the other
    placeholders; `rng_offset` counts the random elements drawn so far (see prims/random.py).
    """

    def __init__(self, graph: fx.Graph, env: ShapeEnv):
        self.graph = graph
        self.an = _analyzer_of(env, "GraphTracer")
        self.rng_offset = 0
        self._seed = None

    def rng_seed(self) -> TracedTensor:
        if self._seed is None:
            placeholders = [n for n in self.graph.nodes if n.op == "placeholder"]
            if placeholders:
                where = self.graph.inserting_after(placeholders[-1])
            else:
                where = self.graph.inserting_before(next(iter(self.graph.nodes), None))
            with where:
                node = self.graph.placeholder(RNG_SEED_NAME)
            meta = TensorMeta.contiguous((), torch.int64, self.rng_device())
            node.meta["val"] = meta
            node.meta["rng_seed"] = True
            self._seed = TracedTensor(node, meta)
        return self._seed

    def rng_device(self):
        """The device of the graph's seeds: its inputs' (generated kernels read a seed like any
        other input), else the CPU."""
        devices = [n.meta["val"].device for n in self.graph.nodes if n.op == "placeholder"
                   and isinstance(n.meta.get("val"), TensorMeta) and not n.meta.get("rng_seed")]
        return devices[0] if devices else "cpu"

    def bind(self, prim, args, kwargs):
        out_meta = checked_meta(prim, args, kwargs)
        node_args = _map(args, lambda v: v.node if isinstance(v, TracedTensor) else v)
        node_kwargs = _map(kwargs, lambda v: v.node if isinstance(v, TracedTensor) else v)
        node = self.graph.call_function(prim, tuple(node_args), dict(node_kwargs))
        node.meta["val"] = out_meta
        if isinstance(out_meta, tuple):
            outs = []
            for i, m in enumerate(out_meta):
                item = self.graph.call_function(_getitem, (node, i))
                item.meta["val"] = m
                outs.append(TracedTensor(item, m))
            return tuple(outs)
        return TracedTensor(node, out_meta)


def _analyzer_of(env, what: str) -> Analyzer:
    if not isinstance(env, ShapeEnv):
        raise PrimError(f"{what}: expected the compilation's ShapeEnv (an empty one for a graph "
                        f"without symbols), found {env!r}")
    return Analyzer(env)


def checked_meta(prim, args, kwargs):
    """The prim's output meta, its inputs' and outputs' dtypes checked (prims/dtypes.py)."""
    args, kwargs = meta_value(args), meta_value(kwargs)
    out = prim.meta(*args, **kwargs)
    check_dtypes(prim.name, (args, kwargs), out)
    return out


def _getitem(value, index):
    """Element `index` of a multi-output prim's result (the fx node target for tuple outputs)."""
    return value[index]


getitem = _getitem
