"""torch's generator state read and set inside compiled code.

    s = torch.get_rng_state()     # -> RngStateVariable (a node of the torch-level graph)
    torch.manual_seed(42)         # a node: draws after it are a function of 42
    torch.set_rng_state(s)        # a node taking s: draws after it repeat those after the get

These calls are graph nodes, in program order, not side effects replayed around the graph:
their order relative to the random draws is what matters, and only the graph holds that order.
The eager backend runs them as they are (torch's own generator, exactly eager); prims.decompose
turns them into switches of the graph's random stream (prims/generators.py, which also says
what torch's generators look like after the call; symc.backends applies it).

`torch.cuda.get_rng_state()` / `set_rng_state(s)` (one CUDA device) are followed the same way:
the graph draws from its inputs' device's generator, and prims.generators keeps the other one's
state. What capture does not follow is a graph break: a state that is not the result of the
same generator's get_rng_state() in the same capture (a tensor argument, a saved state),
reading the state as a tensor, a seed that is not a constant int, several CUDA devices, and the
calls that seed or read CUDA generators alone (`torch.cuda.manual_seed`, ...).
torch.accelerator.is_available(), current_accelerator(), torch.cuda.is_available() and
torch.get_device_module(name) are constants of the process.
"""

from __future__ import annotations

import types
from dataclasses import dataclass

import torch
import torch.fx as fx

from capture.builtins import rule
from capture.errors import Unsupported
from capture.variables import ConstVariable, ObjectVariable, Variable

# The CUDA generator's calls capture does not follow (seeding one generator alone).
CUDA_SEED_CALLS = tuple(getattr(torch.cuda, name) for name in (
    "get_rng_state_all", "set_rng_state_all", "manual_seed", "manual_seed_all", "seed",
    "seed_all", "initial_seed"))


@dataclass(eq=False)
class RngStateVariable(Variable):
    """The value of `torch.get_rng_state()` ("cpu") or `torch.cuda.get_rng_state()` ("cuda"):
    usable only as the argument of the same generator's `set_rng_state`."""

    node: fx.Node
    kind: str

    def python_type(self) -> type:
        return torch.Tensor

    def __repr__(self) -> str:
        return f"RngState({self.kind})"


def _state_node(state, target, args: tuple) -> fx.Node:
    node = state.graph.call_function(target, args)
    node.meta["val"] = None  # not a tensor of the graph (prims.generators RngState, or nothing)
    node.meta["where"] = state.where
    return node


def _cuda_device(args, kwargs, name: str) -> None:
    """Only the one CUDA device's generator, named or not."""
    device = (args or list(kwargs.values()) or [ConstVariable("cuda")])[0]
    value = getattr(device, "value", None)
    if len(args) + len(kwargs) > 1 or not isinstance(device, ConstVariable) or \
            torch.device(value if not isinstance(value, int) else f"cuda:{value}").type != "cuda":
        raise Unsupported(f"torch.cuda.{name}: expected no argument or a constant CUDA device")
    if torch.cuda.device_count() > 1:
        raise Unsupported(f"torch.cuda.{name} with several CUDA devices (torch.manual_seed "
                          "seeds them all; capture follows one CUDA generator)")


@rule(torch.random.get_rng_state)
def _get_rng_state(tx, args, kwargs) -> Variable:
    if args or kwargs:
        raise Unsupported("torch.get_rng_state: expected no arguments")
    return RngStateVariable(_state_node(tx.state, torch.random.get_rng_state, ()), "cpu")


@rule(torch.cuda.get_rng_state)
def _cuda_get_rng_state(tx, args, kwargs) -> Variable:
    _cuda_device(args, kwargs, "get_rng_state")
    return RngStateVariable(_state_node(tx.state, torch.cuda.get_rng_state, ()), "cuda")


def _set(tx, args, kwargs, kind: str, target) -> Variable:
    new_state = (args or [kwargs.get("new_state")])[0]
    if not isinstance(new_state, RngStateVariable) or new_state.kind != kind:
        raise Unsupported(f"set_rng_state of a state not read by the {kind} generator's "
                          f"get_rng_state() in the compiled code (found {new_state})")
    _state_node(tx.state, target, (new_state.node,))
    return ConstVariable(None)


@rule(torch.random.set_rng_state)
def _set_rng_state(tx, args, kwargs) -> Variable:
    if len(args) + len(kwargs) != 1:
        raise Unsupported("torch.set_rng_state: expected one argument")
    return _set(tx, args, kwargs, "cpu", torch.random.set_rng_state)


@rule(torch.cuda.set_rng_state)
def _cuda_set_rng_state(tx, args, kwargs) -> Variable:
    rest = {k: v for k, v in kwargs.items() if k != "new_state"}
    _cuda_device(args[1:], rest, "set_rng_state")
    return _set(tx, args[:1], kwargs, "cuda", torch.cuda.set_rng_state)


@rule(torch.random.manual_seed)
def _manual_seed(tx, args, kwargs) -> Variable:
    seed = (args or list(kwargs.values()) or [None])[0]
    if len(args) + len(kwargs) != 1 or not isinstance(seed, ConstVariable) or \
            type(seed.value) is not int:
        raise Unsupported(f"torch.manual_seed of a non-constant or non-int seed ({seed})")
    _state_node(tx.state, torch.random.manual_seed, (seed.value,))
    return ObjectVariable(torch.default_generator)


@rule(*CUDA_SEED_CALLS)
def _cuda_seed(tx, args, kwargs) -> Variable:
    raise Unsupported("seeding or reading all CUDA generators inside compiled code "
                      "(torch.cuda.manual_seed*, seed*, *_rng_state_all) is not captured")


def _process_constant(fn):
    """A query whose answer is fixed for the process (which accelerator, its module)."""
    def constant(tx, args, kwargs) -> Variable:
        if not all(isinstance(v, ConstVariable) for v in [*args, *kwargs.values()]):
            raise Unsupported(f"{fn.__qualname__} of non-constant arguments")
        result = fn(*[a.value for a in args], **{k: v.value for k, v in kwargs.items()})
        return ObjectVariable(result) if isinstance(result, types.ModuleType) else \
            ConstVariable(result)

    return constant


for _fn in (torch.accelerator.is_available, torch.cuda.is_available,
            torch.accelerator.current_accelerator, torch.get_device_module):
    rule(_fn)(_process_constant(_fn))


__all__ = ["CUDA_SEED_CALLS", "RngStateVariable"]
