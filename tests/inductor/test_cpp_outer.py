"""Column reductions in the C++ backend (inductor/codegen/cpp_outer.py): rows outer, a vector of
accumulators over a block of contiguous columns, threads over column blocks (many columns) or
over the rows (few columns, many rows: per-thread partials merged in thread order), chosen at
run time. Results match a float64 oracle at every shape class (0 rows, 1 row or column, odd and
prime sizes, more columns than a block), in each threading variant, for several r and x dims,
through symc.compile with non-contiguous inputs and one compilation over every size. gcc's
vectorization of the row loops: tests/inductor/test_cpp_vectorize.py (column_sum, ln_wb_grads)."""

from __future__ import annotations

import re

import pytest
import torch

import inductor
import symc
from inductor.codegen.cpp_outer import MAX_COLS, MIN_COLS, UNROLL
from prims import ops
from tests.inductor.inductor_graphs import decomposed, prims_graph


def _compiled(fn, shapes, dtypes=torch.float32):
    graph, env, _ = prims_graph(fn, shapes, dtypes)
    return inductor.compile_graph(graph, env, device_backend="cpp")


def _kernel(compiled) -> str:
    source = compiled.kernel_source
    return source[source.find('extern "C" void k'):]


@pytest.fixture(params=[1, 2], ids=["1thread", "2threads"])
def threads(request):
    before = torch.get_num_threads()
    torch.set_num_threads(request.param)
    yield request.param
    torch.set_num_threads(before)


REDUCTIONS = {  # name -> (prims function, eager function)
    "sum": (lambda x: ops.sum(x, (0,)), lambda x: x.sum(0)),
    "amax": (lambda x: ops.amax(x, (0,)), lambda x: x.amax(0)),
    "amin": (lambda x: ops.amin(x, (0,)), lambda x: x.amin(0)),
}
# (rows, cols): no rows; no columns; one row and column; odd and prime sizes; more columns than a block
# (three blocks); at two threads: columns split over threads (>= 2 MIN_COLS columns, work past
# one grain), rows split (few columns, many rows), one column over many rows
SHAPES = [(0, 13), (5, 0), (1, 1), (7, 13), (131, 1031), (3, 2 * MAX_COLS + 5), (257, 4 * MIN_COLS + 3),
          (10007, 13), (70001, 1)]


@pytest.mark.no_debug_bounds  # the checked kernels' layout is not the point here
def test_column_sum_walks_rows_outer_and_columns_inner():
    kernel = _kernel(_compiled(REDUCTIONS["sum"][0], [("a", "b")]))
    # rows outer, UNROLL at a time; inside, a vector loop over the block's columns summing the
    # rows, then adding them into the chunk's accumulators
    loop = re.search(r"for \(; r0 \+ 4 <= rend; r0 \+= 4\) \{\n +#pragma omp simd\n +for "
                     r"\(int64_t xi = 0; xi < xn; \+\+xi\) \{\n +int64_t x0 = xb \+ xi;\n"
                     r"(.*?)\n +\}\n", kernel, flags=re.S)
    assert UNROLL == 4 and loop, kernel
    assert "arg0[(x0 + (r0 * s1))]" in loop.group(1), loop.group(1)  # row r0, then r0 + 1...
    assert len(re.findall(r"arg0\[", loop.group(1))) == UNROLL, loop.group(1)
    assert re.search(r"(acc\d+)_c\[xi\] \+= static_cast<float>\(\1_u\);", loop.group(1))
    # three copies: threads over column blocks, threads over rows, one thread (no region)
    assert kernel.count("#pragma omp parallel for collapse(1)") == 1, kernel
    assert kernel.count("#pragma omp parallel num_threads") == 1, kernel
    serial = kernel[kernel.rfind("} else {"):]
    assert "#pragma omp parallel" not in serial and "#pragma omp simd" in serial, kernel


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_column_reductions_match_float64(name, dtype, threads):
    fn, ref = REDUCTIONS[name]
    compiled = _compiled(fn, [("a", "b")], dtype)
    gen = torch.Generator().manual_seed(0)
    for rows, cols in SHAPES:
        if rows == 0 and name != "sum":
            continue  # eager raises for amax/amin over no rows
        x = torch.randn(rows, cols, generator=gen, dtype=dtype)
        expected = ref(x.double())
        eps = 1e-15 if dtype == torch.float64 else 1e-7
        atol = 0 if name != "sum" else 10 * eps * (1 + rows)  # max and min are exact
        torch.testing.assert_close(compiled(x)[0].double(), expected, rtol=10 * eps, atol=atol,
                                   msg=f"{name} of {rows} x {cols} at {threads} thread(s)")


