"""Row reductions with several vector accumulators: a blocked copy of the r loop.

An `omp simd reduction(+:acc)` loop keeps one vector accumulator, so each iteration waits for
the previous add (3-4 cycles for 8 floats): a 768-float row sum is latency bound. The reduction
is split instead (inductor/codegen/cpp.py calls `insert_blocked` after writing the r loop):

    int64_t rtail = s1 - s1 % 16;
    float acc_b[16]; for (j) acc_b[j] = <identity>;
    for (int64_t rb = 0; rb < rtail; rb += 16) {
      #pragma omp simd
      for (int64_t rj = 0; rj < 16; ++rj) { int64_t r0 = rb + rj; <body>; acc_b[rj] += v; }
    }
    #pragma omp simd reduction(+:acc)
    for (int64_t r0 = rtail; r0 < s1; ++r0) { <body>; acc += v; }      // the original loop
    for (j) acc += acc_b[j];

gcc keeps `acc_b` in BLOCK / lanes registers (2 on AVX2) that advance independently; the
remainder runs in the original loop. The sum's order changes (lanes, then blocks: a pairwise
flavour, no less accurate); max and min are exact in any order. Applies to float sum, max and
min over one contiguous r dimension (the two-pass variance's sums too), not to a full reduction
split across threads (its r loop is already per-thread partials), argmax or Welford.
"""

from __future__ import annotations

import sympy
import torch

from prims.opcodes import PrimOp as P

BLOCK = 16  # elements per block: 2 AVX2 vectors of float (measured: 16 beat 32 and 64 here)
BLOCKABLE = (P.SUM, P.AMAX, P.AMIN)


def blockable(writer, rtype, dtype) -> bool:
    """Whether a reduction of this type, in the writer's current r loop, gets a blocked copy."""
    rranges = writer.group.rranges
    if writer.split_r or len(rranges) != 1 or dtype not in (torch.float32, torch.float64):
        return False
    size = sympy.sympify(rranges[0])
    return rtype in BLOCKABLE and not (size.is_number and int(size) < 2 * BLOCK)


def start_tail(writer, for_at: int) -> str:
    """Makes the r loop written at line `for_at` start at a new variable (returned): the
    remainder after the blocks."""
    v = writer.rvars[0].name
    tail = writer.fresh("rtail")
    head = f"for (int64_t {v} = 0;"
    line = writer.lines[for_at]
    if head not in line:
        raise RuntimeError(f"blocked reduction: expected the r loop at line {for_at}, found "
                           f"{line.strip()!r}")
    writer.lines[for_at] = line.replace(head, f"for (int64_t {v} = {tail};", 1)
    return tail


def insert_blocked(writer, node, at: int, tail: str, arrays, target, end_of_loop) -> None:
    """Writes the blocked copy of `node`'s r loop at line `at` (before the original loop and
    its hoisted lines): `arrays` are (ctype, name, init) of the block accumulators, and
    `target(suffix)` points the writer's reduction at `name + suffix` (None: back). The caller
    merges the blocks after the original loop."""
    saved = writer.lines
    writer.lines = []
    stop = writer.index(writer.group.rranges[0])
    writer.line(f"int64_t {tail} = {stop} - {stop} % {BLOCK};")
    for ctype, name, init in arrays:
        writer.line(f"{ctype} {name}_b[{BLOCK}];")
        writer.line(f"for (int64_t symc_j = 0; symc_j < {BLOCK}; ++symc_j) "
                    f"{name}_b[symc_j] = {init};")
    hoist_at, pad = writer._begin_r_body(), "  " * writer.indent
    block, lane = writer.fresh("rb"), writer.fresh("rj")
    writer.line(f"for (int64_t {block} = 0; {block} < {tail}; {block} += {BLOCK}) {{")
    writer.indent += 1
    writer.line("#pragma omp simd")
    writer.line(f"for (int64_t {lane} = 0; {lane} < {BLOCK}; ++{lane}) {{")
    writer.indent += 1
    writer.line(f"int64_t {writer.rvars[0].name} = {block} + {lane};")
    target(f"_b[{lane}]")
    try:
        node.body(writer.ops, writer.xvars, writer.rvars)
    except end_of_loop:
        pass
    finally:
        target(None)
    writer._close(2)
    writer._end_r_body(hoist_at, pad)
    blocked, writer.lines = writer.lines, saved
    writer.lines[at:at] = blocked


def merge_line(merges: list[str]) -> str:
    """The loop folding the blocks into the accumulators (`merges` use `_b[symc_j]`)."""
    return f"for (int64_t symc_j = 0; symc_j < {BLOCK}; ++symc_j) {{ {' '.join(merges)} }}"
