"""Row reductions with a blocked copy of the r loop (inductor/codegen/cpp_blocked.py): float
sums, max and min over a symbolic row get BLOCK lane accumulators plus the original loop for the
remainder, and give eager's values for every remainder (rows shorter than a block, exact
multiples, one past), NaN and infinities in the blocked part or in the tail, and layer norm's
two-pass variance. Vectorization of the lane loops is read from gcc's report by
tests/inductor/test_cpp_vectorize.py (row_sum, row_max, softmax, layer_norm)."""

from __future__ import annotations

import re

import pytest
import torch
import torch.nn.functional as F

import inductor
from inductor.codegen.cpp_blocked import BLOCK
from prims import ops
from tests.inductor.inductor_graphs import decomposed, prims_graph

LENGTHS = [1, BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK + 3, 768, 1001]


def _compiled(fn, shapes, dtype=torch.float32):
    graph, env, _ = prims_graph(fn, shapes, dtype)
    return inductor.compile_graph(graph, env, device_backend="cpp")


REDUCTIONS = {
    "sum": (lambda x: ops.sum(x, (1,)), lambda x: x.sum(1)),
    "amax": (lambda x: ops.amax(x, (1,)), lambda x: x.amax(1)),
    "amin": (lambda x: ops.amin(x, (1,)), lambda x: x.amin(1)),
}


@pytest.mark.no_debug_bounds
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_row_reductions_have_a_blocked_copy(name):
    source = _compiled(REDUCTIONS[name][0], [("a", "b")]).kernel_source
    kernel = source[source.find('extern "C" void k'):]
    assert re.search(rf"for \(int64_t rj\d+ = 0; rj\d+ < {BLOCK}; \+\+rj\d+\)", kernel), kernel
    assert re.search(r"for \(int64_t r0 = rtail\d+; r0 < s1; \+\+r0\)", kernel), kernel


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_row_reductions_match_eager_for_every_remainder(name, dtype):
    fn, ref = REDUCTIONS[name]
    compiled = _compiled(fn, [("a", "b")], dtype)
    gen = torch.Generator().manual_seed(0)
    for n in LENGTHS:
        x = torch.randn(5, n, generator=gen, dtype=dtype)
        torch.testing.assert_close(compiled(x)[0], ref(x), rtol=1e-5 if dtype == torch.float32
                                   else 1e-12, atol=1e-5)


@pytest.mark.parametrize("name", ["amax", "amin", "sum"])
def test_nan_and_infinities_in_blocks_and_tail(name):
    fn, ref = REDUCTIONS[name]
    compiled = _compiled(fn, [("a", "b")])
    n = 3 * BLOCK + 5
    x = torch.randn(6, n, generator=torch.Generator().manual_seed(1))
    x[0, 3] = float("nan")  # in the first block
    x[1, n - 2] = float("nan")  # in the tail
    x[2, BLOCK + 1] = float("inf")
    x[3, n - 1] = float("-inf")
    x[4, :] = float("-inf")
    x[5, BLOCK:] = float("inf")
    torch.testing.assert_close(compiled(x)[0], ref(x), equal_nan=True)


def test_blocked_sum_is_no_less_accurate():
    """A long row of float32: the blocked sum's error against float64 stays within the
    (sequential-per-lane) bound of eager's."""
    compiled = _compiled(REDUCTIONS["sum"][0], [("a", "b")])
    x = torch.rand(4, 100003, generator=torch.Generator().manual_seed(2)) + 1000
    exact = x.double().sum(1)
    err = (compiled(x)[0].double() - exact).abs().max().item()
    assert err <= 4 * (x.float().sum(1).double() - exact).abs().max().item() + 1.0, err


@pytest.mark.parametrize("cols", [7, BLOCK, 768, 1001])
def test_layer_norm_two_pass_blocked(cols):
    """Against layer norm in float64: no worse than eager's float32 (a large mean, where the
    summation order shows)."""
    compiled = _compiled(lambda x, w, b: decomposed(F.layer_norm, x, x.size()[-1:], w, b),
                         [("a", "b"), ("b",), ("b",)])
    gen = torch.Generator().manual_seed(cols)
    x = torch.randn(9, cols, generator=gen) * 3 + 1e3
    w, b = torch.randn(cols, generator=gen), torch.randn(cols, generator=gen)
    exact = F.layer_norm(x.double(), (cols,), w.double(), b.double())
    ours = (compiled(x, w, b)[0].double() - exact).abs().max().item()
    eager = (F.layer_norm(x, (cols,), w, b).double() - exact).abs().max().item()
    assert ours <= 2 * eager + 1e-5, (ours, eager)


@pytest.mark.parametrize("cols", [5, 768])
def test_variance_of_constant_and_nan_rows(cols):
    """The correction never makes a variance negative (a constant row: exactly 0), and NaN
    stays NaN."""
    compiled = _compiled(lambda x: ops.var_mean(x, (1,), 0), [("a", "b")])
    x = torch.full((3, cols), 0.1)
    x[1] = 1e7 + 1.0
    x[2, cols // 2] = float("nan")
    var, mean = compiled(x)[:2]
    want_var, want_mean = torch.var_mean(x, 1, correction=0)
    assert var[0].item() == 0.0 and var[1].item() == 0.0, var
    torch.testing.assert_close(var, want_var, equal_nan=True)
    torch.testing.assert_close(mean, want_mean, equal_nan=True)
