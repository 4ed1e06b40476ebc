"""The 2-D tiled pointwise body: a [YBLOCK, XBLOCK] tile over (rows, cols), no per-element div.

    yindex = yoffset + tl.arange(0, YBLOCK)[:, None]     # rows: the outer merged dims
    xindex = xoffset + tl.arange(0, XBLOCK)[None, :]     # cols: the innermost merged dim
    x0 = yindex
    x1 = xindex
    tmp0 = tl.load(lse_ptr + (x0), ymask, other=0.0)                 # [YBLOCK, 1]: once a row
    tmp1 = tl.load(logits_ptr + (x1 + 50304*x0), ymask & xmask, other=0.0)

A pointwise kernel whose loop dims do not all merge into one (coalesce_dims: an operand
broadcast along a dim, a transposed read) would compute `xindex // cols` and `xindex % cols`
for every element in the 1-D body. Tiled, each access is a tile of only the dims its index
uses: a per-row value is loaded once per row, a bias once per column, and the outer dims are
split (by div/mod over `yindex`) once per row. One program per tile, tiles in row-major
order over a 1-D grid (no grid-dim limit on rows): `cdiv(cols, XBLOCK) * cdiv(rows, YBLOCK)`.

Rows start 16-byte aligned only when the row length is a multiple of the vector width; else
the 1-D body's flat accesses are the ones Triton can load as vectors. So a static row length
tiles only when it is such a multiple, and a symbolic one compiles both bodies: the launcher
runs the tiles where the row length is a multiple of 16 (`BlockConfig.cols_multiple`, the
divisibility Triton specialises sizes on), the 1-D body elsewhere.
"""

from __future__ import annotations

import dataclasses
import os

import sympy

from inductor.codegen.triton_group import Coalescing


# A static row shorter than this keeps the 1-D body: its tiles would leave lanes idle, and a
# division by a small constant is a multiply and a shift.
MIN_STATIC_COLS = 16


VECTOR_BYTES = 16  # one vector load or store


def pointwise_kinds(co: Coalescing, itemsize: int) -> tuple[str, ...]:
    """The bodies of a pointwise kernel: ("tiled",) when its loop dims merge into more than
    one and a static row of elements of `itemsize` bytes (the group's narrowest) keeps rows
    vector-aligned; ("tiled", "pointwise") when the row length is symbolic; else 1-D.
    SYMC_TRITON_TILED=0 keeps every pointwise kernel 1-D, =always tiles whatever the alignment
    (A/B timings, bisecting)."""
    mode = os.environ.get("SYMC_TRITON_TILED", "1")
    if len(co.new_vars) < 2 or mode == "0":
        return ("pointwise",)
    cols = co.ranges[-1]
    if mode == "always" and not (cols.is_Integer and int(cols) < MIN_STATIC_COLS):
        return ("tiled",)
    if not cols.is_Integer:
        return ("tiled", "pointwise")
    aligned = int(cols) * itemsize % VECTOR_BYTES == 0
    return ("tiled",) if aligned and int(cols) >= MIN_STATIC_COLS else ("pointwise",)


def rows_and_cols(co: Coalescing) -> tuple[sympy.Expr, sympy.Expr]:
    return sympy.Mul(*co.ranges[:-1]), co.ranges[-1]


def tile_dims(index: sympy.Expr, co: Coalescing, indirect) -> str:
    """Which tile dims an access through `index` spans: "y", "x" or "yx". An index that holds
    a loaded value (a gather) spans both (the value's own shape is not tracked); one without
    loop variables is anchored to the rows."""
    symbols = index.free_symbols
    if symbols & set(indirect):
        return "yx"
    y = bool(symbols & set(co.new_vars[:-1]))
    x = co.new_vars[-1] in symbols
    return ("y" if y or not x else "") + ("x" if x else "")


def tile_mask(dims: str) -> str:
    return " & ".join(f"{d}mask" for d in dims)


def anchored(text: str, index: sympy.Expr, co: Coalescing, dims: str) -> str:
    """`text` (a printed index) broadcast to the tile of `dims`: a scalar pointer cannot take
    a block mask, and a store's pointer must be as large as the tile its value may have (a
    load's pointer and mask broadcast with each other: a [YBLOCK, 1] read under a column
    condition is one)."""
    symbols = index.free_symbols
    if "y" in dims and not symbols & set(co.new_vars[:-1]):
        text = f"({text}) + 0 * yindex"
    if "x" in dims and co.new_vars[-1] not in symbols:
        text = f"({text}) + 0 * xindex"
    return text


def header_lines(co: Coalescing, printer, int64: bool, var_lines) -> list[str]:
    """The tile's indices, masks and loop variables (`var_lines` splits the row index)."""
    rows, cols = rows_and_cols(co)
    pid = "tl.program_id(0).to(tl.int64)" if int64 else "tl.program_id(0)"
    row_co = dataclasses.replace(co, new_vars=co.new_vars[:-1], ranges=co.ranges[:-1])
    return [
        f"ynumel = {printer(rows)}",
        f"xnumel = {printer(cols)}",
        f"pid = {pid}",
        "xblocks = tl.cdiv(xnumel, XBLOCK)",
        "yoffset = (pid // xblocks) * YBLOCK",
        "xoffset = (pid % xblocks) * XBLOCK",
        "yindex = yoffset + tl.arange(0, YBLOCK)[:, None]",
        "xindex = xoffset + tl.arange(0, XBLOCK)[None, :]",
        "ymask = yindex < ynumel",
        "xmask = xindex < xnumel",
        *var_lines(row_co, "yindex", printer),
        f"{co.new_vars[-1]} = xindex",
    ]
