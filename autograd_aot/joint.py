"""The joint graph: a forward prims graph followed by its reverse-mode derivative.

`build_joint(fwd, env, requires_grad)` copies the forward graph, adds one tangent placeholder per
differentiable output (its symbolic shape is the output's), and walks the nodes backwards calling
each prim's VJP rule under a GraphTracer. The output is `(*forward outputs, *input grads)`.

    def joint(x: f32[s0, 8], tangent_0: f32[s0]):
        sum_1 = sum(x, (1,))                               # forward
        broadcast_in_dim = broadcast_in_dim(tangent_0, (s0, 8), (0,))   # backward
        return (sum_1, broadcast_in_dim)
"""

from __future__ import annotations

import inspect
import operator
from dataclasses import dataclass

import sympy
import torch.fx as fx

from autograd_aot.errors import AutogradError
from autograd_aot.vjp_rules import vjp_rule_for, zeros
from prims import GraphTracer, Prim, TracedTensor, getitem, ops, tracing
from symbolic import Analyzer, ShapeEnv, TensorMeta, meta_of


@dataclass
class JointGraph:
    """A joint graph and the roles of its nodes (all nodes live in `graph`)."""

    graph: fx.Graph
    env: ShapeEnv
    primals: list  # the forward placeholders, in order (tensors and symbol inputs)
    tangents: list  # one placeholder per differentiable forward output
    forward_outputs: list  # the forward outputs: nodes, or constants/sympy scalars
    output_differentiable: list  # per forward output: whether it has a tangent
    grads: list  # per primal: its grad node, or None where no grad is wanted
    requires_grad: list
    # Per primal: the differentiable outputs (indices among those with a tangent) its grad
    # depends on; empty where no output's VJP reaches it (a detached parameter): its grad is
    # None, as in eager, though the backward graph returns zeros there.
    grad_sources: list | None = None

    def __str__(self) -> str:
        return str(self.graph)


def is_getitem(node: fx.Node) -> bool:
    return node.op == "call_function" and node.target in (getitem, operator.getitem)


def is_differentiable_meta(meta) -> bool:
    if isinstance(meta, TensorMeta):
        return meta.dtype.is_floating_point or meta.dtype.is_complex
    if isinstance(meta, tuple):
        return any(is_differentiable_meta(m) for m in meta)
    return False


def _map(value, fn):
    if isinstance(value, (tuple, list)):
        return type(value)(_map(v, fn) for v in value)
    return fn(value)


def _value(node: fx.Node):
    """What a rule sees for a node: a TracedTensor, or the sympy symbol of a symbol input."""
    meta = meta_of(node)
    if isinstance(meta, TensorMeta):
        return TracedTensor(node, meta)
    if isinstance(meta, sympy.Basic):
        return meta
    raise AutogradError(f"expected a tensor or symbol node, found {node.format_node()}")


_SIGNATURES: dict = {}


def positional_args(node: fx.Node) -> tuple:
    """The node's arguments as one positional tuple, defaults filled in, kwargs bound."""
    prim = node.target
    sig = _SIGNATURES.get(prim)
    if sig is None:
        sig = _SIGNATURES[prim] = inspect.signature(prim.meta)
    bound = sig.bind(*node.args, **node.kwargs)
    bound.apply_defaults()
    return tuple(bound.arguments.values())


def _outputs_of(node: fx.Node, graph: fx.Graph):
    """A multi-output node's elements as TracedTensors (adding missing getitem nodes)."""
    metas = meta_of(node)
    items = {u.args[1]: u for u in node.users if is_getitem(u)}
    out = []
    for i, m in enumerate(metas):
        if i not in items:
            with graph.inserting_after(node):
                items[i] = graph.call_function(getitem, (node, i))
                items[i].meta["val"] = m
        out.append(TracedTensor(items[i], m))
    return tuple(out)


class _Cotangents:
    """Accumulated cotangents per node (and per element for multi-output nodes)."""

    def __init__(self, an: Analyzer):
        self.an = an
        self.single: dict = {}
        self.multi: dict = {}

    def add(self, node: fx.Node, grad, where: str) -> None:
        meta = meta_of(node)
        equal = self.an.equal
        if grad.ndim != meta.ndim or not all(equal(x, y) for x, y in zip(grad.shape, meta.shape)):
            raise AutogradError(f"expected a cotangent {meta} for {node.name}, found "
                                f"{grad.meta} from the VJP rule of {where}")
        if grad.dtype != meta.dtype:
            grad = ops.convert_element_type(grad, meta.dtype)
        old = self.single.get(node)
        self.single[node] = grad if old is None else ops.add(old, grad)

    def of(self, node: fx.Node):
        if isinstance(meta_of(node), tuple):
            parts = self.multi.get(node, {})
            g = tuple(parts.get(i) for i in range(len(meta_of(node))))
            return None if all(x is None for x in g) else g
        return self.single.get(node)


