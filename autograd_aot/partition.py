"""Min-cut partitioner: split a joint graph into a forward and a backward prims graph.

Which forward values the backward gets is a minimum s-t cut over the forward half of the joint
graph (max-flow / min-cut, Ford-Fulkerson via networkx): each forward node v is an edge
v_in -> v_out whose capacity is the bytes of saving v (at the env's size hints: a heuristic),
data edges are uncuttable, the source feeds inputs and every op that must run in the forward
(reductions, indexing, externs, scans: infinite cost to recompute), and every forward value the
backward reads feeds the sink. The cut edges are the saved values; every other forward value the
backward needs is recomputed there from them. philox_rand is never saved (its mask is redrawn
from the saved seed and offset). Backward placeholders: saved values, symbols (ints), tangents.

    saved for backward: x f32[s0, 8] (hint 160 B);  recomputed: exp, sin
"""

from __future__ import annotations

from dataclasses import dataclass

import networkx as nx
import sympy
import torch.fx as fx

from autograd_aot.errors import AutogradError
from autograd_aot.joint import JointGraph, is_getitem
from prims import USER_OUTPUTS, Prim, PrimKind
from symbolic import TensorMeta, meta_of

RECOMPUTABLE_KINDS = frozenset({PrimKind.POINTWISE, PrimKind.VIEW, PrimKind.CREATION,
                                PrimKind.RANDOM})
NEVER_SAVED_KINDS = frozenset({PrimKind.RANDOM})
_SOURCE, _SINK = "source", "sink"
_TIE_SLOTS = 1024  # capacities are bytes * _TIE_SLOTS + a tie-break (inputs, then later nodes)


@dataclass(frozen=True)
class SavedValue:
    name: str
    meta: str
    bytes_hint: int


@dataclass(frozen=True)
class PartitionInfo:
    """What the forward saves for the backward and what the backward recomputes."""

    saved: tuple  # SavedValue per saved tensor, in forward order
    recomputed: tuple  # names of forward ops the backward recomputes
    recomputed_ops: tuple  # their prim names
    symbols: tuple  # sympy symbols the backward takes as int inputs
    # per saved tensor: the index of the forward input it is (saved as the input tensor itself,
    # never copied into an output), or -1 when the forward graph outputs it
    saved_inputs: tuple = ()

    @property
    def saved_names(self) -> tuple:
        return tuple(s.name for s in self.saved)

    @property
    def saved_bytes_hint(self) -> int:
        return sum(s.bytes_hint for s in self.saved)

    def __str__(self) -> str:
        lines = [f"saved for backward: {len(self.saved)} tensors, {self.saved_bytes_hint} bytes "
                 f"at the example sizes"]
        lines += [f"  {s.name:<24} {s.meta:<24} {s.bytes_hint} B" for s in self.saved]
        lines.append(f"recomputed in backward: {len(self.recomputed)} ops"
                     + (f" ({', '.join(self.recomputed_ops)})" if self.recomputed else ""))
        lines.append("symbols passed as ints: "
                     + (", ".join(str(s) for s in self.symbols) or "none"))
        return "\n".join(lines)


def _is_symbol_node(node: fx.Node) -> bool:
    return isinstance(meta_of(node), sympy.Basic)


def _is_recomputable(node: fx.Node) -> bool:
    if is_getitem(node):
        return True
    return isinstance(node.target, Prim) and node.target.kind in RECOMPUTABLE_KINDS


def _size_hint(expr, env) -> int:
    # like env.size_hint, with sympy Integers substituted (a bare symbol xreplaced by a Python int
    # becomes an int), and unknown symbols read as 1 since this is only a heuristic
    hints = {s: sympy.Integer(h) for s, h in env.hints.items()}
    value = sympy.sympify(env.simplify(expr)).xreplace(hints).xreplace(hints)
    value = value.xreplace({s: sympy.Integer(1) for s in value.free_symbols})
    return int(value)


def _bytes_hint(meta: TensorMeta, env) -> int:
    return max(_size_hint(meta.numel(), env), 1) * meta.dtype.itemsize


