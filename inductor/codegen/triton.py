"""Triton backend: a fused group -> one size-generic kernel module and its launcher.

    spec = generate_kernel(group, ranges)      # KernelSpec: source text, args, variant table
    kernel = TritonKernel(spec); kernel(x, out, s0)

The kernel takes pointers plus the symbols its sizes and indices use; `xnumel`, `rnumel` and
every index are expressions of them, and masks cover every tail. A pointwise group yields one
body (`tiled`, 2-D over rows x cols, when its loop dims do not merge into one; else 1-D; both
when the row length is symbolic: triton_tiled.py); a reduction group yields a persistent body
(RBLOCK >= rnumel, one pass) and a looped one.
Generation runs each node body twice: a first pass records the index expressions, from which
`coalesce_dims` merges loop dims and value ranges decide int32 vs int64 indexing; the second
pass prints the code.
"""

from __future__ import annotations

import dataclasses

import sympy

from inductor.codegen.triton_index_width import index_width
from inductor.codegen.triton_configs import (
    pointwise_configs,
    reduction_configs,
    reduction_layout,
    tiled_configs,
)
from inductor.codegen.triton_group import Coalescing, KernelGroup, coalesce_dims, loop_vars
from inductor.codegen.triton_kernel import FLAT_INDICES, IndexPlan, KernelWriter, _ident
from inductor.codegen.triton_ops import TritonOps
from inductor.codegen.triton_printer import loop_var_ranges, python_evaluator
from inductor.codegen.triton_tiled import pointwise_kinds, rows_and_cols
from inductor.runtime.triton_launch import (
    WIDE_SUFFIX,
    KernelSpec,
    TritonKernel,
    body_function_name,
    is_interpreting,
)
from inductor.runtime.kernel_dedupe import TRITON_KERNELS, canonical_text
from inductor.runtime.kernel_errors import debug_bounds
from inductor.runtime.triton_precompile import submit
from symbolic import Analyzer, symbol_key
from symbolic.ranges import ValueRange

HEADER = """\
import triton
import triton.language as tl
from inductor.runtime.triton_helpers import *
from inductor.runtime.triton_math import *

"""


def _identity_coalescing(ranges, variables) -> Coalescing:
    sizes = tuple(sympy.sympify(s) for s in ranges)
    return Coalescing(tuple(variables), tuple(variables), tuple((i,) for i in range(len(sizes))),
                      sizes, sizes)


def default_ranges(symbols) -> dict:
    return {s: ValueRange(1, float("inf")) for s in symbols}


def _run_bodies(group: KernelGroup, kind: str, plan: IndexPlan, xo, ro) -> KernelWriter:
    writer = KernelWriter(group, kind, plan)
    writer.check_bounds = debug_bounds()
    handler = TritonOps(writer)
    for node in group.nodes:
        writer.run_node(node, handler, xo, ro)
    return writer


def plan_indices(group: KernelGroup, ranges: dict, xo, ro) -> tuple:
    """First pass: record indices, merge loop dims, decide the index dtype. Returns (plan,
    index checks, loop var extents, the memory accesses' indices)."""
    xnumel, rnumel = group.xnumel(), group.rnumel()
    sym_ranges = dict(ranges)
    for s in (xnumel * rnumel).free_symbols:
        sym_ranges.setdefault(s, ValueRange(1, float("inf")))
    probe_plan = IndexPlan(
        _identity_coalescing(group.xranges, xo),
        _identity_coalescing(group.rranges, ro) if group.is_reduction else None,
        loop_var_ranges({**dict(zip(xo, group.xranges)), **dict(zip(ro, group.rranges))},
                        sym_ranges),
        "tl.int64", xnumel, rnumel, flat_indices=False)  # the probe records the raw indices
    kind = "persistent" if group.is_reduction else "pointwise"
    probe = _run_bodies(group, kind, probe_plan, xo, ro)
    exprs = probe.index_exprs
    for s in set().union(*[e.free_symbols for e in exprs]) if exprs else ():
        if s in probe.indirect:
            sym_ranges[s] = probe.printer.ranges[s]
        elif s not in xo and s not in ro:
            sym_ranges.setdefault(s, ValueRange(1, float("inf")))
    xnew = loop_vars("x", max(1, len(group.xranges)))  # a scalar output still has x0 = 0
    rnew = loop_vars("r", max(1, len(group.rranges)))
    xco = coalesce_dims(group.xranges, xo, xnew, exprs)
    rco = coalesce_dims(group.rranges, ro, rnew, exprs) if group.is_reduction else None
    var_numels = dict(zip(xco.new_vars, xco.ranges))
    if rco is not None:
        var_numels.update(zip(rco.new_vars, rco.ranges))
    printer_ranges = loop_var_ranges(var_numels, sym_ranges)
    var_numels[FLAT_INDICES[0]] = xnumel  # xindex / rindex (KernelWriter.rewrite_index)
    var_numels[FLAT_INDICES[1]] = rnumel
    printer_ranges.update(loop_var_ranges(dict(zip(FLAT_INDICES, (xnumel, rnumel))), sym_ranges))
    def rewrite(e):
        e = xco.rewrite(e)
        return rco.rewrite(e) if rco is not None else e
    checks = [xnumel * rnumel + 1] + [rewrite(e) for e in exprs]
    plan = IndexPlan(xco, rco, printer_ranges, "tl.int64", xnumel, rnumel)
    # the memory accesses only: an index computed as a value (a split sum's row mask) does
    # not decide which way the tile is wide
    return plan, checks, var_numels, [rewrite(e) for e in probe.access_exprs]


