"""Column reductions on the CPU: rows outer, a vector of accumulators over contiguous columns.

    out[c] = sum_r g[r, c]         g: [rows, cols], a bias or layer-norm weight gradient

    for (int64_t cblk = 0; cblk < nb; ++cblk) {      // blocks of cb columns (threads: below)
      int64_t xb = cblk * cb, xn = std::min<int64_t>(cb, cols - xb);
      float acc[1024], acc_c[1024]; for (xi < xn) acc[xi] = 0;
      for (int64_t rc = 0; rc < rows; rc += 128) {  // chunks: acc_c from 0, then added to acc
        for (; r0 + 4 <= rend; r0 += 4) {            // then the chunk's last rows one at a time
          #pragma omp simd
          for (int64_t xi = 0; xi < xn; ++xi) {
            int64_t x0 = xb + xi;
            float acc_u = 0; acc_u += g[x0 + cols * r0]; ... acc_u += g[x0 + cols * (r0 + 3)];
            acc_c[xi] += acc_u;
        } }
        for (xi < xn) acc[xi] += acc_c[xi];
      }
      for (int64_t xi = 0; xi < xn; ++xi) { int64_t x0 = xb + xi; out[x0] = acc[xi]; }
    }

cpp.py's loops walk each column down the rows instead: a strided gather per element, no vector
loads. Here each row is read contiguously and the inner loop is a vector add into L1-resident
accumulators. Threads are chosen at run time from the sizes (one kernel for every size): over
column blocks when each thread gets MIN_COLS columns or more; else (few columns, many rows) over
the rows, each thread summing its static share into its own accumulators, merged in thread order
(deterministic for a given thread count, as cpp.py's full reductions); one thread: no parallel
region. Several reductions over the same rows (a layer norm's weight and bias gradients) share one
pass. Applies (`outer_plan`) to a reduction kernel whose accesses are mostly contiguous along x and
strided along r (reduction_split.reduction_layout), whose reductions are sum/prod/max/min, and
whose nodes read nothing the kernel writes.
"""

from __future__ import annotations

import sympy

from inductor.codegen.cpp_accumulator import Accumulator, in_thread_order
from inductor.codegen.cpp_ops import COMPUTE_CTYPE, CV
from inductor.ir import index_vars, product
from inductor.ops import CountingHandler, reduction_op
from inductor.reduction_split import reduction_layout
from prims.opcodes import PrimOp as P

MAX_COLS = 1024  # accumulators per reduction and block (4 KiB of float: stays in L1)
MIN_COLS = 64  # columns per thread (256 bytes of float a row) below which threads split rows
CHUNK = 128  # rows summed into fresh accumulators before they are added to the block's
UNROLL = 4  # rows an iteration adds to the accumulators (measured: [1152, 192] 24 -> 14 us)
# ... only when the kernel's bodies are this cheap (ops per element, all nodes): a fused
# producer (a gelu backward) is written UNROLL + 1 times per variant, and gcc's time grows with
# it (the demo GPT's first step, cold cache: 13.5 s before this module, 20.5 s with every kernel
# unrolled, 16.1 s with none), while its arithmetic hides what the unroll saves in loads
UNROLL_MAX_OPS = 8
LANES = 16  # a block's width is a multiple of it (two AVX2 vectors of float)
OUTER_RTYPES = (P.SUM, P.PROD, P.AMAX, P.AMIN)  # merged by their own update


def _carry(names: list[str], sizes: list[str]) -> str:
    """Advances the r vars `names` (innermost last) by one row."""
    text = f"++{names[0]};"
    for v, size in zip(names[1:], sizes[1:]):  # the innermost var's test outermost
        text = f"if (++{v} == {size}) {{ {v} = 0; {text} }}"
    return text if len(names) > 1 else ""


def opaque(names: list[str]) -> str:
    """A statement after which gcc knows nothing of the values of the int64 `names` (an empty
    asm that may change them): what it would derive from them misleads its loop optimizer."""
    return f'__asm__("" : {", ".join(f"{chr(34)}+r{chr(34)}({n})" for n in names)});'


class _Survey(CountingHandler):
    """Loads, stores and the reductions (dtype, src dtype, type) of one node's body."""

    def __init__(self):
        super().__init__()
        self.reductions: list[tuple] = []

    def reduction(self, dtype, src_dtype, reduction_type, value):
        self.reductions.append((dtype, src_dtype, reduction_op(reduction_type)))
        return super().reduction(dtype, src_dtype, reduction_type, value)


