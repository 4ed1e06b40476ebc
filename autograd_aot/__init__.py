"""autograd_aot: ahead-of-time differentiation of prims graphs.

In: a forward prims graph, its ShapeEnv and which placeholders need grad. Out: forward and
backward prims graphs (saved values chosen by min-cut, symbols passed as ints) and a
torch.autograd.Function that runs them compiled by any backend's compile_fn.

    >>> run = compile_for_training(graph, env, [True], reference_compile)  # cos(sin(exp(x)))
    >>> print(run.training.split.info)
    saved for backward: 1 tensors, 320 bytes at the example sizes
      x                        f64[s0, 8]               320 B
    recomputed in backward: 4 ops (exp, sin, sin, cos)
    symbols passed as ints: s0
"""

from autograd_aot.errors import AutogradError
from autograd_aot.joint import JointGraph, build_joint
from autograd_aot.partition import PartitionInfo, SavedValue, partition
from autograd_aot.runtime import (
    compile_for_training,
    make_inference_callable,
    make_training_callable,
    reference_compile,
    requires_grad_flags,
)
from autograd_aot.split import SplitGraphs, split
from autograd_aot import vjp_extern_rules  # noqa: F401  (registers the extern prims' rules)
from autograd_aot.vjp_rules import VJP_RULES, vjp_rule_for

__all__ = [
    "VJP_RULES", "AutogradError", "JointGraph", "PartitionInfo", "SavedValue", "SplitGraphs",
    "build_joint", "compile_for_training", "make_inference_callable", "make_training_callable",
    "partition", "reference_compile", "requires_grad_flags", "split", "vjp_rule_for",
]
