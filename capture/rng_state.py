"""torch's generator state read and set inside compiled code.

    s = torch.get_rng_state()     # -> RngStateVariable (a node of the torch-level graph)
    torch.manual_seed(42)         # a node: draws after it are a function of 42
    torch.set_rng_state(s)        # a node taking s: draws after it repeat those after the get

These calls are graph nodes, in program order, not side effects replayed around the graph:
their order relative to the random draws is what matters, and only the graph holds that order.
The eager backend runs them as they are (torch's own generator, exactly eager); prims.decompose
turns them into switches of the graph's random stream (prims/random.py, which also says what
torch's generator looks like after the call, and symc.backends applies it).

What capture does not follow is a graph break: a state that is not the result of a
get_rng_state() in the same capture (a tensor argument, a saved state), reading the state as a
tensor, a seed that is not a constant int, and the CUDA generator's own calls
(`torch.cuda.get_rng_state`, ...: symc's stream covers every device, and eager's CPU and CUDA
generators are separate). torch.accelerator.is_available() and torch.cuda.is_available() are
constants of the process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.fx as fx

from capture.builtins import rule
from capture.errors import Unsupported
from capture.variables import ConstVariable, ObjectVariable, Variable

# The CUDA generator's calls (as freeze_rng_state and fork_rng make them on a CUDA machine).
CUDA_STATE_CALLS = tuple(getattr(torch.cuda, name) for name in (
    "get_rng_state", "set_rng_state", "get_rng_state_all", "set_rng_state_all", "manual_seed",
    "manual_seed_all", "seed", "seed_all", "initial_seed"))


@dataclass(eq=False)
class RngStateVariable(Variable):
    """The value of `torch.get_rng_state()`: usable only as `set_rng_state`'s argument."""

    node: fx.Node

    def python_type(self) -> type:
        return torch.Tensor

    def __repr__(self) -> str:
        return "RngState"


def _state_node(state, target, args: tuple) -> fx.Node:
    node = state.graph.call_function(target, args)
    node.meta["val"] = None  # not a tensor of the graph (prims.random RngState, or nothing)
    node.meta["where"] = state.where
    return node


@rule(torch.random.get_rng_state)
def _get_rng_state(tx, args, kwargs) -> Variable:
    if args or kwargs:
        raise Unsupported("torch.get_rng_state: expected no arguments")
    return RngStateVariable(_state_node(tx.state, torch.random.get_rng_state, ()))


@rule(torch.random.set_rng_state)
def _set_rng_state(tx, args, kwargs) -> Variable:
    new_state = (args or list(kwargs.values()) or [None])[0]
    if len(args) + len(kwargs) != 1 or not isinstance(new_state, RngStateVariable):
        raise Unsupported("torch.set_rng_state of a state not read by torch.get_rng_state() in "
                          f"the compiled code (found {type(new_state).__name__})")
    _state_node(tx.state, torch.random.set_rng_state, (new_state.node,))
    return ConstVariable(None)


@rule(torch.random.manual_seed)
def _manual_seed(tx, args, kwargs) -> Variable:
    seed = (args or list(kwargs.values()) or [None])[0]
    if len(args) + len(kwargs) != 1 or not isinstance(seed, ConstVariable) or \
            type(seed.value) is not int:
        raise Unsupported(f"torch.manual_seed of a non-constant or non-int seed ({seed})")
    _state_node(tx.state, torch.random.manual_seed, (seed.value,))
    return ObjectVariable(torch.default_generator)


@rule(*CUDA_STATE_CALLS)
def _cuda_state(tx, args, kwargs) -> Variable:
    raise Unsupported("the CUDA generator's state inside compiled code (torch.cuda.*rng*/seed "
                      "calls) is not captured")


def _process_constant(fn):
    def constant(tx, args, kwargs) -> Variable:
        if args or kwargs:
            raise Unsupported(f"{fn.__qualname__}: expected no arguments")
        return ConstVariable(fn())

    return constant


for _fn in (torch.accelerator.is_available, torch.cuda.is_available):
    rule(_fn)(_process_constant(_fn))


__all__ = ["CUDA_STATE_CALLS", "RngStateVariable"]
