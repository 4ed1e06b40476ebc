"""torch's generator-state calls inside a graph: they switch the graph's random stream.

    torch.manual_seed(42)          # draws after it: a function of 42 and the sizes only
    s = torch.get_rng_state()      # -> an RngState (stream and offset), not a tensor
    torch.set_rng_state(s)         # draws after it repeat those after the get

See prims/random.py (streams, and what the generator looks like after the call).
"""

from __future__ import annotations

import torch

from prims.decompositions.registry import register_decomposition
from prims.random import get_state, manual_seed, set_state


@register_decomposition(torch.random.get_rng_state)
def get_rng_state():
    return get_state()


@register_decomposition(torch.random.set_rng_state)
def set_rng_state(new_state):
    set_state(new_state)


@register_decomposition(torch.random.manual_seed)
def manual_seed_(seed):
    manual_seed(seed)
