"""Kernel backends: KernelGroups -> callables the wrapper launches, plus their source text.

Every backend returns `KernelSet(kernels, source, takes_pointers)`: `kernels[group.name]` takes
the group's `arg_buffers()` (tensors, or raw pointers when `takes_pointers`) then its
`symbols()` as ints.
  - "cpp": one C++ source for the whole graph, one compiler call (inductor/codegen/cpp.py);
  - "triton": one Triton kernel per group (inductor/codegen/triton.py, imported lazily);
  - "torch": the IR evaluated with torch (inductor/ir_eval.py), the oracle.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass, field

from inductor.codegen.common import KernelGroup
from inductor.ir import LoweringError
from inductor.runtime.kernel_dedupe import STATS, canonical_text
from symbolic import Analyzer


@dataclass
class KernelSet:
    kernels: dict
    source: str
    takes_pointers: bool
    passes_extents: bool = False  # SYMC_DEBUG_BOUNDS: each buffer's numel() after the symbols
    distinct: int | None = None  # distinct compiled kernels (identical groups share one)
    skips_internal: bool = False  # kernels never touch a group's `internal` buffers' memory
    # or, per group name, the internal buffers its kernel never touches (C++)
    skipped: dict = field(default_factory=dict)
    # a pointwise kernel may write its output over an input it reads at the same index (C++
    # kernels take `__restrict__` pointers: no)
    allows_in_place: bool = False


def compile_cpp(groups: list[KernelGroup], an: Analyzer | None = None) -> KernelSet:
    from inductor.codegen.cpp import ERROR_FLAG, extent_param, kernel_source
    from inductor.runtime.cpp_build import full_source, kernel_function, load_library
    from inductor.runtime.cpp_call import kernel_caller
    from inductor.runtime.kernel_errors import debug_bounds, raise_for

    check = debug_bounds()
    an = an if an is not None else Analyzer()
    if not groups:
        return KernelSet({}, "", True, check, distinct=0)
    texts, first_of, flags_of, skipped = [], {}, {}, {}
    for g in groups:
        # a fresh name counter per kernel: names are local, so identical groups print alike
        text, flags_of[g.name], skipped[g.name] = kernel_source(g, [0], an, check)
        args = list(g.arg_buffers()) + [s.name for s in g.symbols()]
        args += [extent_param(b) for b in g.arg_buffers()] if check else []
        key = canonical_text(text, {g.name: "KERNEL"}, args)
        STATS["cpp_groups"] += 1
        first = first_of.setdefault(key, g.name)
        if first == g.name:
            STATS["cpp_distinct"] += 1
            texts.append(text)
        first_of[g.name] = first
    source = "\n\n".join(texts)
    lib = load_library(source, tuple(sorted({first_of[g.name] for g in groups})))
    flag = ctypes.c_int64.in_dll(lib, ERROR_FLAG)
    kernels, functions = {}, {}
    for g in groups:
        first = first_of[g.name]
        n_ints = len(g.symbols()) + (len(g.arg_buffers()) if check else 0)
        n_args = len(g.arg_buffers()) + n_ints
        raising = flags_of[g.name]
        fast = kernel_caller(lib, first, n_args, flag if raising else None,
                             functools.partial(raise_for, kernel=g.name))
        if fast is not None:  # one vectorcall (inductor/runtime/cpp_call.py)
            kernels[g.name] = fast
            functions.setdefault(first, fast)
            continue
        fn = functions.get(first)
        if fn is None:
            fn = functions[first] = kernel_function(lib, first, len(g.arg_buffers()), n_ints)
        kernels[g.name] = _raising_kernel_errors(fn, flag, g.name) if raising else fn
    shared = "".join(f"\n// {g.name}: the same function as {first_of[g.name]}" for g in groups
                     if first_of[g.name] != g.name)
    return KernelSet(kernels, full_source(source) + shared, True, check,
                     distinct=len(functions), skipped=skipped)


def _raising_kernel_errors(fn, flag, name: str):
    """`fn` followed by a read of the library's error flag: the error eager raises (an
    IndexError for a gather out of range, ZeroDivisionError for integer division by zero)."""
    from inductor.runtime.kernel_errors import raise_for

    def run(*args):
        fn(*args)
        if flag.value:
            code, flag.value = flag.value, 0
            raise_for(code, name)
    return run


def compile_torch(groups: list[KernelGroup], an: Analyzer | None = None) -> KernelSet:
    from inductor.ir_eval import run_group_torch

    def make(group):
        names = group.arg_buffers()
        syms = group.symbols()

        def run(*args):
            tensors = dict(zip(names, args[:len(names)]))
            run_group_torch(group, tensors, dict(zip(syms, args[len(names):])))
        return run
    text = "\n".join(f"# {g.name}: torch evaluation of {len(g.nodes)} node(s)" for g in groups)
    return KernelSet({g.name: make(g) for g in groups}, text, False)


def compile_triton(groups: list[KernelGroup], an: Analyzer | None = None) -> KernelSet:
    try:
        from inductor.codegen.triton import compile_group
    except ImportError as e:
        raise LoweringError(f"expected the Triton backend (inductor/codegen/triton.py), found "
                            f"an import error: {e}") from e

    ranges = (an or Analyzer()).size_ranges()  # the facts the C++ printer proves divisions with

    launchers: set = set()

    def make(group):
        kernel = compile_group(group, ranges)
        launchers.add(id(kernel.launcher))
        names = group.arg_buffers()
        order = [names.index(b) for b in kernel.buffer_args]
        syms = [s.name for s in group.symbols()]
        sym_order = [syms.index(n) for n in kernel.spec.size_args]
        nb = len(names)
        meta = kernel.spec.meta
        source = kernel.spec.source
        if kernel.launcher.spec.name != group.name:
            source = f"# compiled once: the same kernel as {kernel.launcher.spec.name}\n{source}"
        if meta.get("error_flag") or meta.get("extents") or order != list(range(nb)) or \
                sym_order != list(range(len(syms))):
            return _triton_call(kernel, group.name, order, sym_order, nb), source
        return kernel.launcher.launch, source  # the generated per-launch path, as it is
    built = {g.name: make(g) for g in groups}
    source = "\n\n".join(f"# {name}\n{src}" for name, (_, src) in built.items())
    # the Triton writer forwards internal buffers in registers and never stores or loads them.
    # In-place outputs stay off: on the H100 they gave wrong layer-norm gradients in every
    # model test (the interpreter, one lane at a time, did not show it), see README "GPU run".
    return KernelSet({name: fn for name, (fn, _) in built.items()}, source, False,
                     distinct=len(launchers), skips_internal=True, allows_in_place=False)


def _triton_call(kernel, name: str, order: list, sym_order: list, nb: int):
    """The wrapper's call of a Triton kernel whose arguments differ from the group's: another
    order, the error flag (runtime/error_flags.py: read after the launch, or later on CUDA for
    a kernel whose errors show as NaN), SYMC_DEBUG_BOUNDS's buffer extents. Generated straight
    Python (one call per launch, no argument list built):

        def run(a0, a1, v0):
            f = flags.get(a0.device) or new_flag(a0.device)
            launch(a1, a0, f.tensor, v0)
            f.after()
    """
    from inductor.runtime.error_flags import flag_for

    meta = kernel.spec.meta
    params = [f"a{i}" for i in range(nb)] + [f"v{i}" for i in range(len(sym_order))]
    buffers = [f"a{i}" for i in order]
    args = buffers + (["f.tensor"] if meta.get("error_flag") else [])
    args += [f"v{i}" for i in sym_order] + ([f"{b}.numel()" for b in buffers]
                                            if meta.get("extents") else [])
    lines = [f"def run({', '.join(params)}):"]
    if meta.get("error_flag"):
        lines.append(f"    f = flags.get({buffers[0]}.device) or new_flag({buffers[0]}.device)")
    lines.append(f"    launch({', '.join(args)})")
    if meta.get("error_flag"):
        lines.append("    f.after()")
    source = "\n".join(lines) + "\n"
    flags: dict = {}
    deferrable = bool(meta.get("error_deferrable"))
    scope = {"launch": kernel.launcher.launch, "flags": flags,
             "new_flag": lambda device: flag_for(flags, name, device, deferrable)}
    exec(compile(source, f"<symc kernel call {name}>", "exec"), scope)
    run = scope["run"]
    run.source = source
    return run


BACKENDS = {"cpp": compile_cpp, "torch": compile_torch, "triton": compile_triton}