def outer_plan(group) -> list | None:
    """Per node of `group`, its reduction (dtype, src dtype, type) or None (a pointwise node),
    when the group is a column reduction this module writes; else None."""
    if not (group.is_reduction and group.xranges):
        return None
    xvars, rvars = index_vars("x", len(group.xranges)), index_vars("r", len(group.rranges))
    loads, stored, plan = [], [], []
    for node in group.nodes:
        survey = _Survey()
        node.body(survey, xvars, rvars)
        if len(survey.reductions) != (node.kind == "reduction"):
            return None
        if any(rtype not in OUTER_RTYPES for _, _, rtype in survey.reductions):
            return None
        loads += survey.loads
        stored += [name for name, _ in survey.stores]
        plan.append(survey.reductions[0] if survey.reductions else None)
    if {name for name, _ in loads} & set(stored) or len(set(stored)) != len(stored):
        return None  # a node reads what another writes: cpp.py forwards it per row
    if reduction_layout([index for _, index in loads], xvars, rvars) != "outer":
        return None
    return plan


def _cheap(group) -> bool:
    """Whether `group`'s node bodies together cost at most UNROLL_MAX_OPS ops per element."""
    xvars, rvars = index_vars("x", len(group.xranges)), index_vars("r", len(group.rranges))
    counter = CountingHandler()
    for node in group.nodes:
        node.body(counter, xvars, rvars)
    return counter.count <= UNROLL_MAX_OPS


