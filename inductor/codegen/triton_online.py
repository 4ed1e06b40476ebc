"""Online softmax sums in looped reduction kernels: `sum(exp(x - c))` in the loop that finds
`max(x)`, with `c` a per-row value computed from that max after the loop.

A looped softmax (a row larger than any persistent block) needs the max before it can sum
`exp(x - max)`: a second pass over the row, and a third for the output. Here the sum runs in
the max's pass with a running shift per lane (`r`, the lane's running max, 0 where it is
infinite, as the decompositions' own `where(|max| == inf, 0, max)`):

    r_new = safe(maximum(m, x));  d = d * exp(r - r_new) + exp(x - r_new);  m, r = ..., r_new
    after the loop:  sum(exp(x - c)) = sum over lanes of d * exp(r - c)

which equals the two-pass sum for any per-row `c` (softmax's max, log_softmax's safe max,
cross-entropy's logsumexp shift). So softmax and log_softmax take two passes, not three.

The running shift is the row's, not the lane's: `r` is the max over all lanes of the max's
accumulator (one value per row and block), so the rescale `exp(r - r_new)` is one exponential
per row and block, and each element costs one `exp`. A shift per lane needs two per element, and
on the GPU the exponentials, not the memory, then set the speed of a cross-entropy over a 50k
vocabulary.

The writer calls `defer(writer, rhs)` before emitting a line: `x - c` (x reduced by a max of
this loop, c a finished value of this loop's post section) and `exp` of it become *deferred*
names that print nothing. A sum over a deferred `exp` is emitted by `online_sum`; any other use
of a deferred name raises NeedNewLoop in the writer, which re-runs the node in a new loop where
`c` is finished (the two-pass code, unchanged).
"""

from __future__ import annotations

import re

import torch

from inductor.codegen.triton_printer import triton_dtype

_SUB = re.compile(r"(\w+) - (\w+)")
_EXP = re.compile(r"tl\.exp\((\w+)\)")


def defer(w, rhs: str) -> str | None:
    """A deferred name for `rhs` when it is a step of `exp(x - c)` (module docstring)."""
    if w.kind != "looped" or w.masks:
        return None
    known = w.deferred_rhs.get(rhs)
    if known is not None:
        return known
    m = _SUB.fullmatch(rhs)
    if m is not None:
        x, c = m.groups()
        if not (w.section_of.get(x) == w.loop and w.section_of.get(c) == w.loop + 1
                and c not in w.r_names and (x, w.loop) in w.online_max):
            return None
        entry = ("diff", x, c, w.online_max[(x, w.loop)])
    else:
        m = _EXP.fullmatch(rhs)
        if m is None or w.deferred.get(m.group(1), ("",))[0] != "diff":
            return None
        entry = ("exp",) + w.deferred[m.group(1)][1:]
    name = w.new_name("online")
    w.deferred[name] = entry
    w.deferred_rhs[rhs] = name
    return name


def online_sum(w, entry: tuple, acc_dtype: torch.dtype) -> str:
    """Emit the running sum of `exp(x - c)` for a deferred `exp` entry; returns the row sum."""
    _, x, c, (masked_max, running_max) = entry
    loop, post = w.loop, w.loop + 1
    ty = triton_dtype(acc_dtype)
    r, d = w.new_name("acc"), w.new_name("acc")
    w.raw(0, f"{r} = tl.zeros([XBLOCK, 1], {ty})", r)
    w.raw(0, f"{d} = tl.zeros([XBLOCK, RBLOCK], {ty})", d)
    # the max's accumulator, already updated with this block's values, holds the row's running
    # max over its lanes; a NaN anywhere reaches the sum through its own `exp` term
    row_max = w.emit(f"tl.max({running_max}, 1)[:, None]", loop)
    r_new = w.emit(f"tl.where(tl.abs({row_max}) == float(\"inf\"), 0.0, {row_max})", loop)
    decay = w.emit(f"tl.where({d} == 0.0, 0.0, {d} * tl.exp({r} - {r_new}))", loop)
    term = w.emit(f"tl.where(xmask & rmask, tl.exp({masked_max} - {r_new}), 0.0)", loop)
    w.raw(loop, f"{d} = {decay} + {term}")
    w.raw(loop, f"{r} = {r_new}")
    w.section_of[r] = w.section_of[d] = 0
    total = w.emit(f"tl.sum({d}, 1)[:, None]", post)
    return w.emit(f"tl.where({total} == 0.0, 0.0, {total} * tl.exp({r} - {c}))", post)
