"""`torch.distributed.get_rank()` / `get_world_size()` inside captured code.

They read the default process group, which does not change while it lives: each becomes a
constant guarded on the group object's identity, instead of an identity guard on a bound method
that is a new object at every access (a recompile on every call).
"""

from __future__ import annotations

import sys

from capture.sources import ModuleGlobalSource
from capture.variables import ConstVariable, Variable
from guards import IdentityGuard
from symbolic import AttrSource


def is_rank_query(value) -> bool:
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available():
        return False
    return value is dist.get_rank or value is dist.get_world_size


def rank_query(state, query) -> Variable:
    """The query's answer for the default group, guarded on that group."""
    c10d = sys.modules["torch.distributed.distributed_c10d"]
    world = c10d.GroupMember.WORLD
    source = AttrSource(ModuleGlobalSource(c10d.__name__, "GroupMember"), "WORLD")
    state.guard(IdentityGuard, source, id(world), "<default process group>")
    return ConstVariable(query())
