"""Block-size tables: which variants a kernel compiles, keyed by size class, never by a hint.

    reduction_configs(rnumel=768)   -> [persistent x2 r1024]          (static: one variant)
    reduction_configs(rnumel=s1)    -> [persistent r64, r256, r1024, r4096, looped r2048]
    reduction_configs(rnumel=s0*s1, layout="outer") -> [persistent x64 r16, x16 r64, looped x4 r512]

A static reduction size picks its block at codegen. A symbolic one gets a short list of
persistent variants (each serves rnumel <= RBLOCK; the first that fits wins at run time) and a
looped one for everything larger; value ranges drop variants no size can reach. The launcher
picks per call, so these tables are the whole set of compilations a kernel can ever make.
An *outer* reduction (`reduction_layout`: its large accesses are contiguous along x and strided
along r, a bias gradient `sum(g[B*T, C], 0)`) reads one column per lane: a [1, RBLOCK] tile
touches a 32-byte sector per element. Its tiles are wide in x and short in r instead, so
neighbouring lanes of a warp read neighbouring columns. On an H100 (bench/results/
gpu_kernel_profile_h100.json, GPT-2 step at T=512, r = 4096) looped x4 r512 ran the column sums
of [4096, 3072] f32 in 40 us where the row table's persistent x1 r4096 took 99 us (2304
columns: 37 us for 72). With few columns (768: 192 programs of x4) two per program did better:
persistent x2 r4096 took 17 us where x4 r512 took 26 and x1 r4096 26.
`use_table("tiny")` swaps in small blocks so tests under the interpreter reach the looped path,
tails and multi-block grids at sizes like 7 and 33.
"""

from __future__ import annotations

import contextlib

import sympy

from inductor.reduction_split import chunk_rows, reduction_layout  # noqa: F401 (re-exported)
from inductor.runtime.triton_launch import BlockConfig
from symbolic.ranges import bounds

TABLES = {
    "default": {
        "pointwise": (BlockConfig("pointwise", XBLOCK=1024, num_warps=4),),
        # [YBLOCK, XBLOCK] tiles of a pointwise kernel over rows x cols, widest first
        "tiled": ((1, 1024, 4), (4, 256, 4), (16, 64, 4), (64, 16, 4), (256, 4, 4)),
        "persistent": ((64, 16, 4), (256, 4, 4), (1024, 1, 4), (4096, 1, 8)),  # RBLOCK, XBLOCK, warps
        "looped": (2048, 1, 8),
        "max_persistent": 8192,
        # outer reductions: short rows only persist; XBLOCK wide enough for whole sectors
        "outer_persistent": ((16, 64, 4), (64, 16, 4)),
        "outer_looped": (512, 4, 4),
        # static rows (a split sum's partial kernel: 128): a whole 128-byte line per row of x
        "outer_rows": (32, 64, 4),
        # few columns (static xnumel below "narrow_below"): two per program, for more programs
        "outer_narrow": ((1024, 2, 4), (4096, 2, 8)),
        "narrow_below": 1536,
        "split_rows": 128,  # rows per program of a split sum's partial kernel
    },
    "tiny": {
        "pointwise": (BlockConfig("pointwise", XBLOCK=16, num_warps=1),),
        "tiled": ((2, 8, 1), (8, 2, 1)),
        "persistent": ((4, 4, 1), (16, 2, 1)),
        "looped": (8, 2, 1),
        "max_persistent": 16,
        "outer_persistent": ((4, 4, 1),),
        "outer_looped": (4, 4, 1),
        "outer_rows": (2, 4, 1),
        "outer_narrow": ((8, 2, 1),),
        "narrow_below": 8,
        "split_rows": 4,
    },
}
_ACTIVE = ["default"]
TILED_COLS_MULTIPLE = 16  # the divisibility Triton specialises an int argument on


@contextlib.contextmanager
def use_table(name: str):
    """Generate kernels with another block table inside the block (tests use "tiny")."""
    _ACTIVE.append(name)
    try:
        with chunk_rows(TABLES[name]["split_rows"]):
            yield
    finally:
        _ACTIVE.pop()


def active_table() -> dict:
    return TABLES[_ACTIVE[-1]]


def pointwise_configs() -> tuple[BlockConfig, ...]:
    return active_table()["pointwise"]


def tiled_configs(cols, ranges: dict, with_1d: bool = False) -> tuple[BlockConfig, ...]:
    """Tiles for a pointwise kernel over rows x `cols`: a static row length gets the widest
    tile that pads it by at most 1/8 (else the narrowest); a symbolic one every tile its value
    range allows, picked per launch by the same rule (BlockConfig.serves). `with_1d`: the
    kernel has a 1-D body too, which runs the row lengths that are not multiples of 16."""
    multiple = TILED_COLS_MULTIPLE if with_1d else 1
    tiles = tuple(BlockConfig("tiled", XBLOCK=xb, YBLOCK=yb, num_warps=w, cols_multiple=multiple)
                  for yb, xb, w in active_table()["tiled"])
    cols = sympy.sympify(cols)
    if cols.is_Integer:
        return (next((t for t in tiles if t.pads_little(int(cols))), tiles[-1]),)
    rng = bounds(cols, ranges)
    # a tile wider than the longest row, or one narrower than a wider tile that serves the
    # shortest row well, is never picked
    kept = [t for t in tiles if t.XBLOCK < 2 * rng.hi]
    for i, t in enumerate(kept):
        if rng.lo != float("inf") and rng.lo >= 8 * t.XBLOCK:
            return tuple(kept[: i + 1])
    return tuple(kept) or tiles[-1:]


def _next_pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


def _warps(elements: int, cap: int) -> int:
    return max(1, min(cap, elements // 256))


def reduction_configs(rnumel, ranges: dict, layout: str = "inner",
                      xnumel=None) -> tuple[BlockConfig, ...]:
    """Variants for a reduction over `rnumel` elements (see the module docstring)."""
    table = active_table()
    rnumel = sympy.sympify(rnumel)
    if layout == "outer":
        xnumel = sympy.sympify(xnumel) if xnumel is not None else None
        narrow = xnumel is not None and xnumel.is_Integer and int(xnumel) < table["narrow_below"]
        return _outer_configs(rnumel, ranges, table, narrow)
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


def _outer_configs(rnumel, ranges: dict, table: dict, narrow: bool) -> tuple[BlockConfig, ...]:
    """An outer reduction's variants: persistent for rows up to the table's short blocks (and,
    with few columns, up to its narrow blocks), looped with a wide-in-x tile beyond."""
    r_block, x_block, warps = table["outer_looped"]
    short = table["outer_persistent"] + (table["outer_narrow"] if narrow else ())
    if rnumel.is_Integer:
        n = int(rnumel)
        for block, xb, w in short:
            if n <= block:
                return (BlockConfig("persistent", XBLOCK=xb, RBLOCK=block, num_warps=w),)
        r_block, x_block, warps = table["outer_rows"]
        return (BlockConfig("looped", XBLOCK=x_block, RBLOCK=min(r_block, _next_pow2(n)),
                            num_warps=warps),)
    rng = bounds(rnumel, ranges)
    configs = []
    for block, xb, w in short:
        if rng.lo <= block:
            configs.append(BlockConfig("persistent", XBLOCK=xb, RBLOCK=block, num_warps=w))
        if rng.hi <= block:
            return tuple(configs)
    configs.append(BlockConfig("looped", XBLOCK=x_block, RBLOCK=r_block, num_warps=warps))
    return tuple(configs)
