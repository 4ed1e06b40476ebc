"""Split sums with few outputs over long rows into per-chunk partial sums and a final sum.

    sum(g[B*T, 3072], 0)  ->  partial[S, 3072] = sums of rows s*ROWS .. s*ROWS + ROWS-1
                              out[3072]        = sum(partial, 0)       S = ceil(B*T / ROWS)

One kernel over 3072 outputs has 3072 / XBLOCK programs whatever B*T is: a GPU of 132 SMs
runs a column sum of 4096 x 3072 in 48 programs of 64 columns, or in 768 programs of 4 columns
that read 16 of each 32-byte sector. The partial kernel has S times more programs, each a tile
of ROWS rows (a fixed number: S grows with the rows at run time, from the sizes, so one
compilation serves every B*T), wide along the contiguous dim; the final sum reads S x 3072
floats, 1/ROWS of the input. Rows past B*T in the last chunk are masked (`ops.masked`), so
B*T = 1 is one chunk with one real row. Partial sums are float32 (float64 for float64 data)
whatever the dtype of the sum, so a bf16 bias gradient is summed in f32 and rounded once; the
order of the additions differs from eager's (tests compare with a tolerance). No atomics: every
output is the same sum of the same partials on every run.

Which reductions split (`split_layout`, decided from the IR, never from a size hint):
  - a float sum (out and source dtypes floating), static outputs (N = product of x ranges);
  - rows that can be longer than `MIN_CHUNKS` chunks (the Analyzer does not prove otherwise);
  - an *outer* layout (the reduced dim is strided, the kept one contiguous: a bias or
    layer-norm weight gradient). A row reduction (inner layout) has one program per output
    row and reads its row contiguously; with very few outputs (a loss mean over B*T rows)
    the rows are short in GPT-like steps, and a second launch would cost more than it saves.
Only backends whose kernels are GPU-shaped split (compile.py: not the C++/OpenMP one).
"""

from __future__ import annotations

import contextlib

import sympy
import torch

from inductor.ir import Buffer, LoopNode, product, ravel, reduction_node, unravel
from inductor.ops import CountingHandler, ops, reduction_op, use_handler
from prims.opcodes import PrimOp
from symbolic import FloorDiv

ROWS = [128]  # rows per partial program (a stack: `chunk_rows` sets it, tests use few)
MIN_CHUNKS = 8  # rows provably at most MIN_CHUNKS * ROWS: one kernel is enough


@contextlib.contextmanager
def chunk_rows(n: int):
    """Split with `n` rows per partial program inside the block (triton_configs.use_table)."""
    ROWS.append(int(n))
    try:
        yield
    finally:
        ROWS.pop()


def reduction_layout(exprs, xvars, rvars) -> str:
    """"outer" when more of the r-dependent accesses in `exprs` (index expressions over the
    kernel's loop vars, innermost last) are contiguous along x and strided along r than are
    contiguous along r; else "inner". Accesses that do not vary with x (a per-row vector
    broadcast over columns) are small and do not vote."""
    if not xvars or not rvars:
        return "inner"
    x_inner, r_inner = xvars[-1], rvars[-1]
    outer = inner = 0
    for e in exprs:
        e = sympy.expand(sympy.sympify(e))
        free = e.free_symbols
        if not free & set(rvars) or not free & set(xvars):
            continue
        r_step = e.coeff(r_inner) if r_inner in free else 0
        x_step = e.coeff(x_inner) if x_inner in free else 0
        if r_step == 1:
            inner += 1
        elif x_step == 1 and r_step != 0:
            outer += 1
    return "outer" if outer > inner else "inner"


def _loop_vars(prefix: str, sizes) -> tuple:
    """Loop vars for `sizes` with the size-1 dims left out (they index with 0)."""
    return tuple(sympy.Symbol(f"{prefix}{i}", integer=True, nonnegative=True)
                 for i, s in enumerate(sizes) if sympy.sympify(s) != 1)


def _with_zeros(sizes, vars_) -> tuple:
    it = iter(vars_)
    return tuple(sympy.Integer(0) if sympy.sympify(s) == 1 else next(it) for s in sizes)


def split_layout(ranges, rranges, op, src_dtype, out_dtype, inner, an) -> str | None:
    """The layout of a reduction the rules above split, else None."""
    if reduction_op(op) != PrimOp.SUM or not (src_dtype.is_floating_point
                                              and out_dtype.is_floating_point):
        return None
    outputs = product(ranges)
    if not outputs.is_Integer:
        return None
    rows = product(rranges)
    if an.prove(sympy.Le(rows, MIN_CHUNKS * ROWS[-1])) is True:
        return None
    xvars, rvars = _loop_vars("x", ranges), _loop_vars("r", rranges)
    counter = CountingHandler()
    with use_handler(counter):
        inner(_with_zeros(ranges, xvars), _with_zeros(rranges, rvars))
    layout = reduction_layout([index for _, index in counter.loads], xvars, rvars)
    return layout if layout == "outer" else None


