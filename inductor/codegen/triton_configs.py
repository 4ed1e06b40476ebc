"""Block-size tables: which variants a kernel compiles, keyed by size class, never by a hint.

    reduction_configs(rnumel=768)   -> [persistent x2 r1024]          (static: one variant)
    reduction_configs(rnumel=s1)    -> [persistent r64, r256, r1024, r4096, looped r2048]

A static reduction size picks its block at codegen. A symbolic one gets a short list of
persistent variants (each serves rnumel <= RBLOCK; the first that fits wins at run time) and a
looped one for everything larger; value ranges drop variants no size can reach. The launcher
picks per call, so these tables are the whole set of compilations a kernel can ever make.
`use_table("tiny")` swaps in small blocks so tests under the interpreter reach the looped path,
tails and multi-block grids at sizes like 7 and 33.
"""

from __future__ import annotations

import contextlib

import sympy

from inductor.runtime.triton_launch import BlockConfig
from symbolic.ranges import bounds

TABLES = {
    "default": {
        "pointwise": (BlockConfig("pointwise", XBLOCK=1024, num_warps=4),),
        "persistent": ((64, 16, 4), (256, 4, 4), (1024, 1, 4), (4096, 1, 8)),  # RBLOCK, XBLOCK, warps
        "looped": (2048, 1, 8),
        "max_persistent": 8192,
    },
    "tiny": {
        "pointwise": (BlockConfig("pointwise", XBLOCK=16, num_warps=1),),
        "persistent": ((4, 4, 1), (16, 2, 1)),
        "looped": (8, 2, 1),
        "max_persistent": 16,
    },
}
_ACTIVE = ["default"]


@contextlib.contextmanager
def use_table(name: str):
    """Generate kernels with another block table inside the block (tests use "tiny")."""
    _ACTIVE.append(name)
    try:
        yield
    finally:
        _ACTIVE.pop()


def active_table() -> dict:
    return TABLES[_ACTIVE[-1]]


def pointwise_configs() -> tuple[BlockConfig, ...]:
    return active_table()["pointwise"]


def _next_pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


def _warps(elements: int, cap: int) -> int:
    return max(1, min(cap, elements // 256))


def reduction_configs(rnumel, ranges: dict) -> tuple[BlockConfig, ...]:
    """Variants for a reduction over `rnumel` elements (see the module docstring)."""
    table = active_table()
    rnumel = sympy.sympify(rnumel)
    r_block, x_block, warps = table["looped"]
    looped = BlockConfig("looped", XBLOCK=x_block, RBLOCK=r_block, num_warps=warps)
    if rnumel.is_Integer:
        n = int(rnumel)
        if n <= table["max_persistent"]:
            block = _next_pow2(n)
            biggest = table["persistent"][-1]
            per_block = biggest[0] * biggest[1]
            xb = max(1, min(64, per_block // block))
            cap = max(w for _, _, w in table["persistent"])
            return (BlockConfig("persistent", XBLOCK=xb, RBLOCK=block,
                                num_warps=_warps(block * xb, cap)),)
        return (looped,)
    rng = bounds(rnumel, ranges)
    configs = []
    for block, xb, w in table["persistent"]:
        if rng.lo <= block:  # some size in range fits this variant
            configs.append(BlockConfig("persistent", XBLOCK=xb, RBLOCK=block, num_warps=w))
        if rng.hi <= block:
            break
    if rng.hi > table["persistent"][-1][0]:
        configs.append(looped)
    return tuple(configs)
