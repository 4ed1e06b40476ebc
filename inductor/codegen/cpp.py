"""C++/OpenMP backend: KernelGroups -> one C++ source with an `extern "C"` function per kernel.

    extern "C" void k0_red_node0(const float* __restrict__ arg0, float* __restrict__ buf0,
                                 int64_t s0, int64_t s1) {
      int nt1 = symc_threads((s0 * s1), 32768, s0);
      #pragma omp parallel for if(nt1 > 1) num_threads(nt1)
      for (int64_t x0 = 0; x0 < s0; ++x0) {
        float acc0 = ((float)-INFINITY);
        #pragma omp simd reduction(symc_fmax:acc0)
        for (int64_t r0 = 0; r0 < s1; ++r0) { float tmp0 = arg0[...]; acc0 = symc_max(acc0, tmp0); }
        buf0[x0] = acc0;
      }
    }

Threads: outer x loops run in parallel (collapsed) with one thread per started GRAIN of work,
at most one per row and the pool's size, counted at run time from the symbol values (no
threads for a small tensor: `symc_threads` in the prelude); a kernel with no x loop (a full
reduction) splits r across threads the same way, with per-thread partial accumulators merged in
thread order (deterministic for a given thread count). Welford merges with Chan's formula.
A call that gets one thread runs a serial copy of the loops: no parallel region is entered
(libgomp's team start costs as much as the ctypes call); a full reduction too (its parallel
copy splits r). Row statistics forwarded in registers
(an `internal` buffer no load reads from memory) are never stored, and get no memory.

SIMD: the innermost loop runs over the last (contiguous) dimension under `#pragma omp simd`,
reductions with a `reduction(...)` clause (NaN-aware max/min: the prelude's declared reductions;
row sums/max/min first run a blocked copy with 16 lane accumulators: cpp_blocked.py; next-row
prefetch: cpp_prefetch.py; the `_packed` entry: runtime/cpp_call.py), math inline, branch-free
(runtime/cpp_math.h), so gcc vectorizes it and runs the symbolic remainder as a scalar tail
(tests/inductor/test_cpp_vectorize.py reads gcc's vectorization report).
Column reductions (bias, layer-norm weight gradients) run rows outer, columns inner: cpp_outer.py.
"""

from __future__ import annotations

import re

import sympy
import torch

from inductor.codegen.common import KernelGroup
from inductor.codegen.cpp_accumulator import Accumulator, in_thread_order
from inductor.codegen.cpp_blocked import blockable, insert_blocked, merge_line, start_tail
from inductor.codegen.cpp_prefetch import RowPrefetch
from inductor.codegen.cpp_outer import outer_body
from inductor.codegen.cpp_ops import (
    COMPUTE_CTYPE,
    CV,
    HALVES,
    STORAGE_CTYPE,
    CppIndexPrinter,
    CppOps,
)
from inductor.codegen.cpp_reuse import ValueReuse
from inductor.codegen.index_simplify import simplify_index
from inductor.ir import index_vars, product, ravel
from prims.opcodes import PrimOp as P
from symbolic import Analyzer

GRAIN = 32768  # elements of work per thread; the thread count is decided at run time
# a full reduction through a gathered index (cross-entropy's picked logits): each element is
# likely a cache miss, so fewer make a thread's worth
GATHER_GRAIN = GRAIN // 8


_SIDE_EFFECTS = ("symc_int_", "symc_in_bounds", "symc_error")  # set the error flag: never hoisted
ERROR_FLAG = "symc_error"  # the prelude's flag (cpp_prelude.h; codes: runtime/kernel_errors.py)
INTERNAL_MARK = "  // internal {}"  # ends a store of an internal buffer (dropped if unread)
PACKED_SUFFIX = "_packed"  # the kernel's entry taking one int64 array (see `packed_entry`)


def extent_param(buffer: str) -> str:
    """The int64 parameter holding a buffer's element count (SYMC_DEBUG_BOUNDS kernels)."""
    return f"{buffer}_numel"


