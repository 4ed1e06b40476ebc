"""The C++ backend's innermost loops vectorize: gcc's own report (-fopt-info-vec-optimized) names
every `#pragma omp simd` loop of a few kernels (pointwise gelu, row reductions, softmax, layer
norm, a full sum, column sums) as vectorized, and the math they call leaves no libm call in the
object code. Sizes are symbolic, so each loop also has a scalar tail for the remainder. The
kernels are the default ones (a SYMC_DEBUG_BOUNDS check per access keeps a loop scalar)."""

from __future__ import annotations

import re
import subprocess

import pytest
import torch
import torch.nn.functional as F

import inductor
from inductor.runtime import cpp_build
from prims import ops
from tests.inductor.inductor_graphs import decomposed, prims_graph

KERNELS = {
    "gelu": (lambda x: decomposed(F.gelu, x), [("a", "b")]),
    "gelu_tanh": (lambda x: decomposed(F.gelu, x, approximate="tanh"), [("a", "b")]),
    "silu": (lambda x: decomposed(F.silu, x), [("a", "b")]),
    "row_sum": (lambda x: ops.sum(x, (1,)), [("a", "b")]),
    "row_max": (lambda x: ops.amax(x, (1,)), [("a", "b")]),
    "softmax": (lambda x: decomposed(torch.softmax, x, -1), [("a", "b")]),
    "log_softmax": (lambda x: decomposed(torch.log_softmax, x, -1), [("a", "b")]),
    "layer_norm": (lambda x, w, b: decomposed(F.layer_norm, x, x.size()[-1:], w, b),
                   [("a", "b"), ("b",), ("b",)]),
    "full_sum": (lambda x: ops.sum(x, (0, 1)), [("a", "b")]),
    # column reductions (inductor/codegen/cpp_outer.py): the vector loop over a row's columns
    "column_sum": (lambda x: ops.sum(x, (0,)), [("a", "b")]),
    "bias_grad_3d": (lambda x: ops.sum(x, (0, 1)), [("a", "b", "c")]),
    "ln_wb_grads": (lambda x, m, r, g: (ops.sum(decomposed(torch.mul, decomposed(
                        torch.mul, decomposed(torch.sub, x, m), r), g), (0,)), ops.sum(g, (0,))),
                    [("a", "b"), ("a", 1), ("a", 1), ("a", "b")]),
}


KERNEL_START = 'extern "C" void k'


def _vector_report(source: str, tmp_path) -> set[int]:
    """Lines of the loops gcc reports vectorized."""
    src = tmp_path / "kernels.cpp"
    src.write_text(source)
    flags = [f for f in cpp_build.CXX_FLAGS if f not in ("-shared",)]
    proc = subprocess.run([cpp_build.CXX, *flags, "-c", str(src), "-o", str(tmp_path / "k.o"),
                           "-fopt-info-vec-optimized"], capture_output=True, text=True,
                          check=True)
    return {int(m.group(1)) for m in re.finditer(r"kernels\.cpp:(\d+):\d+: optimized: loop "
                                                  r"vectorized", proc.stderr)}


def _simd_loops(source: str) -> dict[tuple[int, int], str]:
    """(first, last) 1-based lines of each loop under an `omp ... simd` pragma in the kernels
    (pragma to closing brace: gcc reports a loop at one of its lines) -> the loop's text."""
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(KERNEL_START))
    loops = {}
    for i in range(start, len(lines) - 1):
        if re.search(r"#pragma omp .*simd", lines[i]):
            depth, j = 0, i + 1
            while True:
                depth += lines[j].count("{") - lines[j].count("}")
                if depth <= 0:
                    break
                j += 1
            loops[(i + 1, j + 1)] = lines[i + 1].strip()
    return loops


@pytest.mark.no_debug_bounds
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_every_simd_loop_is_vectorized(name, tmp_path):
    fn, shapes = KERNELS[name]
    graph, env, _ = prims_graph(fn, shapes)
    compiled = inductor.compile_graph(graph, env, device_backend="cpp")
    source = compiled.kernel_source
    loops = _simd_loops(source)
    assert loops, source
    vectorized = _vector_report(source, tmp_path)
    missed = {span: text for span, text in loops.items()
              if not any(span[0] <= line <= span[1] for line in vectorized)}
    kernels = source[source.find(KERNEL_START):]
    assert not missed, f"not vectorized: {missed}\n{kernels}"


def _gcc_output(name: str, tmp_path, mode: str):
    """The kernels of KERNELS[name] through gcc with `mode` ("-c": an object, "-S": assembly)."""
    fn, shapes = KERNELS[name]
    graph, env, _ = prims_graph(fn, shapes)
    source = inductor.compile_graph(graph, env, device_backend="cpp").kernel_source
    src, out = tmp_path / "k.cpp", tmp_path / f"k.{mode[1:]}"
    src.write_text(source)
    flags = [f for f in cpp_build.CXX_FLAGS if f not in ("-shared",)]
    subprocess.run([cpp_build.CXX, *flags, mode, str(src), "-o", str(out)], check=True)
    return out


@pytest.mark.parametrize("name", ["gelu", "gelu_tanh", "silu", "softmax", "log_softmax"])
def test_kernel_math_makes_no_libm_calls(name, tmp_path):
    obj = _gcc_output(name, tmp_path, "-c")
    symbols = subprocess.run(["nm", "-u", str(obj)], capture_output=True, text=True,
                             check=True).stdout
    calls = re.findall(r"\b(expf?|logf?|tanhf?|erff?)\b", symbols)
    assert not calls, symbols


def test_the_cache_key_names_the_native_target():
    assert "march" in cpp_build.native_target() or "flags" in cpp_build.native_target()
    key = cpp_build.source_key("int x;")
    original = cpp_build.native_target
    try:
        cpp_build.native_target = lambda: "another machine"
        assert cpp_build.source_key("int x;") != key
    finally:
        cpp_build.native_target = original


@pytest.mark.no_debug_bounds
@pytest.mark.parametrize("name", ["column_sum", "bias_grad_3d", "ln_wb_grads"])
def test_column_reductions_load_rows_without_gathers(name, tmp_path):
    """A row of a column block is contiguous: its loads are vector loads. gcc gathered them
    (one index per lane) when it knew the block's width and the r vars were carried from row to
    row (cpp_outer.opaque hides both from it)."""
    assert "gather" not in _gcc_output(name, tmp_path, "-S").read_text()