def _returned_memory(joint: JointGraph) -> set:
    """The forward's outputs and the views between them and their bases (logits[B, T, V] is a
    view of the mm over [B*T, V]): memory the forward returns to the caller anyway."""
    out = {o for o in joint.forward_outputs if isinstance(o, fx.Node)}
    stack = list(out)
    while stack:
        node = stack.pop()
        if not isinstance(node.target, Prim) or node.target.kind != PrimKind.VIEW:
            continue
        base = node.args[0]
        if isinstance(base, fx.Node) and base not in out:
            out.add(base)
            stack.append(base)
    return out


def _save_capacity(node: fx.Node, rank: int, env, returned: frozenset = frozenset()):
    """Cost of saving `node`, or None (infinite) where it must not be saved."""
    meta = meta_of(node)
    if not isinstance(meta, TensorMeta):
        return None
    if isinstance(node.target, Prim) and node.target.kind in NEVER_SAVED_KINDS:
        return None
    # an input is alive anyway (a parameter or the caller's tensor): saving it costs no memory,
    # so a pointwise chain from it is recomputed rather than saved (cross-entropy's exp(x - m)
    # would otherwise be an [N, C] f32 buffer kept for backward, by N * 4 bytes); among equal
    # sizes later nodes are preferred (less to recompute). So is a returned output (the
    # logits): the forward writes it anyway, and the saved value shares its buffer.
    if node.op == "placeholder" or node in returned:
        return 1
    return _bytes_hint(meta, env) * _TIE_SLOTS + _TIE_SLOTS - 1 - min(rank, _TIE_SLOTS - 2)


def backward_side(joint: JointGraph) -> set:
    """Nodes that depend on a tangent: they can only run in the backward."""
    side = set(joint.tangents)
    for node in joint.graph.nodes:
        if node.op == "call_function" and any(a in side for a in node.all_input_nodes):
            side.add(node)
    return side


def choose_saved(joint: JointGraph) -> list:
    """The forward nodes to save: a minimum cut between the forward's sources and the backward."""
    bwd = backward_side(joint)
    fwd_nodes = [n for n in joint.graph.nodes
                 if n.op in ("placeholder", "call_function") and n not in bwd
                 and not _is_symbol_node(n)]
    fwd_set = set(fwd_nodes)
    needed = {a for n in bwd for a in n.all_input_nodes if a in fwd_set}
    needed |= {g for g in joint.grads if g is not None and g in fwd_set}
    flow = nx.DiGraph()
    flow.add_node(_SOURCE)
    flow.add_node(_SINK)
    returned = frozenset(_returned_memory(joint))
    for rank, node in enumerate(fwd_nodes):
        cap = _save_capacity(node, rank, joint.env, returned)
        if cap is None:
            flow.add_edge((node, "in"), (node, "out"))  # no capacity: infinite in networkx
        else:
            flow.add_edge((node, "in"), (node, "out"), capacity=cap)
        if node.op == "placeholder" or not _is_recomputable(node):
            flow.add_edge(_SOURCE, (node, "in"))
        for user in node.users:
            if user in fwd_set:
                flow.add_edge((node, "out"), (user, "in"))
        if node in needed:
            flow.add_edge((node, "out"), _SINK)
    try:
        _, (reachable, _) = nx.minimum_cut(flow, _SOURCE, _SINK)
    except nx.NetworkXUnbounded:
        raise AutogradError("partition: every cut between forward and backward crosses a value "
                            "that cannot be saved (a tuple or random value needed as is)") from None
    return [n for n in fwd_nodes if (n, "in") in reachable and (n, "out") not in reachable]


def _ancestors(roots, stop) -> set:
    seen, stack = set(), [r for r in roots if isinstance(r, fx.Node)]
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node not in stop:
            stack.extend(node.all_input_nodes)
    return seen