def generate_kernel(group: KernelGroup, ranges: dict | None = None) -> KernelSpec:
    """Generate the kernel module for `group`; `ranges` maps symbols to their ValueRange."""
    ranges = dict(ranges or {})
    xo = loop_vars("xo", len(group.xranges))
    ro = loop_vars("ro", len(group.rranges))
    plan, checks, var_numels, accesses = plan_indices(group, ranges, xo, ro)
    itemsize = min((d.itemsize for d in group.buffers.values()), default=4)
    kinds = ("persistent", "looped") if group.is_reduction else \
        pointwise_kinds(plan.xco, itemsize)
    tiled = "tiled" in kinds
    layout = reduction_layout(accesses, plan.xco.new_vars,
                              plan.rco.new_vars if plan.rco is not None else ())
    if group.is_reduction:
        configs = reduction_configs(plan.rnumel, plan.ranges, layout, plan.xnumel)
    else:
        configs = tiled_configs(rows_and_cols(plan.xco)[1], plan.ranges,
                                "pointwise" in kinds) if tiled else ()
        configs += pointwise_configs() if "pointwise" in kinds else ()
    kinds = tuple(k for k in kinds if any(c.body == k for c in configs))
    proved = index_width(checks, plan.ranges, var_numels, ())
    plan = dataclasses.replace(plan, index_dtype=proved.dtype)
    writers = {k: _run_bodies(group, k, plan, xo, ro) for k in kinds}
    pointers: dict[str, str] = {}
    for w in writers.values():
        for buf, arg in w.pointers.items():
            pointers.setdefault(buf, arg)
    loop_syms = set(plan.xco.new_vars) | (set(plan.rco.new_vars) if plan.rco else set())
    loop_syms |= set(FLAT_INDICES)
    symbols = set((plan.xnumel * plan.rnumel).free_symbols)
    for w in writers.values():
        for e in w.index_exprs:
            symbols |= e.free_symbols - loop_syms - set(w.indirect)
    symbols = sorted(symbols, key=symbol_key)
    pointers, symbols = _contract_order(group, pointers, symbols)
    # not proved: int32 bodies, and int64 ones the launcher runs where the sizes need them
    width = index_width(checks, plan.ranges, var_numels, symbols) \
        if plan.index_dtype == "tl.int64" else proved
    variants = {"": (plan, writers)}
    if width.fits is not None:
        narrow = dataclasses.replace(plan, index_dtype="tl.int32")
        variants = {"": (narrow, {k: _run_bodies(group, k, narrow, xo, ro) for k in kinds}),
                    WIDE_SUFFIX: (plan, writers)}
    # the error flag (kernel_errors.py) after the buffers; SYMC_DEBUG_BOUNDS extents last
    flag = ("symc_err_ptr",) if any(w.uses_error_flag for w in writers.values()) else ()
    extents = tuple(f"{arg[:-len('_ptr')]}_numel" for arg in pointers.values()) \
        if any(w.check_bounds for w in writers.values()) else ()
    bodies = []
    for suffix, (vplan, vwriters) in variants.items():
        int_type = vplan.index_dtype
        params = list(pointers.values()) + list(flag)
        params += [f"{s.name}: {int_type}" for s in symbols] + [f"{e}: {int_type}" for e in extents]
        params += ["XBLOCK: tl.constexpr"] + (["RBLOCK: tl.constexpr"] if group.is_reduction
                                              else [])
        bodies += [w.render(body_function_name(group.name, k + suffix),
                            params + (["YBLOCK: tl.constexpr"] if k == "tiled" else []))
                   for k, w in vwriters.items()]
    plan = variants[""][0]
    source = HEADER + "\n\n".join(bodies)
    arg_names = tuple(pointers.values()) + flag + tuple(s.name for s in symbols) + extents
    align = tuple(s.name for s in symbols if _matters_for_alignment(s, plan, writers))
    return KernelSpec(
        name=group.name,
        source=source,
        args=arg_names,
        pointer_args=tuple(pointers.values()) + flag,
        int_args=tuple(s.name for s in symbols) + extents,
        size_args=tuple(s.name for s in symbols),
        align_args=align,
        xnumel=python_evaluator(plan.xnumel, symbols),
        rnumel=python_evaluator(plan.rnumel, symbols) if group.is_reduction else None,
        cols=python_evaluator(rows_and_cols(plan.xco)[1], symbols) if tiled else None,
        configs=configs,
        int32_fits=width.fits,
        meta={"buffers": tuple(pointers), "symbols": tuple(symbols),
              "index_dtype": plan.index_dtype, "int64_fallback": width.fits is not None,
              "layout": layout if group.is_reduction else None, "xnumel": plan.xnumel, "rnumel": plan.rnumel,
              "error_flag": bool(flag), "extents": bool(extents),
              # every error shows as NaN in the outputs: the flag may be read later (on CUDA)
              "error_deferrable": bool(flag) and not extents and not any(
                  w.unpoisoned for _, ws in variants.values() for w in ws.values())},
    )


