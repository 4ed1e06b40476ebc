"""Split column sums (inductor/reduction_split.py): partial sums per chunk of rows, then a
final sum, chosen at run time from the sizes; compared with eager at sizes 1, odd and prime,
rows = 1 included, and at sizes larger than the first call's.
"""

from tests.device import DEVICE, generator, interpret_triton

interpret_triton()  # on CPU tensors in CI; SYMC_TEST_DEVICE=cuda compiles real Triton

import re  # noqa: E402

import pytest  # noqa: E402
import sympy  # noqa: E402
import torch  # noqa: E402
from inductor_graphs import decomposed, prims_graph  # noqa: E402

from inductor.codegen.triton_configs import use_table  # noqa: E402
from inductor.compile import compile_graph  # noqa: E402
from inductor.graph import GraphLowering  # noqa: E402
from inductor.reduction_split import chunk_rows, split_layout  # noqa: E402
from prims.opcodes import PrimOp  # noqa: E402
from symbolic import Analyzer  # noqa: E402

pytestmark = pytest.mark.usefixtures("default_device")

ROWS = [(1, 1), (1, 2), (3, 7), (5, 31), (4, 33), (1, 3)]  # (a, b): rows a*b, the last smaller


def bias_grad(g):
    """sum over the rows of g[a, b, C] (a bias gradient)."""
    return decomposed(torch.sum, g, (0, 1))


def ln_weight_grads(g, x, mean, rstd):
    """The layer-norm weight and bias gradients: sum(g * xhat) and sum(g) over the rows."""
    xhat = decomposed(torch.mul, decomposed(torch.sub, x, mean), rstd)
    return (decomposed(torch.sum, decomposed(torch.mul, g, xhat), (0, 1)),
            decomposed(torch.sum, g, (0, 1)))


def compile_with(fn, shapes, dtypes, backend, table="tiny"):
    graph, env, _ = prims_graph(fn, shapes, dtypes, device=DEVICE)
    with use_table(table):
        return compile_graph(graph, env, device_backend=backend)


def launches(compiled) -> list[str]:
    return re.findall(r"^\s+(k\d+_\w+)\(", compiled.wrapper_source, re.M)


@pytest.mark.parametrize("backend", ["triton", "torch"])
@pytest.mark.parametrize("columns", [1, 5, 6])
def test_bias_grad_matches_eager_at_every_row_count(backend, columns):
    compiled = compile_with(bias_grad, [("a", "b", columns)], torch.float32, backend)
    for n, (a, b) in enumerate(ROWS):
        g = torch.randn(a, b, columns, generator=generator(n))
        (got,) = compiled(g)
        torch.testing.assert_close(got, g.sum((0, 1)), atol=1e-5, rtol=1e-5,
                                   msg=f"rows {a}x{b}")