def test_column_sum_is_no_less_accurate_than_eager_by_much(threads):
    """Long float32 columns: rows are summed CHUNK at a time into fresh accumulators, so the
    error against float64 stays within a small factor of eager's (a cascade sum), where one
    running sum per column would be off by ~ rows * eps * total."""
    compiled = _compiled(REDUCTIONS["sum"][0], [("a", "b")])
    x = torch.rand(100003, 40, generator=torch.Generator().manual_seed(8)) + 1000
    exact = x.double().sum(0)
    err = (compiled(x)[0].double() - exact).abs().max().item()
    assert err <= 8 * (x.sum(0).double() - exact).abs().max().item() + 64, err


def test_bf16_column_sum_accumulates_in_float(threads):
    compiled = _compiled(REDUCTIONS["sum"][0], [("a", "b")], torch.bfloat16)
    x = torch.randn(4099, 77, generator=torch.Generator().manual_seed(1)).bfloat16()
    expected = x.double().sum(0)
    got = compiled(x)[0]
    assert got.dtype == torch.bfloat16
    # one rounding to bf16 of a float32 sum (eager's bf16 sum accumulates in float too)
    torch.testing.assert_close(got.double(), expected, rtol=2 ** -7, atol=0.05)


def test_nan_and_infinity_reach_their_column(threads):
    compiled = _compiled(REDUCTIONS["amax"][0], [("a", "b")])
    x = torch.randn(3001, 150, generator=torch.Generator().manual_seed(2))
    x[2999, 3] = float("nan")
    x[0, 149] = float("inf")
    x[:, 77] = float("-inf")
    torch.testing.assert_close(compiled(x)[0], x.amax(0), equal_nan=True)


