"""torch's generator-state calls inside a graph: they switch the graph's random stream.

    torch.manual_seed(42)          # draws after it: a function of 42 and the sizes only
    s = torch.get_rng_state()      # -> an RngState (a snapshot), not a tensor
    torch.set_rng_state(s)         # draws after it repeat those after the get

See prims/generators.py (streams, and what the generators look like after the call).
"""

from __future__ import annotations

import torch

from prims.decompositions.registry import register_decomposition
from prims.generators import get_state, manual_seed, set_state


@register_decomposition(torch.random.get_rng_state)
def get_rng_state():
    return get_state("cpu")


@register_decomposition(torch.cuda.get_rng_state)
def cuda_get_rng_state(device="cuda"):
    return get_state("cuda")


@register_decomposition(torch.random.set_rng_state, torch.cuda.set_rng_state)
def set_rng_state(new_state, device="cuda"):
    set_state(new_state)


@register_decomposition(torch.random.manual_seed)
def manual_seed_(seed):
    manual_seed(seed)