def build_joint(fwd_graph: fx.Graph, env: ShapeEnv, requires_grad) -> JointGraph:
    """Differentiate `fwd_graph` w.r.t. the placeholders marked in `requires_grad` (one flag per
    placeholder, symbol inputs included); the forward graph is not changed."""
    graph = fx.Graph()
    remap: dict = {}
    out_args = None
    for node in fwd_graph.nodes:
        if node.op == "output":
            out_args = node.args[0]
        else:
            remap[node] = graph.node_copy(node, lambda n: remap[n])
    if out_args is None:
        raise AutogradError("build_joint: the forward graph has no output node")
    primals = [remap[n] for n in fwd_graph.nodes if n.op == "placeholder"]
    requires_grad = list(requires_grad)
    if len(requires_grad) != len(primals):
        raise AutogradError(f"build_joint: expected {len(primals)} requires_grad flags (one per "
                            f"placeholder), found {len(requires_grad)}")
    active = set()
    for node, flag in zip(primals, requires_grad):
        if flag:
            if not is_differentiable_meta(meta_of(node)):
                raise AutogradError(f"build_joint: input {node.name} ({meta_of(node)}) cannot "
                                    f"require grad: expected a floating tensor")
            active.add(node)
    for node in graph.nodes:
        if node.op == "call_function" and is_differentiable_meta(meta_of(node)) and any(
                a in active for a in node.all_input_nodes) and not _stops_gradient(node):
            active.add(node)

    outputs = list(out_args) if isinstance(out_args, (tuple, list)) else [out_args]
    outputs = [remap[o] if isinstance(o, fx.Node) else o for o in outputs]
    differentiable = [isinstance(o, fx.Node) and o in active and isinstance(meta_of(o), TensorMeta)
                      for o in outputs]
    tangents, anchor = [], primals[-1] if primals else None
    for i, (o, flag) in enumerate(zip(outputs, differentiable)):
        if not flag:
            continue
        ctx = graph.inserting_after(anchor) if anchor is not None else graph.inserting_before(
            next(iter(graph.nodes), None))
        with ctx:
            t = graph.placeholder(f"tangent_{i}")
        meta = meta_of(o)
        t.meta["val"] = TensorMeta.contiguous(meta.shape, meta.dtype, meta.device)
        t.meta["tangent"] = True
        tangents.append(t)
        anchor = t

    tracer = GraphTracer(graph, env)
    cot = _Cotangents(tracer.an)
    forward_nodes = [n for n in graph.nodes if n.op == "call_function"]
    with tracing(tracer):
        for t, o in zip(tangents, [o for o, f in zip(outputs, differentiable) if f]):
            cot.add(o, TracedTensor(t, meta_of(t)), "the output")
        for node in reversed(forward_nodes):
            if node not in active:
                continue
            if is_getitem(node):
                g = cot.single.get(node)
                if g is not None:
                    parent, index = node.args
                    parts = cot.multi.setdefault(parent, {})
                    parts[index] = g if index not in parts else ops.add(parts[index], g)
                continue
            _backprop(node, cot, graph, active)
        grads, sources = [], []
        depends = _tangent_dependencies(graph, [o for o, f in zip(outputs, differentiable) if f])
        for node, flag in zip(primals, requires_grad):
            if not flag:
                grads.append(None)
                sources.append(frozenset())
                continue
            g = cot.single.get(node)
            sources.append(frozenset() if g is None else depends.get(node, frozenset()))
            if g is None:
                meta = meta_of(node)
                g = zeros(meta.shape, meta.dtype, meta.device)
            grads.append(g.node)
    graph.output((*outputs, *[g for g in grads if g is not None]))
    return JointGraph(graph, env, primals, tangents, outputs, differentiable, grads,
                      requires_grad, sources)


def _stops_gradient(node: fx.Node) -> bool:
    """A detach (prim stop_gradient): its result needs no grad, as in eager."""
    return isinstance(node.target, Prim) and node.target.name == "stop_gradient"


def _tangent_dependencies(graph: fx.Graph, outputs: list) -> dict:
    """node -> the indices of `outputs` that (structurally) depend on it: an over-approximation
    of which outputs' cotangents can reach it (a detach is a dependency here)."""
    depends: dict = {}
    for i, o in enumerate(outputs):
        stack = [o]
        while stack:
            node = stack.pop()
            seen = depends.setdefault(node, set())
            if i in seen:
                continue
            seen.add(i)
            stack.extend(node.all_input_nodes)
    return {node: frozenset(ix) for node, ix in depends.items()}


def _backprop(node: fx.Node, cot: _Cotangents, graph: fx.Graph, active: set) -> None:
    g = cot.of(node)
    if g is None:
        return
    if not isinstance(node.target, Prim):
        raise AutogradError(f"build_joint: expected prims, found {node.format_node()}")
    rule = vjp_rule_for(node.target)
    node_args = positional_args(node)
    args = _map(node_args, lambda v: _value(v) if isinstance(v, fx.Node) else v)
    meta = meta_of(node)
    out = _outputs_of(node, graph) if isinstance(meta, tuple) else TracedTensor(node, meta)
    grads = rule(args, out, g)
    if len(grads) != len(args):
        raise AutogradError(f"the VJP rule of {node.target.name} returned {len(grads)} grads "
                            f"for {len(args)} arguments")
    for arg, grad in zip(node_args, grads):
        pairs = zip(arg, grad) if isinstance(arg, (tuple, list)) and grad is not None else [
            (arg, grad)]
        for a, ga in pairs:
            if isinstance(a, fx.Node) and a in active and ga is not None:
                cot.add(a, ga, f"{node.target.name} ({node.name})")