class _Block:
    """The statements of one column block of an outer reduction kernel."""

    def __init__(self, w, plan, end_of_loop, resume_ops):
        self.w, self.plan = w, plan
        self.end_of_loop, self.resume_ops = end_of_loop, resume_ops
        self.accs: list[Accumulator | None] = []

    def _accumulators(self) -> None:
        self.accs = [None if spec is None else
                     Accumulator(self.w, spec[2], spec[0], CV("", spec[1])) for spec in self.plan]

    def decl(self, suffix: str, n: str) -> None:
        """Each reduction's accumulator array, its first `n` entries the identity."""
        for acc in filter(None, self.accs):
            self.w.line(f"{acc.ct} {acc.names[0]}{suffix}[{MAX_COLS}];")
        self._fill(suffix, n)

    def _fill(self, suffix: str, n: str) -> None:
        for acc in filter(None, self.accs):
            name = acc.names[0] + suffix
            if n != "0":
                self.w.line(f"for (int64_t xi = 0; xi < {n}; ++xi) {name}[xi] = {acc.init[0]};")

    def _columns(self, xb: str, n: str, simd: bool) -> None:
        """Opens the loop over the block's columns; the innermost x var is `xb + xi`."""
        if simd:
            self.w.line("#pragma omp simd")
        self.w.line(f"for (int64_t xi = 0; xi < {n}; ++xi) {{")
        self.w.indent += 1
        self.w.line(f"int64_t {self.w.xvars[-1].name} = {xb} + xi;")

    def rows(self, xb: str, n: str, lo: str, hi: str, suffix: str) -> None:
        """The pass over rows [lo, hi) (a flat index over the r dims), each a vector loop over
        the block's columns, CHUNK rows at a time into `<acc>_c[xi]`, each chunk folded into
        `<acc><suffix>[xi]` (a float32 sum's error grows with CHUNK + rows / CHUNK, not rows).
        UNROLL rows an iteration first (one load and store of the accumulators for them), then
        the chunk's remaining rows one at a time."""
        w = self.w
        rvars, sizes = w.rvars, [w.index(s) for s in w.group.rranges]
        if len(rvars) > 1:  # r vars of row `lo`, then advanced with carries
            for k, v in enumerate(rvars):
                inner = " * ".join(f"({s})" for s in sizes[k + 1:]) or "1"
                start = f"({lo} / ({inner}))" + (f" % ({sizes[k]})" if k else "")
                w.line(f"int64_t {v.name} = {'0' if lo == '0' else f'{lo} < {hi} ? {start} : 0'};")
        self.decl("_c", "0")
        row = rvars[0].name if len(rvars) == 1 else w.fresh("rr")
        hoist_at, pad = w._begin_r_body(), "  " * w.indent
        w.r_defined.update(("xi", w.xvars[-1].name))
        w.line(f"for (int64_t rc = {lo}; rc < {hi}; rc += {CHUNK}) {{")
        w.indent += 1
        self._fill("_c", n)
        w.line(f"int64_t rend = std::min<int64_t>({hi}, rc + {CHUNK}), {row} = rc;")
        for step in (UNROLL, 1) if _cheap(w.group) else (1,):
            w.line(f"for (; {row} + {step} <= rend; {row} += {step}) {{")
            w.indent += 1
            sets = self._row_sets(step)
            self._columns(xb, n, simd=True)
            self._row_bodies(sets)
            w._close(1)
            if len(rvars) > 1:  # the next row: the last one's r vars, advanced
                if step > 1:
                    w.line(" ".join(f"{v.name} = {u};" for v, u in zip(rvars, sets[-1])))
                w.line(_carry([v.name for v in rvars], sizes))
            w._close(1)
        for text in self.fold(suffix, "_c", n):
            w.line(text)
        w._close(1)
        w._end_r_body(hoist_at, pad)

    def _row_sets(self, step: int) -> list[tuple]:
        """The r vars of each of `step` consecutive rows from the current one (several r dims:
        declared, each the previous one advanced by a carry)."""
        w = self.w
        rvars, sizes = w.rvars, [w.index(s) for s in w.group.rranges]
        if len(rvars) == 1:
            return [(rvars[0] + k,) for k in range(step)]
        sets = [tuple(rvars)]
        for k in range(1, step):
            names = [f"{v.name}_{k}" for v in rvars]
            w.line("int64_t " + ", ".join(f"{m} = {p}" for m, p in zip(names, sets[-1])) + ";")
            w.line(_carry(names, sizes))
            sets.append(tuple(sympy.Symbol(m, integer=True, nonnegative=True) for m in names))
        # gcc's view of carried r vars (measured on a [16, 72, 192] sum: 2.5x slower, gathers
        # with a known width)
        w.line(opaque([str(v) for row in sets for v in row]))
        w.r_defined.update(str(v) for row in sets[1:] for v in row)
        return sets

    def _row_bodies(self, sets: list[tuple]) -> None:
        """The nodes' r-loop work at each row of `sets`; the reductions update `<acc>_c[xi]`
        once, through `<acc>_u` over the rows when there are several."""
        w = self.w
        several = len(sets) > 1
        for acc in filter(None, self.accs) if several else ():
            w.line(f"{acc.ct} {acc.names[0]}_u = {acc.init[0]};")
        for rvars in sets:
            for node, acc in zip(w.group.nodes, self.accs):
                if node.kind == "reduction":
                    w.block_acc = (acc, "_u" if several else "_c[xi]")
                    try:
                        node.body(w.ops, w.xvars, rvars)
                    except self.end_of_loop:
                        pass
                    finally:
                        w.block_acc = None
                elif node.uses_r:
                    node.body(w.ops, w.xvars, rvars)
        for acc in filter(None, self.accs) if several else ():
            for text in acc.update(CV(f"{acc.names[0]}_u", acc.dtype), "0", "_c[xi]"):
                w.line(text)

    def epilogue(self, xb: str, n: str) -> None:
        """Each node's work after its reduction (and the x-only pointwise nodes), per column."""
        w = self.w
        w.forwarded = {}
        self._columns(xb, n, simd=False)  # gcc makes a copy a memcpy (no `omp simd` needed)
        top = len(w.lines)
        for node, acc in zip(w.group.nodes, self.accs):
            if acc is not None:
                result = CV(f"{acc.names[0]}[xi]", acc.dtype)
                node.body(self.resume_ops(w.ops, result), w.xvars, w.rvars)
            elif not node.uses_r:
                node.body(w.ops, w.xvars, w.rvars)
        pad = "  " * w.indent  # the stored values' variables (cpp.py forwards them)
        w.lines[top:top] = [f"{pad}{COMPUTE_CTYPE[w.group.buffers[name]]} {var};"
                            for (name, _), var in sorted(w.forwarded.items())]
        w._close(1)

    def fold(self, into: str, part: str, n: str) -> list[str]:
        """`<acc><into>[xi]` updated with `<acc><part>[xi]` for the block's columns."""
        updates = [text for acc in filter(None, self.accs) for text in acc.update(
            CV(f"{acc.names[0]}{part}[xi]", acc.dtype), "0", f"{into}[xi]")]
        return [f"for (int64_t xi = 0; xi < {n}; ++xi) {{", *("  " + t for t in updates), "}"]

    def merge(self, n: str) -> None:
        """Folds this thread's accumulators into the shared ones, threads in order."""
        for text in in_thread_order(self.fold("", "_p", n)):
            self.w.line(text)


