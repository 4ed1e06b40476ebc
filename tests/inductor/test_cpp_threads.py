"""C++ kernels choose their thread count at run time from the symbol values; a call that gets
one thread runs a copy of the loops outside any OpenMP parallel region (entering one, even
under `if(0)`, costs a libgomp team start per call: as much as the ctypes call itself). Both
copies compute what eager computes, at sizes on either side of the threshold."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

import inductor
from tests.inductor.inductor_graphs import decomposed, prims_graph

KERNELS = {  # name -> (prims function, shapes, eager reference)
    "gelu": (lambda x: decomposed(F.gelu, x), [("a", "b")], F.gelu),
    "softmax": (lambda x: decomposed(torch.softmax, x, -1), [("a", "b")],
                lambda x: torch.softmax(x, -1)),
    "layer_norm": (lambda x, w, b: decomposed(F.layer_norm, x, x.size()[-1:], w, b),
                   [("a", "b"), ("b",), ("b",)],
                   lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b)),
    "add_3d": (lambda x, y: decomposed(torch.add, x, y), [("a", "b", "c"), ("a", "b", "c")],
               torch.add),
    # full reductions (no x loop): the parallel copy splits r across threads
    "full_sum": (lambda x: decomposed(torch.sum, x), [("a", "b")], torch.sum),
    "full_var": (lambda x: decomposed(torch.var, x), [("a", "b")], torch.var),
}
# (rows, cols): one thread (1, 1), (1, 7), (2, 13), (7, 768); two (50, 1000) on a machine with
# two cores or more; few long rows (3, 70001): each row's reduction split across threads
SIZES = [(1, 1), (1, 7), (2, 13), (7, 768), (50, 1000), (3, 70001)]


def _compiled(name):
    fn, shapes, _ = KERNELS[name]
    graph, env, _ = prims_graph(fn, shapes)
    return inductor.compile_graph(graph, env, device_backend="cpp")


def _kernels(source: str) -> list[str]:
    return re.findall(r'extern "C" void k.*?\n}\n', source, flags=re.S)


@pytest.mark.no_debug_bounds  # the checked kernels' layout is not the point here
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_one_thread_runs_outside_a_parallel_region(name):
    kernels = _kernels(_compiled(name).kernel_source)
    assert kernels
    for text in kernels:
        branch = re.search(r"\n( +)if \(symc_threads\([^\n]*\) > 1\) \{\n(.*?)\n\1\} else "
                           r"\{\n(.*?)\n\1\}\n", text, flags=re.S)
        assert branch, text
        _, parallel, serial = branch.groups()
        assert "#pragma omp parallel" in parallel, text
        assert "#pragma omp parallel" not in serial and "#pragma omp simd" in serial, text


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_both_copies_match_eager(name):
    cg = _compiled(name)
    _, shapes, reference = KERNELS[name]
    gen = torch.Generator().manual_seed(0)
    for rows, cols in SIZES:
        if len(shapes[0]) == 3:
            dims = [(rows, cols // 7 + 1, 7)] * 2
        else:
            dims = [(rows, cols)] + [(cols,)] * (len(shapes) - 1)
        args = [torch.randn(d, generator=gen) * 3 for d in dims]
        out = cg(*args)
        got = out[-1] if name == "layer_norm" else out[0]
        torch.testing.assert_close(got, reference(*args), atol=3e-5, rtol=1e-4, equal_nan=True,
                                   msg=f"{name} at {dims}")


def test_gathering_full_reduction_takes_threads_sooner():
    """Cross-entropy's mean of picked logits (a full reduction through a gathered index: a
    cache miss per element) splits over threads from GATHER_GRAIN elements; a plain full sum
    keeps GRAIN. Values match eager on both sides of the gather threshold."""
    from inductor.codegen.cpp import GATHER_GRAIN, GRAIN

    graph, env, _ = prims_graph(lambda x, t: decomposed(F.cross_entropy, x, t),
                                [("a", "b"), ("a",)], [torch.float32, torch.int64])
    ce = inductor.compile_graph(graph, env, device_backend="cpp")
    grains = set(re.findall(r"symc_threads\([^,]+, (\d+),", ce.kernel_source))
    assert str(GATHER_GRAIN) in grains, ce.kernel_source
    full_sum = _compiled("full_sum").kernel_source
    assert set(re.findall(r"symc_threads\([^,]+, (\d+),", full_sum)) == {str(GRAIN)}, full_sum
    gen = torch.Generator().manual_seed(0)
    for rows in (3, GATHER_GRAIN + 1):
        x = torch.randn(rows, 9, generator=gen)
        t = torch.randint(0, 9, (rows,), generator=gen)
        torch.testing.assert_close(ce(x, t)[0], F.cross_entropy(x, t))