def split_nodes(new_name, new_buffer, out: Buffer, ranges, rranges, op, src_dtype,
                inner) -> tuple[LoopNode, LoopNode]:
    """(partial node, final node) computing `out[x] = sum_r inner(x, r)` in two kernels;
    `new_name(prefix)` and `new_buffer(size, dtype, device)` are the lowering's."""
    rows, chunk = product(rranges), ROWS[-1]
    chunks = FloorDiv(rows + (chunk - 1), chunk)
    wide = torch.float64 in (src_dtype, out.dtype)
    acc = torch.float64 if wide else torch.float32
    partial = new_buffer((chunks,) + tuple(ranges), acc, out.layout.device)

    def partial_inner(xvars, rvars):
        row = xvars[0] * chunk + rvars[0]
        return ops.masked(_inside(row, rows), lambda: inner(xvars[1:], unravel(row, rranges)),
                          ops.constant(0.0, src_dtype))

    def final_inner(xvars, rvars):
        return ops.load(partial.name, partial.layout.index((rvars[0],) + tuple(xvars)))

    first = reduction_node(new_name("node"), (partial,), (chunks,) + tuple(ranges), (chunk,),
                           op, src_dtype, partial_inner, split_rows=(tuple(rranges), chunk))
    final = reduction_node(new_name("node"), (out,), tuple(ranges), (chunks,), op, acc,
                           final_inner)
    return first, final


def _inside(row, rows):
    """The lanes whose row is a real one (the last chunk runs past the rows)."""
    return ops.lt(ops.index_expr(row, torch.int64), ops.index_expr(rows, torch.int64))


# -- a producer in the partial kernel ----------------------------------------------------------
# The pointwise node that computes what a column sum reads (gelu's backward before the fc1
# bias gradient) runs in the partial kernel's tile: each program writes its rows x columns of
# the node's output and sums them, so the output is not read back by a second kernel.

def rows_prefix(ranges, split_rows: tuple, col_ranges, an) -> int | None:
    """k when a pointwise node over `ranges` is (row dims ranges[:k], column dims ranges[k:])
    of the split sum with `split_rows` over `col_ranges` (products proved equal), else None."""
    rows, cols = product(split_rows[0]), product(col_ranges)
    for k in range(1, len(ranges)):
        if an.equal(product(ranges[:k]), rows) and an.equal(product(ranges[k:]), cols):
            return k
    return None


def run_over_rows(node: LoopNode, split_rows: tuple, k: int, col_ranges, xvars, rvars) -> None:
    """Run pointwise `node` at the rows (x0 * chunk + r0) and columns (x1...) of a partial
    kernel's tile, its loads and stores masked past the last row (`ops` must be installed)."""
    row_ranges, chunk = split_rows
    row = xvars[0] * chunk + rvars[0]
    index = unravel(row, node.ranges[:k]) + unravel(ravel(xvars[1:], col_ranges), node.ranges[k:])
    done = ops.constant(0, torch.int32)

    def body():
        node.body(index, ())
        return done
    ops.masked(_inside(row, product(row_ranges)), body, done)


# -- final sums at the end ---------------------------------------------------------------------
# A final sum is small (chunks x columns) and usually a gradient nothing else in the graph reads:
# moved after every other node, the finals over the same columns (a layer-norm's weight and
# bias gradients, the projections' biases, of every layer) fuse (scheduler.MAX_REDUCTIONS a
# kernel: a GPT-2 step's 72 finals over 768 columns are 5 kernels of 48 programs).

def sink_finals(nodes: list) -> list:
    """`nodes` with each split sum's final node, and the pointwise nodes that read only what
    such nodes write (a cast of the gradient), moved to the end, grouped by their columns.
    A node stays where it is when a node that does not move reads what it writes."""
    partials = {b.name for n in nodes if isinstance(n, LoopNode) and n.split_rows
                for b in n.outputs}
    if not partials:
        return nodes
    written_by: dict[str, str] = {}  # sunk buffer -> the columns key of its final
    key: dict[str, tuple] = {}
    for n in nodes:
        if not isinstance(n, LoopNode):
            continue
        reads = n.reads()
        if n.kind == "reduction" and reads and reads <= partials and not n.split_rows:
            key[n.name] = tuple(str(s) for s in n.ranges)
        elif n.kind == "pointwise" and reads and all(r in written_by for r in reads):
            key[n.name] = written_by[next(iter(sorted(reads)))]
        else:
            continue
        for b in n.outputs:
            written_by[b.name] = key[n.name]
    changed = True
    while changed:  # a node read by one that stays, stays (and so on up its inputs)
        changed = False
        staying_reads = set().union(*(n.reads() for n in nodes
                                      if getattr(n, "name", None) not in key))
        for n in nodes:
            if n.name in key and {b.name for b in n.outputs} & staying_reads:
                del key[n.name]
                changed = True
    order = {}
    for n in nodes:
        if n.name in key:
            order.setdefault(key[n.name], len(order))
    stay = [n for n in nodes if n.name not in key]
    moved = [n for n in nodes if n.name in key]
    return stay + sorted(moved, key=lambda n: order[key[n.name]])