def _blocks(w, threads: str | None) -> tuple[str, str]:
    """Declares the block count and width over the innermost x dim: at most MAX_COLS columns
    a block, at least `threads` blocks over all x (None: one thread), a multiple of LANES wide."""
    g = w.group
    cols, outer = w.index(g.xranges[-1]), w.index(product(g.xranges[:-1]))
    nb, cb = w.fresh("nb"), w.fresh("cb")
    w.line(f"int64_t {nb} = ({cols} + {MAX_COLS - 1}) / {MAX_COLS};")
    if threads is not None:
        w.line(f"{nb} = std::max<int64_t>({nb}, ({threads} + {outer} - 1) / ({outer}));")
    w.line(f"int64_t {cb} = std::max<int64_t>(1, {nb});")
    w.line(f"{cb} = std::max<int64_t>({LANES}, (({cols} + {cb} - 1) / {cb} + {LANES - 1}) / "
           f"{LANES} * {LANES});")
    w.line(f"{nb} = ({cols} + {cb} - 1) / {cb};")
    return nb, cb


def _variant(w, block: _Block, threads: str | None, split_rows: bool) -> None:
    """One copy of the loops: threads over the blocks (`threads`, not `split_rows`), over the
    rows of each block (`split_rows`), or none."""
    g = w.group
    block._accumulators()
    nb, cb = _blocks(w, None if split_rows else threads)
    parallel = threads is not None and not split_rows
    if parallel:
        w.line(f"#pragma omp parallel for collapse({len(g.xranges)}) num_threads({threads})")
    opened = w._open_loops(w.xvars[:-1], g.xranges[:-1], None)
    w.line(f"for (int64_t cblk = 0; cblk < {nb}; ++cblk) {{")
    w.indent += 1
    cols, rows = w.index(g.xranges[-1]), w.index(product(g.rranges))
    w.line(f"int64_t xb = cblk * {cb}, xn = std::min<int64_t>({cb}, {cols} - xb);")
    w.line(opaque(["xn"]))  # a constant width: gcc unrolls the row loop badly (5x slower)
    block.decl("", "xn")
    if split_rows:
        w.line(f"#pragma omp parallel num_threads({threads})")
        w.line("{")
        w.indent += 1
        block.decl("_p", "xn")
        w.line("int64_t lo, hi;")
        w.line(f"symc_thread_range({rows}, &lo, &hi);")
        block.rows("xb", "xn", "lo", "hi", "_p")
        block.merge("xn")
        w._close(1)
    else:
        block.rows("xb", "xn", "0", rows, "")
    block.epilogue("xb", "xn")
    w._close(opened + 1)


def outer_body(w, end_of_loop, resume_ops) -> list[str] | None:
    """The statements of `w`'s kernel (cpp.py's CppKernelWriter) when it is a column reduction
    (`outer_plan`), else None. `end_of_loop` and `resume_ops` are cpp.py's."""
    plan = outer_plan(w.group)
    if plan is None:
        return None
    g = w.group
    w.reuse.enabled = False
    w.lines, w.indent, w.split_r, w.checked = [], 1, False, {}
    block = _Block(w, plan, end_of_loop, resume_ops)
    work, cols = w.index(g.xnumel() * g.rnumel()), w.index(g.xnumel())
    nt = w.fresh("nt")
    w.line(f"int {nt} = symc_threads({work}, {w.grain}, {work});")
    w.line(f"if ({nt} > 1 && {cols} >= {nt} * {MIN_COLS}) {{")  # enough columns per thread
    w.indent += 1
    _variant(w, block, nt, split_rows=False)
    w.indent -= 1
    w.line(f"}} else if ({nt} > 1) {{")  # few columns, many rows
    w.indent += 1
    _variant(w, block, nt, split_rows=True)
    w.indent -= 1
    w.line("} else {")
    w.indent += 1
    _variant(w, block, None, split_rows=False)
    w._close(1)
    return w.lines
