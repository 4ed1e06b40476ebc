"""C++/OpenMP backend: KernelGroups -> one C++ source with an `extern "C"` function per kernel.

    extern "C" void k0_red_node0(const float* __restrict__ arg0, float* __restrict__ buf0,
                                 int64_t s0, int64_t s1) {
      #pragma omp parallel for if(s0 * s1 >= 32768)
      for (int64_t x0 = 0; x0 < s0; ++x0) {
        float acc0 = ((float)-INFINITY);
        for (int64_t r0 = 0; r0 < s1; ++r0) { float tmp0 = arg0[...]; acc0 = symc_max(acc0, tmp0); }
        buf0[x0] = acc0;
      }
    }

Outer x loops run in parallel (collapsed) when the kernel is large at run time; a kernel with no
x loop (a full reduction) splits r across threads with per-thread partial accumulators merged
in thread order (deterministic). Welford merges with Chan's formula.
"""

from __future__ import annotations

import sympy
import torch

from inductor.codegen.common import KernelGroup
from inductor.codegen.cpp_ops import (
    COMPUTE_CTYPE,
    CV,
    STORAGE_CTYPE,
    CppIndexPrinter,
    CppOps,
    literal,
)
from inductor.codegen.index_simplify import simplify_index
from inductor.ir import index_vars, product, ravel
from inductor.ops import reduction_identity, reduction_op
from prims.opcodes import PrimOp as P
from symbolic import Analyzer

PARALLEL_MIN_WORK = 32768  # elements; decided at run time from the symbolic sizes


def _identity(op: P, dtype: torch.dtype) -> str:
    return literal(reduction_identity(op, dtype), dtype)


EXTREMES = {P.AMAX: "symc_max", P.AMIN: "symc_min"}  # the prelude's NaN-propagating max/min


class _Acc:
    """One reduction's accumulator variables, update and merge code."""

    def __init__(self, w, rtype: P, dtype: torch.dtype, value: CV):
        self.rtype, self.names = reduction_op(rtype), []
        if rtype == P.VAR_MEAN:
            self.ct = "double" if value.dtype == torch.float64 else "float"
            self.dtype = torch.float64 if value.dtype == torch.float64 else torch.float32
            base = w.fresh("wf")
            self.names = [f"{base}_mean", f"{base}_m2", f"{base}_n"]
            self.init = ["0", "0", "0"]
        elif rtype in (P.ARGMAX, P.ARGMIN):
            self.dtype = value.dtype
            self.ct = COMPUTE_CTYPE[value.dtype]
            base = w.fresh("arg")
            self.names = [f"{base}_v", f"{base}_i"]
            self.init = [_identity(rtype, value.dtype), "-1"]
        else:
            self.dtype = torch.bool if rtype in (P.ANY, P.ALL) else dtype
            if rtype in (P.SUM, P.PROD) and dtype.is_floating_point:
                self.dtype = torch.float64 if dtype == torch.float64 else torch.float32
            self.ct = COMPUTE_CTYPE[self.dtype]
            self.names = [w.fresh("acc")]
            self.init = [_identity(rtype, self.dtype)]

    def types(self):
        if self.rtype in (P.ARGMAX, P.ARGMIN):
            return [self.ct, "int64_t"]
        return [self.ct] * len(self.names)

    def decl(self, suffix="") -> list[str]:
        return [f"{t} {n}{suffix} = {i};" for t, n, i in zip(self.types(), self.names, self.init)]

    def update(self, value: CV, ridx: str, s="") -> list[str]:
        n = [x + s for x in self.names]
        v = f"static_cast<{self.ct}>({value})"
        r = self.rtype
        if r == P.SUM:
            return [f"{n[0]} += {v};"]
        if r == P.PROD:
            return [f"{n[0]} *= {v};"]
        if r in (P.AMAX, P.AMIN):
            return [f"{n[0]} = {EXTREMES[r]}({n[0]}, {v});"]
        if r == P.ANY:
            return [f"{n[0]} = {n[0]} || ({value} != 0);"]
        if r == P.ALL:
            return [f"{n[0]} = {n[0]} && ({value} != 0);"]
        if r in (P.ARGMAX, P.ARGMIN):
            cmp = ">" if r == P.ARGMAX else "<"
            return [f"if ({n[1]} < 0 || symc_better({v}, {n[0]}, {int(cmp == '>')})) "
                    f"{{ {n[0]} = {v}; {n[1]} = {ridx}; }}"]
        return [f"{{ {self.ct} _v = {v}; {n[2]} += 1; {self.ct} _d = _v - {n[0]}; "
                f"{n[0]} += _d / {n[2]}; {n[1]} += _d * (_v - {n[0]}); }}"]

    def merge(self, part: str) -> list[str]:
        n, p = self.names, [f"{x}{part}" for x in self.names]
        r = self.rtype
        if r == P.SUM:
            return [f"{n[0]} += {p[0]};"]
        if r == P.PROD:
            return [f"{n[0]} *= {p[0]};"]
        if r in (P.AMAX, P.AMIN):
            return [f"{n[0]} = {EXTREMES[r]}({n[0]}, {p[0]});"]
        if r == P.ANY:
            return [f"{n[0]} = {n[0]} || {p[0]};"]
        if r == P.ALL:
            return [f"{n[0]} = {n[0]} && {p[0]};"]
        if r in (P.ARGMAX, P.ARGMIN):
            gt = int(r == P.ARGMAX)
            return [f"if ({p[1]} >= 0 && ({n[1]} < 0 || symc_better({p[0]}, {n[0]}, {gt}))) "
                    f"{{ {n[0]} = {p[0]}; {n[1]} = {p[1]}; }}"]
        return [f"symc_welford_merge({n[0]}, {n[1]}, {n[2]}, {p[0]}, {p[1]}, {p[2]});"]

    def result(self):
        if self.rtype == P.VAR_MEAN:
            return tuple(CV(x, self.dtype) for x in self.names)
        if self.rtype in (P.ARGMAX, P.ARGMIN):
            return CV(f"({self.names[1]} < 0 ? 0 : {self.names[1]})", torch.int64)
        return CV(self.names[0], self.dtype)


