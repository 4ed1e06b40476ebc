"""`split`: a forward prims graph -> forward and backward prims graphs, in one call.

    split = autograd_aot.split(graph, env, requires_grad=[True, False])
    print(split)      # both graphs and what was saved / recomputed
"""

from __future__ import annotations

from dataclasses import dataclass

import torch.fx as fx

from autograd_aot.joint import JointGraph, build_joint
from autograd_aot.partition import PartitionInfo, partition
from symbolic import ShapeEnv


@dataclass
class SplitGraphs:
    """The graphs a training entry runs, and how their inputs and outputs line up.

    forward:  original placeholders -> (*outputs, *saved that are not inputs)
    backward: (*saved, *symbols as ints, *tangents) -> grads of the inputs requiring grad
    original: the untouched forward graph (run under torch.no_grad()).
    """

    original: fx.Graph
    forward: fx.Graph
    backward: fx.Graph
    info: PartitionInfo
    env: ShapeEnv
    joint: JointGraph
    requires_grad: tuple
    output_differentiable: tuple
    grad_sources: tuple = ()   # per input: differentiable outputs its grad depends on (joint)

    @property
    def num_outputs(self) -> int:
        return len(self.output_differentiable)

    @property
    def num_saved(self) -> int:
        return len(self.info.saved)

    @property
    def num_saved_outputs(self) -> int:
        """Saved values the forward graph returns (saved inputs are passed through instead)."""
        return sum(1 for i in self.info.saved_inputs if i < 0)

    def saved_values(self, inputs, saved_outputs) -> list:
        """The backward's saved tensors: forward inputs as they are, the rest from outputs."""
        rest = iter(saved_outputs)
        return [inputs[i] if i >= 0 else next(rest) for i in self.info.saved_inputs]

    @property
    def symbols(self) -> tuple:
        return self.info.symbols

    def __str__(self) -> str:
        return (f"forward graph:\n{self.forward}\nbackward graph:\n{self.backward}\n"
                f"{self.info}")


def split(graph: fx.Graph, env: ShapeEnv, requires_grad) -> SplitGraphs:
    """Differentiate `graph` w.r.t. the placeholders flagged in `requires_grad` and partition."""
    joint = build_joint(graph, env, requires_grad)
    forward, backward, info = partition(joint)
    sink_to_first_use(backward)
    return SplitGraphs(graph, forward, backward, info, env, joint, tuple(joint.requires_grad),
                       tuple(joint.output_differentiable), tuple(joint.grad_sources))


def sink_to_first_use(graph: fx.Graph) -> None:
    """Move each computation to just before its first user (placeholders and outputs stay).

    The backward's recomputed chains depend on saved tensors only, so in graph order they all
    run first and every block's recomputed activations are alive at once; sunk to their use,
    each lives only while its block's gradient is computed. Moving a node only later, never
    past a user, keeps the order topological; random ops keep their order (their draws)."""
    nodes = [n for n in graph.nodes if n.op not in ("placeholder", "output")]
    for node in reversed(nodes):
        if not node.users or _impure(node):
            continue
        users, first = node.users, node.next
        while first not in users:  # the first user in graph order: a short walk forward
            first = first.next
        if first.op != "output" and node.next is not first:
            first.prepend(node)


def _impure(node: fx.Node) -> bool:
    target = node.target
    name = getattr(target, "__name__", str(target))
    return node.op != "call_function" or any(k in name for k in ("rand", "seed", "bernoulli"))


def without_tangents(backward: fx.Graph, absent: frozenset) -> fx.Graph:
    """A copy of `backward` whose tangent placeholders at positions `absent` (0 is the first
    tangent) are gone, each replaced by a zeros tensor made inside the graph (`full`, a
    constant the kernels inline): an output the caller never differentiates (a model's logits
    next to its loss) then costs no zero-filled buffer, and no kernel reads one. The symbols
    of the dropped shapes are the graph's symbol placeholders, which stay."""
    from prims import PRIMS

    graph, mapping = fx.Graph(), {}
    out = graph.graph_copy(backward, mapping)
    graph.output(out)
    tangents = [mapping[n] for n in backward.nodes if n.op == "placeholder"
                and n.meta.get("tangent")]
    if any(i >= len(tangents) for i in absent):
        raise ValueError(f"without_tangents: expected positions below {len(tangents)}, found "
                         f"{sorted(absent)}")
    anchor = [n for n in graph.nodes if n.op == "placeholder"][-1]
    for i in sorted(absent):
        t = tangents[i]
        meta = t.meta["val"]
        with graph.inserting_after(anchor):
            zeros = graph.call_function(PRIMS["full"], (tuple(meta.shape), 0.0, meta.dtype,
                                                        meta.device))
        zeros.meta["val"] = meta
        t.replace_all_uses_with(zeros)
        anchor = zeros
    for i in sorted(absent):
        graph.erase_node(tangents[i])
    graph.lint()
    return graph