def _contract_order(group: KernelGroup, pointers: dict, symbols: list):
    """Arguments in the order common.py fixes (arg_buffers(), then symbols()) when given."""
    if group.inputs or group.outputs:
        order = group.arg_buffers()
        missing = [b for b in pointers if b not in order]
        if missing:
            raise ValueError(f"kernel {group.name}: buffers {missing} are used but not in "
                             f"the group's inputs/outputs {order}")
        pointers = {b: pointers.get(b, f"{_ident(b)}_ptr") for b in order}
    if group.symbol_args:
        extra = [s for s in symbols if s not in group.symbol_args]
        if extra:
            raise ValueError(f"kernel {group.name}: symbols {extra} are used but not in "
                             f"symbol_args {group.symbol_args}")
        symbols = list(group.symbol_args)
    return pointers, symbols


def _matters_for_alignment(sym, plan: IndexPlan, writers) -> bool:
    """A symbol in an index stride, in rnumel, or in a pointwise xnumel (a tiled one's row
    length: its rows are never split into vectors) affects vector loads."""
    if sym in plan.rnumel.free_symbols:
        return True
    # with a tiled body, the 1-D one runs only where the row length already breaks alignment
    numel = rows_and_cols(plan.xco)[1] if "tiled" in writers else plan.xnumel
    if not (plan.rco is not None) and sym in numel.free_symbols:
        return True
    return any(sym in e.free_symbols for w in writers.values() for e in w.index_exprs)


def compile_groups(groups, an) -> list[TritonKernel]:
    """The backend entry point of common.py: one launchable kernel per group.

    Each kernel is called with the tensors of `group.arg_buffers()`, then the symbol values;
    the symbol ranges its index proofs use are the Analyzer `an`'s (its env's and the caller's).
    """
    ranges = an.size_ranges()
    return [compile_group(group, ranges) for group in groups]


class GroupKernel:
    """One group's handle on a kernel that identical groups share (runtime/kernel_dedupe.py).

    `spec` and `buffer_args` are the group's own (its buffer and symbol names); `launcher` is
    the shared TritonKernel, called with the arguments in the same positions."""

    __slots__ = ("spec", "buffer_args", "launcher", "built")

    def __init__(self, spec: KernelSpec, launcher: TritonKernel, built: bool):
        self.spec = spec
        self.buffer_args = spec.meta["buffers"]
        self.launcher = launcher
        self.built = built  # False: an identical kernel was already compiled

    def __call__(self, *args) -> None:
        self.launcher.launch(*args)

    def __getattr__(self, name):
        return getattr(self.launcher, name)


def dedupe_key(spec: KernelSpec, pointer_dtypes: dict) -> tuple:
    """What makes two kernels the same compiled object: source up to names, variants, dtypes."""
    text = canonical_text(spec.source, {spec.name: "KERNEL"}, spec.args)
    position = {a: i for i, a in enumerate(spec.args)}
    return (text, spec.configs, tuple(position[a] for a in spec.align_args),
            tuple(str(pointer_dtypes.get(a)) for a in spec.pointer_args), is_interpreting())


def compile_group(group: KernelGroup, ranges: dict | None = None,
                  precompile: bool | None = None) -> GroupKernel:
    """generate_kernel + a launchable, size-generic kernel for `group`; a kernel identical to
    one already compiled in this process (up to names) is shared, not compiled again."""
    spec = generate_kernel(group, ranges)
    pointer_dtypes = {arg: group.buffers.get(buf) for buf, arg in
                      zip(spec.meta["buffers"], spec.pointer_args)}
    pointer_dtypes = {k: v for k, v in pointer_dtypes.items() if v}

    def build() -> TritonKernel:
        kernel = TritonKernel(spec, precompile=precompile)
        if not is_interpreting():
            kernel.pending = submit(kernel, pointer_dtypes)
        return kernel
    key = dedupe_key(spec, pointer_dtypes) + (precompile,)
    launcher, built = TRITON_KERNELS.get_or_build(key, build)
    return GroupKernel(spec, launcher, built)