def _symbols_in(value, out: set) -> None:
    if isinstance(value, (tuple, list)):
        for v in value:
            _symbols_in(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _symbols_in(v, out)
    elif isinstance(value, TensorMeta):
        out |= value.free_symbols
    elif isinstance(value, sympy.Basic):
        out |= value.free_symbols


def _copy_nodes(graph: fx.Graph, nodes, mapping: dict) -> None:
    for node in nodes:
        mapping[node] = graph.node_copy(node, lambda n: mapping[n])


def _forward_graph(joint: JointGraph, saved: list) -> fx.Graph:
    graph, mapping = fx.Graph(), {}
    keep = _ancestors([*joint.forward_outputs, *saved], stop=set())
    for node in joint.graph.nodes:
        if node.op == "placeholder" and node not in joint.tangents:
            mapping[node] = graph.node_copy(node)
        elif node.op == "call_function" and node in keep:
            _copy_nodes(graph, [node], mapping)
    outs = [mapping[o] if isinstance(o, fx.Node) else o for o in joint.forward_outputs]
    output = graph.output((*outs, *[mapping[s] for s in saved if s.op != "placeholder"]))
    output.meta[USER_OUTPUTS] = len(outs)
    return graph


def _saved_inputs(joint: JointGraph, saved: list) -> tuple:
    """Forward input index of each saved value that is a forward input, else -1."""
    inputs = [n for n in joint.graph.nodes if n.op == "placeholder" and n not in joint.tangents]
    position = {node: i for i, node in enumerate(inputs)}
    return tuple(position[s] if s.op == "placeholder" else -1 for s in saved)


def _backward_graph(joint: JointGraph, saved: list, bwd: set):
    graph, mapping = fx.Graph(), {}
    grads = [g for g in joint.grads if g is not None]
    stop = set(saved) | set(joint.tangents) | {p for p in joint.primals if _is_symbol_node(p)}
    keep = _ancestors(grads, stop)
    body = [n for n in joint.graph.nodes if n in keep and n not in stop and n.op == "call_function"]
    bad = [n.name for n in keep if n.op == "placeholder" and n not in stop]
    if bad:
        raise AutogradError(f"partition: the backward needs inputs {bad} that were not saved")
    symbols: set = set()
    for node in [*saved, *joint.tangents, *body]:
        _symbols_in(meta_of(node), symbols)
    for node in body:
        _symbols_in((node.args, node.kwargs), symbols)
    symbols = sorted(symbols, key=lambda s: (len(s.name), s.name))
    for node in saved:
        p = graph.placeholder(f"saved_{node.name}")
        p.meta["val"] = meta_of(node)  # only the value: flags like rng_seed stay forward-only
        p.meta["saved"] = True
        mapping[node] = p
    by_symbol = {}
    for sym in symbols:
        p = graph.placeholder(str(sym))
        p.meta["val"] = sym
        by_symbol[sym] = p
    for node in joint.primals:
        if _is_symbol_node(node) and meta_of(node) in by_symbol:
            mapping[node] = by_symbol[meta_of(node)]
    for t in joint.tangents:
        mapping[t] = graph.node_copy(t)
    _copy_nodes(graph, body, mapping)
    graph.output(tuple(mapping[g] for g in grads))
    recomputed = [n for n in body if n not in bwd]
    return graph, recomputed, tuple(symbols)


def partition(joint: JointGraph):
    """-> (forward graph, backward graph, PartitionInfo). The joint graph is not changed.

    Forward: same placeholders as the original, returns (*outputs, *saved that are not inputs);
    `info.saved_inputs` says which saved values are inputs (see `SplitGraphs.saved_values`).
    Backward: placeholders (*saved, *symbols, *tangents), returns the grads of the inputs that
    require grad, in input order.
    """
    saved = choose_saved(joint)
    bwd = backward_side(joint)
    stop = set(saved) | set(joint.tangents) | {p for p in joint.primals if _is_symbol_node(p)}
    used = _ancestors([g for g in joint.grads if g is not None], stop)
    saved = [s for s in saved if s in used]  # a minimal cut has none unused; kept as a guard
    forward = _forward_graph(joint, saved)
    backward, recomputed, symbols = _backward_graph(joint, saved, bwd)
    info = PartitionInfo(
        saved=tuple(SavedValue(n.name, str(meta_of(n)), _bytes_hint(meta_of(n), joint.env))
                    for n in saved),
        recomputed=tuple(n.name for n in recomputed),
        recomputed_ops=tuple(getattr(n.target, "name", "getitem") for n in recomputed),
        symbols=symbols,
        saved_inputs=_saved_inputs(joint, saved),
    )
    return forward, backward, info