def test_row_split_is_deterministic():
    """Threads over the rows merge their partials in thread order: the same bits every call."""
    compiled = _compiled(REDUCTIONS["sum"][0], [("a", "b")])
    x = torch.randn(20011, 5, generator=torch.Generator().manual_seed(3))
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        first = compiled(x)[0]
        for _ in range(5):
            assert torch.equal(compiled(x)[0], first)
    finally:
        torch.set_num_threads(before)
    torch.testing.assert_close(first.double(), x.double().sum(0), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("sizes", [(1, 1), (3, 7), (16, 72), (17, 3001), (0, 5), (4, 0)])
def test_several_r_dims_advance_with_carries(sizes, threads):
    """A bias gradient of [B, T, C]: rows are (B, T), flattened and split by thread ranges."""
    compiled = _compiled(lambda x: ops.sum(x, (0, 1)), [("a", "b", 67)])
    x = torch.randn(*sizes, 67, generator=torch.Generator().manual_seed(4))
    torch.testing.assert_close(compiled(x)[0].double(), x.double().sum((0, 1)), rtol=1e-5,
                               atol=1e-4)


@pytest.mark.parametrize("sizes", [(1, 1, 1), (2, 3, 5), (3, 1, 7), (4, 5, 1), (7, 11, 13),
                                   (5, 3, 4099)])
def test_three_r_dims_carry_innermost_first(sizes, threads):
    compiled = _compiled(lambda x: ops.sum(x, (0, 1, 2)), [("a", "b", "c", 33)])
    assert "++r2 == s2" in _kernel(compiled)  # the three r dims stay separate loops
    x = torch.randn(*sizes, 33, generator=torch.Generator().manual_seed(9))
    torch.testing.assert_close(compiled(x)[0].double(), x.double().sum((0, 1, 2)), rtol=1e-5,
                               atol=1e-4)


@pytest.mark.parametrize("sizes", [(1, 1, 1), (3, 7, 5), (16, 72, 64), (5, 3001, 29), (3, 0, 5),
                                   (2, 300, 130)])
def test_several_x_dims_share_the_threads(sizes, threads):
    """sum over the middle dim of [a, b, c]: the outer x loop and the column blocks collapse."""
    compiled = _compiled(lambda x: ops.sum(x, (1,)), [("a", "b", "c")])
    x = torch.randn(*sizes, generator=torch.Generator().manual_seed(5))
    torch.testing.assert_close(compiled(x)[0].double(), x.double().sum(1), rtol=1e-5, atol=1e-4)


def _ln_weight_grads(x, mean, rstd, g):
    xhat = decomposed(torch.mul, decomposed(torch.sub, x, mean), rstd)
    return ops.sum(decomposed(torch.mul, g, xhat), (0,)), ops.sum(g, (0,))


def test_layer_norm_weight_and_bias_grads_share_one_pass(threads):
    compiled = _compiled(_ln_weight_grads, [("a", "b"), ("a", 1), ("a", 1), ("a", "b")])
    assert compiled.kernels == 1
    kernel = _kernel(compiled)
    serial = kernel[kernel.rfind("} else {"):]
    assert serial.count("for (; r0 + 4 <= rend; r0 += 4)") == 1, kernel
    gen = torch.Generator().manual_seed(6)
    for rows, cols in [(1, 1), (72, 64), (1153, 256), (9001, 7)]:
        x, g = torch.randn(rows, cols, generator=gen), torch.randn(rows, cols, generator=gen)
        mean, rstd = x.mean(1, keepdim=True), torch.rand(rows, 1, generator=gen) + 0.5
        w_grad, b_grad = compiled(x, mean, rstd, g)
        d = [t.double() for t in (x, mean, rstd, g)]
        torch.testing.assert_close(w_grad.double(), (d[3] * (d[0] - d[1]) * d[2]).sum(0),
                                   rtol=1e-5, atol=1e-4)
        torch.testing.assert_close(b_grad.double(), d[3].sum(0), rtol=1e-5, atol=1e-4)


def test_row_reductions_keep_the_row_loops():
    """A row sum (inner layout) is not a column reduction: cpp.py's blocked r loop stays."""
    kernel = _kernel(_compiled(lambda x: ops.sum(x, (1,)), [("a", "b")]))
    assert "xb + xi" not in kernel and "rtail" in kernel, kernel


def test_one_compilation_serves_every_size_with_non_contiguous_inputs():
    def bias_grads(g, h):
        return g.sum(0), (h * 2).sum((0, 1))

    compiled = symc.compile(bias_grads)
    gen = torch.Generator().manual_seed(7)
    for rows, cols in [(5, 9), (64, 768), (1, 1), (513, 131), (0, 40), (4099, 33)]:
        base = torch.randn(rows, cols + 3, generator=gen)
        g = base[:, 2:cols + 2]  # rows strided past the columns
        h = torch.randn(cols, 2, rows, generator=gen).permute(2, 1, 0)  # [rows, 2, cols]
        got = compiled(g, h)
        torch.testing.assert_close(got[0].double(), g.double().sum(0), rtol=1e-5, atol=1e-4)
        torch.testing.assert_close(got[1].double(), (h.double() * 2).sum((0, 1)), rtol=1e-5,
                                   atol=1e-4)
    assert len(compiled.entries) <= 2, [e.reason for e in compiled.entries]


def test_rows_are_unrolled_only_in_cheap_kernels():
    """A plain column sum adds UNROLL rows an iteration; a kernel with a fused producer (a
    gelu backward's erf and exp) adds one row at a time: its body written UNROLL + 1 times per
    variant cost gcc seconds of a GPT's first step for little speed."""
    unrolled = f"+ {UNROLL} <= rend"
    cheap = _kernel(_compiled(lambda g: ops.sum(g, (0,)), [("a", "b")]))
    assert unrolled in cheap

    def gelu_backward_bias_grad(g, x):
        cdf = ops.mul(ops.add(ops.erf(ops.mul(x, 0.7071067811865476)), 1.0), 0.5)
        pdf = ops.mul(ops.exp(ops.mul(ops.mul(x, x), -0.5)), 0.3989422804014327)
        return ops.sum(ops.mul(g, ops.add(cdf, ops.mul(x, pdf))), (0,))
    costly = _kernel(_compiled(gelu_backward_bias_grad, [("a", "b"), ("a", "b")]))
    assert "rend" in costly and unrolled not in costly
    for rows, cols in ((1, 3), (37, 130), (300, 64)):
        g, x = torch.randn(rows, cols), torch.randn(rows, cols)
        xd = x.double()
        pdf = torch.exp(-xd ** 2 / 2) / (2 * torch.pi) ** 0.5
        want = (g.double() * (0.5 * (1 + torch.erf(xd / 2 ** 0.5)) + xd * pdf)).sum(0)
        compiled = _compiled(gelu_backward_bias_grad, [("a", "b"), ("a", "b")])
        torch.testing.assert_close(compiled(g, x)[0].double(), want, rtol=1e-4, atol=1e-4)
