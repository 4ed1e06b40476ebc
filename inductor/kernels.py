"""Kernel backends: KernelGroups -> callables the wrapper launches, plus their source text.

Every backend returns `KernelSet(kernels, source, takes_pointers)`: `kernels[group.name]` takes
the group's `arg_buffers()` (tensors, or raw pointers when `takes_pointers`) then its
`symbols()` as ints.
  - "cpp": one C++ source for the whole graph, one compiler call (inductor/codegen/cpp.py);
  - "triton": one Triton kernel per group (inductor/codegen/triton.py, imported lazily);
  - "torch": the IR evaluated with torch (inductor/ir_eval.py), the oracle.
"""

from __future__ import annotations

from dataclasses import dataclass

from inductor.codegen.common import KernelGroup
from inductor.ir import LoweringError


@dataclass
class KernelSet:
    kernels: dict
    source: str
    takes_pointers: bool


def compile_cpp(groups: list[KernelGroup], env=None) -> KernelSet:
    from inductor.codegen.cpp import INDEX_ERROR, kernel_source
    from inductor.runtime.cpp_build import full_source, kernel_function, load_library

    counter = [0]
    sources = [kernel_source(g, counter) for g in groups]
    source = "\n\n".join(sources)
    if not groups:
        return KernelSet({}, "", True)
    lib = load_library(source, tuple(g.name for g in groups))
    kernels = {}
    for g, text in zip(groups, sources):
        fn = kernel_function(lib, g.name, len(g.arg_buffers()), len(g.symbols()))
        checks = f"{INDEX_ERROR} = 1" in text
        kernels[g.name] = _raising_index_errors(fn, lib, g.name) if checks else fn
    return KernelSet(kernels, full_source(source), True)


def _raising_index_errors(fn, lib, name: str):
    """`fn` followed by a read of the library's out-of-range flag: IndexError, as eager raises."""
    import ctypes

    from inductor.codegen.cpp import INDEX_ERROR

    flag = ctypes.c_int64.in_dll(lib, INDEX_ERROR)

    def run(*args):
        fn(*args)
        if flag.value:
            flag.value = 0
            raise IndexError(f"index out of range in a gather (generated kernel {name}), e.g. "
                             f"an embedding position or token id past the table's size")
    return run


def compile_torch(groups: list[KernelGroup], env=None) -> KernelSet:
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


def compile_triton(groups: list[KernelGroup], env=None) -> KernelSet:
    try:
        from inductor.codegen.triton import compile_group
    except ImportError as e:
        raise LoweringError(f"expected the Triton backend (inductor/codegen/triton.py), found "
                            f"an import error: {e}") from e
    ranges = {}
    if env is not None:
        ranges = {s: info.range for s, info in env.symbols.items()}

    def make(group):
        kernel = compile_group(group, ranges)
        names = group.arg_buffers()
        order = [names.index(b) for b in kernel.buffer_args]
        syms = [s.name for s in group.symbols()]
        sym_order = [syms.index(n) for n in kernel.spec.int_args]
        nb = len(names)
        if order == list(range(nb)) and sym_order == list(range(len(syms))):
            return kernel, kernel.spec.source  # the wrapper's argument order is the kernel's

        def run(*args):
            kernel(*[args[i] for i in order], *[args[nb + i] for i in sym_order])
        return run, kernel.spec.source
    built = {g.name: make(g) for g in groups}
    source = "\n\n".join(f"# {name}\n{src}" for name, (_, src) in built.items())
    return KernelSet({name: fn for name, (fn, _) in built.items()}, source, False)


BACKENDS = {"cpp": compile_cpp, "torch": compile_torch, "triton": compile_triton}