ERROR_FLAG = "symc_error"  # the prelude's flag (cpp_prelude.h; codes: runtime/kernel_errors.py)


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
        self.indent = 1

    # -- helpers used by CppOps --------------------------------------------------------------
    def fresh(self, prefix="tmp") -> str:
        self.fresh_counter[0] += 1
        return f"{prefix}{self.fresh_counter[0]}"

    def line(self, text: str) -> None:
        self.lines.append("  " * self.indent + text)

    def emit(self, text: str, dtype) -> CV:
        name = self.fresh()
        self.line(f"{COMPUTE_CTYPE[dtype]} {name} = {text};")
        return CV(name, dtype)

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
        if dtype == torch.bfloat16:
            self.line(f"{guard}{ref} = symc_f32_to_bf16(static_cast<float>({value}));")
        else:
            self.line(f"{guard}{ref} = static_cast<{STORAGE_CTYPE[dtype]}>({value});")

    def indirect_indexing(self, value: CV, size) -> sympy.Symbol:
        """A runtime index in [0, size), as the indexing prims require (negative positions
        were wrapped by the decomposition, once): outside it, the flag is set and every access
        through the index is masked (nothing is read even from an empty buffer)."""
        name = self.fresh("ind")
        bound = self.index(size)
        self.uses_error_flag = True
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
            ct, kind, acc_name, mean = self.two_pass
            v = f"static_cast<{ct}>({value})"
            self.line(f"{acc_name} += {v};" if kind == "sum" else
                      f"{{ {ct} _d = {v} - {mean}; {acc_name} += _d * _d; }}")
            raise _EndOfLoop()
        acc = _Acc(self, rtype, dtype, value)
        ridx = self.index(ravel(self.rvars, self.group.rranges))
        suffix = "_p" if self.split_r else ""
        for text in acc.update(value, ridx, suffix):
            self.line(text)
        self.pending_acc = acc
        raise _EndOfLoop()

    # -- structure ---------------------------------------------------------------------------
    def _open_loops(self, variables, sizes, pragma: str | None) -> int:
        if pragma:
            self.line(pragma)
        for v, s in zip(variables, sizes):
            self.line(f"for (int64_t {v} = 0; {v} < {self.index(s)}; ++{v}) {{")
            self.indent += 1
        return len(variables)

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
            if self.split_r:
                n = len(self.rvars)
                collapse = f" collapse({n})" if n > 1 else ""
                rnumel = self.index(product(self.group.rranges))
                pragma = f"#pragma omp parallel for{collapse} if({rnumel} >= " \
                         f"{PARALLEL_MIN_WORK})"
            else:
                pragma = "#pragma omp simd" if len(self.rvars) == 1 else None
            opened = self._open_loops(self.rvars, self.group.rranges, pragma)
            node.body(self.ops, self.xvars, self.rvars)
            self._close(opened)
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
        if self.split_r:
            rnumel = self.index(product(self.group.rranges))
            self.line(f"#pragma omp parallel if({rnumel} >= {PARALLEL_MIN_WORK})")
            self.line("{")
            self.indent += 1
            part_at, part_pad = len(self.lines), "  " * self.indent
            n = len(self.rvars)
            collapse = f" collapse({n})" if n > 1 else ""
            pragma = f"#pragma omp for schedule(static){collapse}"
        else:
            pragma = None
        opened = self._open_loops(self.rvars, self.group.rranges, pragma)
        self.pending_acc = None
        try:
            node.body(self.ops, self.xvars, self.rvars)
        except _EndOfLoop:
            pass
        acc = self.pending_acc
        if acc is None:
            raise RuntimeError(f"kernel {self.group.name}: node {node.name} has no reduction")
        self._close(opened)
        if not self.split_r and acc.rtype == P.VAR_MEAN:
            del self.lines[decl_at:]
            result = self._two_pass_variance(node, acc.ct, acc.dtype)
            node.body(_ResumeOps(self.ops, result), self.xvars, self.rvars)
            self.indent -= 1
            self.line("}")
            return
        if not self.split_r and acc.rtype == P.SUM and len(self.rvars) == 1 and not any(
                "std::" in line for line in self.lines[decl_at:]):  # scalar libm calls: no simd
            self.lines.insert(decl_at, f"{pad}#pragma omp simd reduction(+:{acc.names[0]})")
        if self.split_r:
            # partials merged in thread order: thread t runs iteration t of an ordered loop
            self.lines[part_at:part_at] = [part_pad + t for t in acc.decl("_p")]
            self.line("#pragma omp for ordered schedule(static, 1)")
            self.line("for (int symc_t = 0; symc_t < omp_get_num_threads(); ++symc_t) {")
            self.line("  #pragma omp ordered")
            self.line("  {")
            for t in acc.merge("_p"):
                self.line("    " + t)
            self.line("  }")
            self.line("}")
            self.indent -= 1
            self.line("}")
        self.lines[decl_at:decl_at] = [pad + t for t in acc.decl()]
        # the rest of the node's body (the epilogue after the reduction), run once per x
        node.body(_ResumeOps(self.ops, acc.result()), self.xvars, self.rvars)
        self.indent -= 1
        self.line("}")

    def _two_pass_variance(self, node, ct: str, dtype) -> tuple:
        """(mean, m2, n) of one row: a vectorizable sum, then the squared deviations (the
        two-pass algorithm; as stable as Welford, no division per element)."""
        total, m2, n, mean = (self.fresh(p) for p in ("vsum", "vm2", "vn", "vmean"))
        rnumel = self.index(product(self.group.rranges))
        for kind, acc in (("sum", total), ("m2", m2)):
            if kind == "m2":
                self.line(f"{ct} {n} = static_cast<{ct}>({rnumel});")
                self.line(f"{ct} {mean} = {total} / {n};")
            self.line(f"{ct} {acc} = 0;")
            pragma = f"#pragma omp simd reduction(+:{acc})" if len(self.rvars) == 1 else None
            self.two_pass = (ct, kind, acc, mean)
            opened = self._open_loops(self.rvars, self.group.rranges, pragma)
            try:
                node.body(self.ops, self.xvars, self.rvars)
            except _EndOfLoop:
                pass
            finally:
                self.two_pass = None
            self._close(opened)
        return CV(mean, dtype), CV(m2, dtype), CV(n, dtype)

    def _open_x_loops(self) -> int:
        """Parallel outer loops (collapsed); a pointwise kernel's innermost loop is `omp simd`."""
        g, nx = self.group, len(self.xvars)
        if nx == 0:
            return 0
        work = f"if({self.index(product(g.xranges) * product(g.rranges))} >= {PARALLEL_MIN_WORK})"
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

    def render(self) -> str:
        g = self.group
        params = []
        for name in g.arg_buffers():
            const = "const " if name not in g.outputs else ""
            params.append(f"{const}{STORAGE_CTYPE[g.buffers[name]]}* __restrict__ {name}")
        params += [f"int64_t {s.name}" for s in g.symbols()]
        if self.check_bounds:
            params += [f"int64_t {extent_param(name)}" for name in g.arg_buffers()]
        self.lines = []
        self.indent = 1
        opened = self._open_x_loops()
        for node in g.nodes:
            self.run_node(node)
        self._close(opened)
        head = f'extern "C" void {g.name}({", ".join(params)}) {{'
        return "\n".join([head] + self.lines + ["}"])


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
                  check_bounds: bool = False) -> tuple[str, bool]:
    """(the kernel's C++, whether it may set the error flag)."""
    writer = CppKernelWriter(group, counter, an, check_bounds)
    text = writer.render()
    return text, writer.uses_error_flag