class CppKernelWriter:
    """Writes one kernel function for a KernelGroup (see the module docstring)."""

    def __init__(self, group: KernelGroup, var_counter, an: Analyzer | None = None,
                 check_bounds: bool = False):
        self.group = group
        self.an = an if an is not None else Analyzer()
        self.printer = CppIndexPrinter(self.an)
        self.check_bounds = check_bounds  # SYMC_DEBUG_BOUNDS: every access checked
        self.uses_error_flag = check_bounds
        self.checked: dict[sympy.Symbol, str] = {}  # runtime index -> its in-range flag
        self.masks: list[str] = []  # conditions of the enclosing ops.masked bodies
        self.lines: list[str] = []
        self.fresh_counter = var_counter
        self.xvars = index_vars("x", len(group.xranges))
        self.rvars = index_vars("r", len(group.rranges))
        self.split_r = not group.xranges and group.is_reduction
        self.ops = CppOps(self)
        self.seeds: dict[str, str] = {}
        self.pending_acc = None
        self.two_pass = None
        self.block_acc = None  # (accumulator, suffix): a blocked copy's target (cpp_blocked.py)
        self.prefetch = RowPrefetch(self)  # the next row's lines (cpp_prefetch.py)
        self.grain = GRAIN
        self.gathers = False  # an indirect index was emitted
        self.indent = 1
        # values stored at the x level (outside r loops), forwarded to later loads of the same
        # element through a variable declared at the top of the x loop body (a reload from
        # memory of a value just stored would keep gcc from vectorizing the r loops reading it)
        self.forwarded: dict[tuple[str, str], str] = {}
        self.in_r = False
        # inside an r loop body: the names defined there (None outside), and the pure math on
        # values from outside the loop, hoisted before it
        self.r_defined: set[str] | None = None
        self.hoisted: list[str] = []
        # internal buffers some load reads from memory (not forwarded): their stores stay
        self.raw_loads: set[str] = set()
        # a transcendental computed once per element across r loops (inductor/codegen/cpp_reuse.py)
        self.reuse = ValueReuse(group, enabled=not check_bounds)

    # -- helpers used by CppOps --------------------------------------------------------------
    def fresh(self, prefix="tmp") -> str:
        self.fresh_counter[0] += 1
        return f"{prefix}{self.fresh_counter[0]}"

    def line(self, text: str) -> None:
        self.lines.append("  " * self.indent + text)

    def emit(self, text: str, dtype) -> CV:
        name = self.fresh()
        self.reuse.defined(name, text)
        line = f"{COMPUTE_CTYPE[dtype]} {name} = {text};"
        if self.r_defined is not None:
            if self._loop_invariant(text):
                self.hoisted.append(line)
                return CV(name, dtype)
            self.r_defined.add(name)
        _, reuse = self.reuse.reuse_for(text, self.in_r, bool(self.masks))
        if reuse is not None and self.reuse.node == reuse.consumer:
            line = f"{COMPUTE_CTYPE[dtype]} {name} = {reuse.buffer}[{reuse.index}];  // reused"
        self.line(line)
        if reuse is not None and self.reuse.node == reuse.producer:
            self.line(f"{reuse.buffer}[{reuse.index}] = {name};  // reused later")
        return CV(name, dtype)

    def _loop_invariant(self, text: str) -> bool:
        """Pure math (no load, no error flag) on names defined outside the r loop."""
        if "[" in text or any(f in text for f in _SIDE_EFFECTS):
            return False
        names = set(re.findall(r"[A-Za-z_]\w*", text))
        return not names & (self.r_defined | {v.name for v in self.rvars})

    def _begin_r_body(self) -> int:
        """Starts an r loop nest; returns where its hoisted lines go."""
        self.r_defined, self.hoisted, self.in_r = set(), [], True
        return len(self.lines)

    def _end_r_body(self, at: int | None, pad: str) -> None:
        """Inserts the hoisted lines at `at` (None: drops them)."""
        if at is not None:
            self.lines[at:at] = [pad + line for line in self.hoisted]
        self.r_defined, self.hoisted, self.in_r = None, [], False

    def index(self, expr) -> str:
        """C++ for an index; divisions that the loop extents decide are removed first."""
        extents = {**dict(zip(self.xvars, self.group.xranges)),
                   **dict(zip(self.rvars, self.group.rranges))}
        with self.an.loop_extents(extents):
            return self.printer(simplify_index(expr, extents, self.an))

    def _access_ok(self, name: str, index, text: str) -> str | None:
        """The C++ condition under which `name[text]` may be accessed, or None (always):
        every runtime index in it passed its check, and (SYMC_DEBUG_BOUNDS) the whole index
        lies in the buffer."""
        conds = [self.checked[s] for s in sorted(index.free_symbols, key=str)
                 if s in self.checked] + [f"({m})" for m in self.masks]
        if self.check_bounds:
            conds.append(f"symc_in_bounds({text}, {extent_param(name)})")
        return " && ".join(conds) if conds else None

    def load(self, name: str, index) -> CV:
        dtype = self.group.buffers[name]
        text = self.index(index)
        ref = f"{name}[{text}]"
        ok = self._access_ok(name, index, text)
        if ok is None and (name, text) in self.forwarded:
            return CV(self.forwarded[(name, text)], dtype)
        self.raw_loads.add(name)
        self.reuse.loaded_from_memory(name)
        if ok is None and self.in_r:
            self.prefetch.loaded(name, index)
        if ok is not None:  # a masked access reads 0
            ref = f"(({ok}) ? {ref} : static_cast<{STORAGE_CTYPE[dtype]}>(0))"
        if dtype == torch.bfloat16:
            return self.emit(f"symc_bf16_to_f32({ref})", dtype)
        if dtype == torch.float16:
            return self.emit(f"static_cast<float>({ref})", dtype)
        return self.emit(ref, dtype)

    def store(self, name: str, index, value: CV, mode=None) -> None:
        if mode not in (None, "store"):
            raise NotImplementedError(f"C++ codegen: store mode {mode!r}")
        dtype = self.group.buffers[name]
        text = self.index(index)
        ref = f"{name}[{text}]"
        ok = self._access_ok(name, index, text)
        guard = "" if ok is None else f"if ({ok}) "
        self.reuse.stored(name, text, ok is None, self.in_r)
        if ok is None and not self.in_r and value.dtype == dtype and dtype not in HALVES:
            var = self.forwarded.setdefault((name, text), self.fresh(f"fwd_{name}_"))
            self.line(f"{var} = {value};")
            value = CV(var, dtype)
        mark = INTERNAL_MARK.format(name) if name in self.group.internal else ""
        if dtype == torch.bfloat16:
            self.line(f"{guard}{ref} = symc_f32_to_bf16(static_cast<float>({value}));{mark}")
        else:
            self.line(f"{guard}{ref} = static_cast<{STORAGE_CTYPE[dtype]}>({value});{mark}")

    def indirect_indexing(self, value: CV, size) -> sympy.Symbol:
        """A runtime index in [0, size), as the indexing prims require (negative positions
        were wrapped by the decomposition, once): outside it, the flag is set and every access
        through the index is masked (nothing is read even from an empty buffer)."""
        name = self.fresh("ind")
        bound = self.index(size)
        self.uses_error_flag = self.gathers = True
        if self.r_defined is not None:
            self.r_defined.update((name, f"{name}_ok"))
        self.line(f"int64_t {name} = static_cast<int64_t>({value});")
        self.line(f"bool {name}_ok = {name} >= 0 && {name} < {bound};")
        report = " && ".join([f"!{name}_ok"] + [f"({m})" for m in self.masks])
        self.line(f"if ({report}) {ERROR_FLAG} = 1;")  # not where an ops.masked mask is off
        self.line(f"if (!{name}_ok) {name} = 0;")
        symbol = sympy.Symbol(name, integer=True, nonnegative=True)  # in [0, bound) or masked
        self.checked[symbol] = f"{name}_ok"
        return symbol

    def masked(self, mask: CV, body, other):
        """`body()` with its accesses (and error reports) conditioned on `mask`."""
        self.masks.append(str(mask))
        try:
            value = body()
        finally:
            self.masks.pop()
        return self.ops.where(mask, value, other)

    def philox_rand(self, seed_name: str, offset, dtype) -> CV:
        bits = {torch.float16: 11, torch.bfloat16: 8}.get(dtype, 24)
        counter = self.index(offset)
        text = f"symc_uniform({seed_name}[0], static_cast<int64_t>({counter}), {bits})"
        return self.emit(text if dtype != torch.float64 else f"static_cast<double>({text})",
                         dtype)

    def reduction(self, dtype, src_dtype, rtype: str, value: CV):
        if self.two_pass is not None:  # the per-row variance: sum, then squared deviations
            ct, kind, (acc_name, dev_name), mean = self.two_pass
            v = f"static_cast<{ct}>({value})"
            self.line(f"{acc_name} += {v};" if kind == "sum" else
                      f"{{ {ct} _d = {v} - {mean}; {acc_name} += _d * _d; {dev_name} += _d; }}")
            raise _EndOfLoop()
        ridx = self.index(ravel(self.rvars, self.group.rranges))
        if self.block_acc is not None:  # the blocked copy of a reduction loop
            acc, suffix = self.block_acc
            for text in acc.update(value, ridx, suffix):
                self.line(text)
            raise _EndOfLoop()
        acc = Accumulator(self, rtype, dtype, value)
        suffix = "_p" if self.split_r else ""
        for text in acc.update(value, ridx, suffix):
            self.line(text)
        self.pending_acc = acc
        raise _EndOfLoop()

    # -- structure ---------------------------------------------------------------------------
    def _open_loops(self, variables, sizes, pragma: str | None, bounds=None) -> int:
        """Loops over `variables` in `sizes`; `bounds` (start, stop) for a single loop instead."""
        if pragma:
            self.line(pragma)
        for v, s in zip(variables, sizes):
            start, stop = bounds if bounds is not None else ("0", self.index(s))
            self.line(f"for (int64_t {v} = {start}; {v} < {stop}; ++{v}) {{")
            self.indent += 1
        return len(variables)

    def _open_r_loops(self, outer_pragma=None, inner_pragma=None, bounds=None):
        """The r loops: the outer ones (under `outer_pragma`), then the innermost (contiguous)
        one under `inner_pragma`, over `bounds` if given. Returns (loops opened, the line
        index and indent where the innermost loop's pragma goes)."""
        rvars, sizes = self.rvars, self.group.rranges
        opened = self._open_loops(rvars[:-1], sizes[:-1], outer_pragma)
        at = (len(self.lines), "  " * self.indent)
        opened += self._open_loops(rvars[-1:], sizes[-1:], inner_pragma, bounds)
        return opened, at

    def _thread_count(self, work, items) -> str:
        """Declares the thread count for `work` elements over `items` parallel iterations."""
        name = self.fresh("nt")
        self.line(f"int {name} = symc_threads({self.index(work)}, {self.grain}, "
                  f"{self.index(items)});")
        return name

    def _close(self, n: int) -> None:
        for _ in range(n):
            self.indent -= 1
            self.line("}")

    def run_node(self, node) -> None:
        if node.kind == "reduction":
            self._reduction_node(node)
        elif node.uses_r:
            self.line("{")
            self.indent += 1
            outer, inner = None, "#pragma omp simd"
            if self.split_r:
                n = len(self.rvars)
                rnumel = product(self.group.rranges)
                nt = self._thread_count(rnumel, product(self.group.rranges[:-1]) if n > 1
                                        else rnumel)
                parallel = f"#pragma omp parallel for if({nt} > 1) num_threads({nt})"
                if n == 1:
                    inner = parallel.replace("parallel for", "parallel for simd")
                else:
                    outer = parallel + (f" collapse({n - 1})" if n > 2 else "")
            hoist_at, pad = self._begin_r_body(), "  " * self.indent
            opened, _ = self._open_r_loops(outer, inner)
            node.body(self.ops, self.xvars, self.rvars)
            self._close(opened)
            self._end_r_body(hoist_at, pad)
            self.indent -= 1
            self.line("}")
        else:
            self.line("{")
            self.indent += 1
            node.body(self.ops, self.xvars, self.rvars)
            self.indent -= 1
            self.line("}")

    def _reduction_node(self, node) -> None:
        self.line("{")
        self.indent += 1
        decl_at, pad = len(self.lines), "  " * self.indent
        bounds, pragma = None, None
        single = len(self.rvars) == 1
        if self.split_r:
            rnumel = product(self.group.rranges)
            nt = self._thread_count(rnumel, rnumel if single else product(self.group.rranges[:-1]))
            decl_at = len(self.lines)
            self.line(f"#pragma omp parallel if({nt} > 1) num_threads({nt})")
            self.line("{")
            self.indent += 1
            part_at, part_pad = len(self.lines), "  " * self.indent
            if single:  # this thread's static share of r, then a simd loop over it
                bounds = (self.fresh("lo"), self.fresh("hi"))
                self.line(f"int64_t {bounds[0]}, {bounds[1]};")
                self.line(f"symc_thread_range({self.index(rnumel)}, &{bounds[0]}, &{bounds[1]});")
            else:
                n = len(self.rvars) - 1
                pragma = "#pragma omp for schedule(static)" + (f" collapse({n})" if n > 1 else "")
        hoist_at, hoist_pad = self._begin_r_body(), "  " * self.indent
        opened, (simd_at, simd_pad) = self._open_r_loops(pragma, None, bounds)
        self.pending_acc = None
        try:
            node.body(self.ops, self.xvars, self.rvars)
        except _EndOfLoop:
            pass
        acc = self.pending_acc
        if acc is None:
            raise RuntimeError(f"kernel {self.group.name}: node {node.name} has no reduction")
        self._close(opened)
        clause = acc.simd_clause("_p" if self.split_r else "")
        blocked = clause is not None and blockable(self, acc.rtype, acc.dtype)
        tail = start_tail(self, simd_at) if blocked else None
        if clause is not None:
            self.lines.insert(simd_at, f"{simd_pad}#pragma omp simd {clause}")
        self._end_r_body(hoist_at, hoist_pad)
        if blocked:  # several vector accumulators (inductor/codegen/cpp_blocked.py)
            insert_blocked(self, node, hoist_at, tail, zip(acc.types(), acc.names, acc.init),
                           lambda s: setattr(self, "block_acc", s and (acc, s)), _EndOfLoop)
            self.line(merge_line(acc.merge("_b[symc_j]")))
        if not self.split_r and acc.rtype == P.VAR_MEAN:
            del self.lines[decl_at:]
            result = self._two_pass_variance(node, acc.ct, acc.dtype)
            node.body(_ResumeOps(self.ops, result), self.xvars, self.rvars)
            self.indent -= 1
            self.line("}")
            return
        if self.split_r:
            # partials merged in thread order: thread t runs iteration t of an ordered loop
            self.lines[part_at:part_at] = [part_pad + t for t in acc.decl("_p")]
            for t in in_thread_order(acc.merge("_p")):
                self.line(t)
            self.indent -= 1
            self.line("}")
        self.lines[decl_at:decl_at] = [pad + t for t in acc.decl()]
        # the rest of the node's body (the epilogue after the reduction), run once per x
        node.body(_ResumeOps(self.ops, acc.result()), self.xvars, self.rvars)
        self.indent -= 1
        self.line("}")

    def _two_pass_variance(self, node, ct: str, dtype) -> tuple:
        """(mean, m2, n) of one row: a vectorizable sum, then the squared deviations and their
        sum, which corrects the rounding of the first pass's mean (the corrected two-pass
        algorithm: m2 = sum d^2 - (sum d)^2 / n, mean += sum d / n; as stable as Welford, no
        division per element)."""
        total, m2, dev, n, mean0, mean = (self.fresh(p) for p in
                                          ("vsum", "vm2", "vdev", "vn", "vmean0", "vmean"))
        rnumel = self.index(product(self.group.rranges))
        for kind, accs in (("sum", (total, None)), ("m2", (m2, dev))):
            if kind == "m2":
                self.line(f"{ct} {n} = static_cast<{ct}>({rnumel});")
                self.line(f"{ct} {mean0} = {total} / {n};")
            names = [a for a in accs if a is not None]
            self.line(" ".join(f"{ct} {a} = 0;" for a in names))
            self.two_pass = (ct, kind, accs, mean0)
            hoist_at, pad = self._begin_r_body(), "  " * self.indent
            clause = f"#pragma omp simd reduction(+:{', '.join(names)})"
            opened, (pragma_at, _) = self._open_r_loops(None, clause)
            try:
                node.body(self.ops, self.xvars, self.rvars)
            except _EndOfLoop:
                pass
            finally:
                self.two_pass = None
            self._close(opened)
            blocked = blockable(self, P.SUM, dtype)
            tail = start_tail(self, pragma_at + 1) if blocked else None
            self._end_r_body(hoist_at, pad)
            if blocked:  # several vector accumulators (inductor/codegen/cpp_blocked.py)
                insert_blocked(self, node, hoist_at, tail, [(ct, a, "0") for a in names],
                               lambda s, k=kind, a=accs: setattr(self, "two_pass", s and (
                                   ct, k, tuple(x and x + s for x in a), mean0)), _EndOfLoop)
                self.line(merge_line([f"{a} += {a}_b[symc_j];" for a in names]))
        self.line(f"{ct} {mean} = {mean0} + {dev} / {n};")
        # >= 0 as sum d^2 >= (sum d)^2 / n, whatever the rounding (NaN stays NaN)
        self.line(f"{m2} = std::max<{ct}>({m2} - {dev} * ({dev} / {n}), 0);")
        return CV(mean, dtype), CV(m2, dtype), CV(n, dtype)

    def _x_work(self) -> tuple:
        """(elements of work, parallel iterations) of the x loops: the thread count's inputs."""
        g, nx = self.group, len(self.xvars)
        parallel_dims = g.xranges if g.is_reduction or nx == 1 else g.xranges[:-1]
        return product(g.xranges) * product(g.rranges), product(parallel_dims)

    def _open_x_loops(self, parallel: bool = True) -> int:
        """Parallel outer loops (collapsed); a pointwise kernel's innermost loop is `omp simd`."""
        g, nx = self.group, len(self.xvars)
        if nx == 0:
            return 0
        if not parallel:
            if g.is_reduction:
                return self._open_loops(self.xvars, g.xranges, None)
            return (self._open_loops(self.xvars[:-1], g.xranges[:-1], None) +
                    self._open_loops(self.xvars[-1:], g.xranges[-1:], "#pragma omp simd"))
        nt = self._thread_count(*self._x_work())
        work = f"if({nt} > 1) num_threads({nt})"
        if g.is_reduction:
            collapse = f" collapse({nx})" if nx > 1 else ""
            return self._open_loops(self.xvars, g.xranges, f"#pragma omp parallel for{collapse} "
                                                           f"{work}")
        if nx == 1:
            return self._open_loops(self.xvars, g.xranges, f"#pragma omp parallel for simd {work}")
        collapse = f" collapse({nx - 1})" if nx > 2 else ""
        opened = self._open_loops(self.xvars[:-1], g.xranges[:-1],
                                  f"#pragma omp parallel for{collapse} {work}")
        return opened + self._open_loops(self.xvars[-1:], g.xranges[-1:], "#pragma omp simd")

    def skipped(self) -> frozenset:
        """The group's internal buffers whose every load was forwarded (after render): their
        stores are dropped and the kernel never touches their memory."""
        if self.check_bounds:
            return frozenset()
        return frozenset(self.group.internal) - self.raw_loads

    def render(self) -> str:
        text = self._render()
        for name in self.skipped():
            text = "\n".join(line for line in text.split("\n")
                             if not line.endswith(INTERNAL_MARK.format(name)))
        return text

    def _param_types(self) -> list[tuple[str, str]]:
        """(C type, name) of the kernel's parameters: buffers, symbols, (debug) extents."""
        g = self.group
        params = []
        for name in g.arg_buffers():
            const = "const " if name not in g.outputs else ""
            params.append((f"{const}{STORAGE_CTYPE[g.buffers[name]]}*", name))
        params += [("int64_t", s.name) for s in g.symbols()]
        if self.check_bounds:
            params += [("int64_t", extent_param(name)) for name in g.arg_buffers()]
        return params

    def packed_entry(self) -> str:
        """`<kernel>_packed(const int64_t* a)`: the kernel on an array of its arguments (the
        Python extension inductor/runtime/cpp_call.c calls this one signature for every
        kernel; addresses travel as int64)."""
        args = [f"a[{i}]" if ctype == "int64_t" else f"reinterpret_cast<{ctype}>(a[{i}])"
                for i, (ctype, _) in enumerate(self._param_types())]
        name = self.group.name
        return (f'extern "C" void {name}{PACKED_SUFFIX}(const int64_t* a) {{ '
                f'{name}({", ".join(args)}); }}')

    def _render(self) -> str:
        g = self.group
        params = [f"{ctype} __restrict__ {name}" if ctype.endswith("*") else f"{ctype} {name}"
                  for ctype, name in self._param_types()]
        head = f'extern "C" void {g.name}({", ".join(params)}) {{'
        if (outer := outer_body(self, _EndOfLoop, _ResumeOps)) is not None:  # cpp_outer.py
            return "\n".join([head, *outer, "}"])
        split_r = self.split_r
        if self.reuse.enabled and g.is_reduction and len(g.nodes) > 1:
            self.reuse.surveying = True  # a dry run: what each node's loops compute and store
            self._body(split_r=False, indent=1, serial=True)
            self.reuse.decide()
        if split_r:  # a full reduction: the same choice, the parallel copy split over r
            rnumel = product(g.rranges)
            items = rnumel if len(g.rranges) == 1 else product(g.rranges[:-1])
            serial = self._body(split_r=False, indent=2, serial=True)
            self.grain = GATHER_GRAIN if self.gathers else GRAIN
            parallel = self._body(split_r=True, indent=2)
            grain, self.grain = self.grain, GRAIN
            return "\n".join([
                head, f"  if (symc_threads({self.index(rnumel)}, {grain}, {self.index(items)}) > 1) {{",
                *parallel, "  } else {", *serial, "  }", "}"])
        if split_r or not g.xranges:
            return "\n".join([head] + self._body(split_r=split_r, indent=1) + ["}"])
        # one thread (a small tensor): the same loops without a parallel region (entering
        # one, even under if(0), costs libgomp a team start: as much as the ctypes call)
        work, items = self._x_work()
        rows = [f"  if (symc_threads({self.index(work)}, {GRAIN}, {self.index(items)}) > 1) {{",
                *self._body(split_r=False, indent=2), "  } else {",
                *self._body(split_r=False, indent=2, serial=True), "  }"]
        if not self._few_rows_variant():
            return "\n".join([head] + rows + ["}"])
        # few rows and long ones: the rows run in turn, each reduction split across threads
        r_parallel = self._body(split_r=True, indent=2)
        xnumel, rnumel = self.index(g.xnumel()), self.index(g.rnumel())
        return "\n".join([head, f"  if ({xnumel} < omp_get_max_threads() && {rnumel} >= "
                                 f"{2 * GRAIN}) {{", *r_parallel, "  } else {",
                           *["  " + line for line in rows], "  }", "}"])

    def _few_rows_variant(self) -> bool:
        """A reduction kernel over rows whose length may reach 2 GRAIN gets a second body for
        when the rows are fewer than the threads (decided at run time)."""
        g = self.group
        rnumel = sympy.sympify(g.rnumel())
        return (g.is_reduction and bool(g.xranges) and not self.check_bounds
                and not (rnumel.is_number and int(rnumel) < 2 * GRAIN))

    def _body(self, split_r: bool, indent: int, serial: bool = False) -> list[str]:
        """The kernel's statements: x loops (parallel unless `split_r` or `serial`) over the
        nodes."""
        g = self.group
        self.split_r, self.lines, self.indent = split_r, [], indent
        self.forwarded, self.checked = {}, {}
        opened = self._open_x_loops(parallel=not (split_r or serial))
        body_at, pad = len(self.lines), "  " * self.indent
        self.reuse.start_body()
        self.prefetch.start()
        for i, node in enumerate(g.nodes):
            self.reuse.start_node(i, node.kind == "reduction")
            self.run_node(node)
        self._close(opened)
        self.lines[body_at:body_at] = [
            f"{pad}{COMPUTE_CTYPE[g.buffers[name]]} {var};"
            for (name, _), var in sorted(self.forwarded.items(), key=lambda kv: kv[1])] + [
            pad + line for line in self.prefetch.lines(lambda b: g.buffers[b].itemsize)]
        return self.lines


class _EndOfLoop(Exception):
    """Raised by the writer at `ops.reduction`: the rest of the body runs after the r loop."""


class _ResumeOps:
    """Replays a reduction node's body after its loop: ops before the reduction emit nothing,
    the reduction returns the accumulator, ops after it print normally."""

    def __init__(self, ops: CppOps, result):
        self._ops, self._result, self._after = ops, result, False

    def reduction(self, dtype, src_dtype, rtype, value):
        self._after = True
        return self._result

    def indirect_indexing(self, value, size):
        if self._after:
            return self._ops.indirect_indexing(value, size)
        return sympy.Symbol("unused_indirect", integer=True)

    def __getattr__(self, name):
        if self._after:
            return getattr(self._ops, name)
        return lambda *a, **k: CV("0", torch.int64)


def kernel_source(group: KernelGroup, counter, an: Analyzer | None = None,
                  check_bounds: bool = False) -> tuple[str, bool, frozenset]:
    """(the kernel's C++, whether it may set the error flag, the internal buffers it never
    touches: the wrapper allocates none for them)."""
    writer = CppKernelWriter(group, counter, an, check_bounds)
    text = f"{writer.render()}\n{writer.packed_entry()}"
    return text, writer.uses_error_flag, writer.skipped()