@pytest.mark.parametrize("backend", ["triton", "torch"])
def test_layer_norm_weight_grads_match_eager(backend):
    shapes = [("a", "b", 6), ("a", "b", 6), ("a", "b", 1), ("a", "b", 1)]
    compiled = compile_with(ln_weight_grads, shapes, torch.float32, backend)
    for n, (a, b) in enumerate(ROWS):
        gen = generator(10 + n)
        g, x = (torch.randn(a, b, 6, generator=gen) for _ in range(2))
        mean, rstd = torch.randn(a, b, 1, generator=gen), torch.rand(a, b, 1, generator=gen)
        dw, db = compiled(g, x, mean, rstd)
        torch.testing.assert_close(dw, (g * (x - mean) * rstd).sum((0, 1)), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(db, g.sum((0, 1)), atol=1e-5, rtol=1e-5)


def test_bf16_column_sum_accumulates_in_float32():
    """Partials are f32 whatever the sum's dtype: 4096 bf16 ones sum to exactly 4096 (a bf16
    accumulator stops at 256), and random rows agree with eager's f32-accumulated sum."""
    compiled = compile_with(bias_grad, [("a", "b", 6)], torch.bfloat16, "triton")
    (got,) = compiled(torch.ones(64, 64, 6, dtype=torch.bfloat16))
    assert got.dtype == torch.bfloat16
    assert torch.equal(got, torch.full((6,), 4096.0, dtype=torch.bfloat16))
    g = torch.randn(7, 31, 6, generator=generator(3)).to(torch.bfloat16)
    (got,) = compiled(g)
    torch.testing.assert_close(got, g.sum((0, 1)), atol=1e-2, rtol=1e-2)


def test_column_sum_launches_a_partial_and_a_final_kernel():
    compiled = compile_with(bias_grad, [("a", "b", 6)], torch.float32, "triton")
    names = launches(compiled)
    assert len(names) == 2, compiled.wrapper_source
    # the partial kernel's outputs grow with the rows: ceil(a*b / 4) chunks of 6 columns
    assert "xnumel = 6*((3 + s0*s1) // 4)" in compiled.kernel_source, compiled.kernel_source


def test_default_table_partial_kernel_fills_the_gpu_at_gpt2_sizes():
    """At B=8, T=512 the fc1 bias gradient (3072 columns) was 768 programs of 4 columns reading
    half of each 32-byte sector (looped x4 r512); split, the partial kernel is 32 chunks of 128
    rows times 48 blocks of 64 columns, and the final one sums 32 rows of partials."""
    from inductor.codegen.triton import generate_kernel

    graph, env, _ = prims_graph(bias_grad, [("a", "b", 3072)], torch.float32, device=DEVICE)
    with use_table("default"):
        compiled = compile_graph(graph, env, device_backend="triton")
        partial, final = (generate_kernel(g) for g in compiled.steps)
    sizes = (8, 512)
    assert partial.rnumel(*sizes) == 128
    (cfg,) = partial.configs
    assert (cfg.body, cfg.XBLOCK) == ("looped", 64)
    assert partial.xnumel(*sizes) // cfg.XBLOCK == 32 * 48
    assert (final.xnumel(*sizes), final.rnumel(*sizes)) == (3072, 32)


def lowered(fn, shapes, dtypes=torch.float32):
    graph, env, _ = prims_graph(fn, shapes, dtypes)
    return GraphLowering(graph, Analyzer(env), split_reductions=True).run()


def test_what_splits():
    kinds = lambda g: [(n.kind, len(n.reduction_ranges)) for n in g.nodes]  # noqa: E731
    # a column sum over symbolic rows: partial (chunks, C | rows) + final (C | chunks)
    assert [n.kind for n in lowered(bias_grad, [("a", "b", 6)]).nodes] == ["reduction"] * 2
    # a row sum (inner layout) keeps one kernel
    assert len(lowered(lambda x: decomposed(torch.sum, x, 1), [(6, "a")]).nodes) == 1
    # symbolic outputs: one kernel
    assert len(lowered(lambda x: decomposed(torch.sum, x, 0), [("a", "b")]).nodes) == 1
    # a max is not split; integer sums are not
    assert len(lowered(lambda x: decomposed(torch.amax, x, 0), [("a", 6)]).nodes) == 1
    assert len(lowered(lambda x: decomposed(torch.sum, x, 0), [("a", 6)], torch.int64).nodes) == 1
    # static rows too few to need more programs
    assert len(lowered(lambda x: decomposed(torch.sum, x, 0), [(64, 6)]).nodes) == 1
    assert kinds(lowered(lambda x: decomposed(torch.sum, x, 0), [(4096, 6)])) == \
        [("reduction", 1), ("reduction", 1)]


def test_split_layout_reads_the_access_pattern():
    x0, r0 = sympy.symbols("x0 r0", integer=True, nonnegative=True)
    an = Analyzer()
    s0 = sympy.Symbol("s0", integer=True, positive=True)
    from inductor.ops import ops

    column = lambda x, r: ops.load("g", 768 * r[0] + x[0])  # noqa: E731
    row = lambda x, r: ops.load("g", s0 * x[0] + r[0])  # noqa: E731
    f32 = torch.float32
    assert split_layout((768,), (s0,), PrimOp.SUM, f32, f32, column, an) == "outer"
    assert split_layout((768,), (s0,), PrimOp.SUM, f32, f32, row, an) is None
    assert split_layout((768,), (s0,), PrimOp.AMAX, f32, f32, column, an) is None
    assert split_layout((s0,), (s0,), PrimOp.SUM, f32, f32, column, an) is None


def fc1_backward(g, x, w):
    """fc1's backward: gelu's backward (here g * sigmoid(x)), which a matmul reads (so it is
    written to memory first), and the bias gradient, its column sum."""
    dx = decomposed(torch.mul, g, decomposed(torch.sigmoid, x))
    dinput = decomposed(torch.mm, decomposed(torch.reshape, dx, (-1, 6)), w)
    return dinput, decomposed(torch.sum, dx, (0, 1))


@pytest.mark.parametrize("backend", ["triton", "torch"])
def test_producer_runs_in_the_partial_kernel(backend):
    """The pointwise node the column sum reads writes its output from the partial kernel's
    tile (masked past the last row): one kernel less than producer, partial and final."""
    shapes = [("a", "b", 6), ("a", "b", 6), (6, 3)]
    compiled = compile_with(fc1_backward, shapes, torch.float32, backend)
    assert kernel_sizes(compiled) == [2, 1], compiled.wrapper_source
    for g, x, w, expect in fc1_cases(20):
        dinput, db = compiled(g, x, w)
        torch.testing.assert_close(dinput, expect.reshape(-1, 6) @ w, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(db, expect.sum((0, 1)), atol=1e-5, rtol=1e-5)


def kernel_sizes(compiled) -> list[int]:
    """Nodes per kernel of a compiled graph, in launch order."""
    return [len(s.nodes) for s in compiled.steps if hasattr(s, "nodes")]


def fc1_cases(seed: int):
    """(g, x, w, g * sigmoid(x)) at every row count of ROWS."""
    for n, (a, b) in enumerate(ROWS):
        gen = generator(seed + n)
        g, x = (torch.randn(a, b, 6, generator=gen) for _ in range(2))
        yield g, x, torch.randn(6, 3, generator=gen), g * torch.sigmoid(x)


def two_layers_of_bias_grads(g, x, w):
    """Two bias gradients over the same columns, a matmul between them (two layers)."""
    db1 = decomposed(torch.sum, g, (0, 1))
    dinput, db2 = fc1_backward(g, x, w)
    return db1, dinput, db2


@pytest.mark.parametrize("backend", ["triton", "torch"])
def test_final_sums_over_the_same_columns_share_one_kernel(backend):
    shapes = [("a", "b", 6), ("a", "b", 6), (6, 3)]
    compiled = compile_with(two_layers_of_bias_grads, shapes, torch.float32, backend)
    # the partials of db1 and db2 and gelu's backward between them (over the same rows); both
    # finals
    assert kernel_sizes(compiled) == [3, 2], compiled.wrapper_source
    for g, x, w, expect in fc1_cases(40):
        db1, dinput, db2 = compiled(g, x, w)
        torch.testing.assert_close(db1, g.sum((0, 1)), atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(dinput, expect.reshape(-1, 6) @ w, atol=1e-5, rtol=1e-5)
        torch.testing.assert_close(db2, expect.sum((0, 1)), atol=1e-5, rtol=1e-5)


def test_a_final_sum_read_by_a_later_node_stays_before_it():
    """sum(g, 0) scaled back onto the rows: the final must run before the reader."""
    def fn(g):
        total = decomposed(torch.sum, g, (0,))
        return decomposed(torch.mul, g, total)
    compiled = compile_with(fn, [("a", 6)], torch.float32, "triton")
    for n in (1, 7, 33):
        g = torch.randn(n, 6, generator=generator(n))
        (got,) = compiled(g)
        torch.testing.assert_close(got, g * g.sum(0), atol=1e-5, rtol=1e-5)


def test_max_reductions_caps_the_shared_final_kernel(monkeypatch):
    import inductor.scheduler as scheduler

    monkeypatch.setattr(scheduler, "MAX_REDUCTIONS", 1)
    shapes = [("a", "b", 6), ("a", "b", 6), (6, 3)]
    compiled = compile_with(two_layers_of_bias_grads, shapes, torch.float32, "torch")
    assert kernel_sizes(compiled) == [2, 1, 1, 1], compiled.wrapper_source


@pytest.mark.parametrize("backend", ["triton", "torch"])
def test_a_later_node_over_the_rows_joins_the_partial_kernel(backend):
    """dx and sum(dx) both returned: the sum reads dx's expression, and dx, written after it,
    joins the partial kernel (one pass over g and x) instead of a third kernel."""
    def fn(g, x):
        dx = decomposed(torch.mul, g, decomposed(torch.sigmoid, x))
        return dx, decomposed(torch.sum, dx, (0,))
    compiled = compile_with(fn, [("a", 6), ("a", 6)], torch.float32, backend)
    assert kernel_sizes(compiled) == [2, 1], compiled.wrapper_source
    for n in (1, 2, 7, 31, 33, 3):
        gen = generator(50 + n)
        g, x = (torch.randn(n, 6, generator=gen) for _ in range(2))
        dx, db = compiled(g, x)
        torch.testing.assert_close(dx, g * torch.sigmoid(x))
        torch.testing.assert_close(db, (g * torch.sigmoid(x)).sum(0), atol=1e-5, rtol=1e-5)
