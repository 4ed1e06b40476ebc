"""The 2-D tiled pointwise body (inductor/codegen/triton_tiled.py), under TRITON_INTERPRET=1.

A pointwise kernel whose loop dims do not merge into one (a per-row or per-column operand)
runs as [YBLOCK, XBLOCK] tiles over rows x cols: no `//` or `%` on an element's index, per-row
values loaded once per row. Checked against torch at sizes 1, odd, prime and non-multiples
of the blocks, with one kernel (and one compiled graph) for every size.
"""

from tests.device import DEVICE, generator, interpret_triton

interpret_triton()  # on CPU tensors in CI; SYMC_TEST_DEVICE=cuda compiles real Triton

import re  # noqa: E402

import pytest  # noqa: E402
import sympy  # noqa: E402
import test_random_programs as random_programs  # noqa: E402
import torch  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from inductor_graphs import decomposed, prims_graph  # noqa: E402
from test_triton_codegen import launch  # noqa: E402

from inductor.codegen.triton import compile_group, generate_kernel  # noqa: E402
from inductor.codegen.triton_configs import tiled_configs, use_table  # noqa: E402
from inductor.codegen.triton_group import GroupNode, KernelGroup  # noqa: E402
from inductor.compile import compile_graph  # noqa: E402
from inductor.runtime.triton_launch import COUNTERS, BlockConfig, reset_counters  # noqa: E402
from prims import run_reference  # noqa: E402
from symbolic.ranges import ValueRange  # noqa: E402

pytestmark = pytest.mark.usefixtures("default_device")  # tensors on SYMC_TEST_DEVICE

s0, s1, s2 = sympy.symbols("s0 s1 s2", integer=True, positive=True)
ROWS = [1, 2, 7, 13]
COLS = [1, 3, 16, 17, 33, 48]  # multiples of 16 run the tiles, the others the 1-D body
TABLES = ["default", "tiny"]
F32 = torch.float32


def body_of(source: str, kind: str) -> str:
    return source.split(f"_{kind}(")[1].split("\n\n")[0]


def element_lines(body: str) -> list[str]:
    """The lines that compute per element (not the tile's own program-id arithmetic)."""
    tile = ("pid", "xblocks", "yoffset", "xoffset")
    return [ln.strip() for ln in body.splitlines()[1:] if not ln.strip().startswith(tile)]


def cross_entropy_backward_group(cols=None):
    """grad = (exp(x - lse) - onehot(target)) * g / n: three per-row operands, an iota."""
    cols = s1 if cols is None else cols

    def body(ops, x, r):
        at = cols * x[0] + x[1]
        logits = ops.load("logits", at)
        lse = ops.load("lse", x[0])
        g = ops.load("g", x[0])
        n = ops.load("n", sympy.Integer(0))  # a 0-d count, the same for every element
        target = ops.load("target", x[0])
        hit = ops.eq(ops.index_expr(x[1], torch.int64), target)
        soft = ops.exp(ops.sub(logits, lse))
        grad = ops.mul(ops.sub(soft, ops.where(hit, 1.0, 0.0)), ops.div(g, n))
        ops.store("out", at, grad)
    buffers = {"logits": F32, "lse": F32, "g": F32, "n": F32, "target": torch.int64, "out": F32}
    return KernelGroup("ce_bwd", (s0, cols), (), (GroupNode(body),), buffers)


def ce_backward_reference(logits, target, g, n):
    lse = torch.logsumexp(logits, 1)
    onehot = torch.nn.functional.one_hot(target, logits.shape[1]).to(F32)
    return lse, (torch.exp(logits - lse[:, None]) - onehot) * (g / n)[:, None]


def bodies_ran(kernel) -> set[str]:
    """The bodies (`tiled`, `pointwise`) the kernel's launches ran."""
    return {name.split("_")[0] for (name, _level) in kernel.picks}


@pytest.mark.no_debug_bounds  # reads the default kernel's loads
def test_row_broadcast_kernel_is_tiled_without_division_per_element():
    spec = generate_kernel(cross_entropy_backward_group())
    # a symbolic row length: the tiles, and the 1-D body for rows that break vector alignment
    assert [c.body for c in spec.configs][-1] == "pointwise"
    assert {c.body for c in spec.configs[:-1]} == {"tiled"}
    body = body_of(spec.source, "tiled")
    for line in element_lines(body):
        assert "//" not in line and "%" not in line, f"a division per element: {line}\n{body}"
    assert "x0 = yindex" in body and "x1 = xindex" in body
    # the per-row operands are [YBLOCK, 1] loads under the row mask only
    assert re.search(r"tl\.load\(lse_ptr \+ \(x0\), ymask,", body), body
    assert re.search(r"tl\.load\(logits_ptr \+ \(x1 \+ s1\*x0\), ymask & xmask,", body), body
    # the 0-d count is one value per row, not one load per element
    assert re.search(r"tl\.load\(n_ptr \+ \(\(0\) \+ 0 \* yindex\), ymask,", body), body


def test_tiling_can_be_switched_off_or_forced(monkeypatch):
    monkeypatch.setenv("SYMC_TRITON_TILED", "0")
    spec = generate_kernel(cross_entropy_backward_group())
    assert [c.body for c in spec.configs] == ["pointwise"] and spec.cols is None
    monkeypatch.setenv("SYMC_TRITON_TILED", "always")
    assert {c.body for c in generate_kernel(cross_entropy_backward_group()).configs} == {"tiled"}
    assert {c.body for c in generate_kernel(cross_entropy_backward_group(37)).configs} == \
        {"tiled"}


def test_static_row_length_tiles_only_when_rows_stay_vector_aligned():
    """bf16 rows of 50304 elements start 16-byte aligned: tiles only. Rows of 50257 do not:
    the 1-D body, whose flat accesses Triton loads as vectors (kept for bf16)."""
    def group(cols):
        g = cross_entropy_backward_group(cols=cols)
        return KernelGroup(g.name, g.xranges, (), g.nodes, {**g.buffers, "logits": torch.bfloat16,
                                                            "out": torch.bfloat16})
    assert [c.name for c in generate_kernel(group(50304)).configs] == ["tiled_y1_x1024_w4"]
    assert [c.body for c in generate_kernel(group(50257)).configs] == ["pointwise"]
    assert [c.body for c in generate_kernel(group(36)).configs] == ["pointwise"]  # 72 bytes
    assert [c.body for c in generate_kernel(group(48)).configs] == ["tiled"]


def test_symbolic_row_length_picks_the_body_per_launch():
    with use_table("tiny"):
        kernel = compile_group(cross_entropy_backward_group())
    gen = generator(7)
    for cols, body in ((32, "tiled"), (33, "pointwise"), (16, "tiled"), (1, "pointwise")):
        kernel.launcher._picks.clear()
        logits = torch.randn(5, cols, generator=gen)
        target = torch.randint(0, cols, (5,), generator=gen)
        g, n = torch.rand(5, generator=gen), torch.tensor(2.0)
        lse, expect = ce_backward_reference(logits, target, g, n)
        out = torch.full((5, cols), float("nan"))
        launch(kernel, dict(logits=logits, lse=lse, g=g, n=n, target=target, out=out), 5, cols)
        torch.testing.assert_close(out, expect)
        assert bodies_ran(kernel) == {body}, (cols, kernel.picks)


def test_contiguous_kernel_keeps_the_1d_body():
    def body(ops, x, r):
        ops.store("out", s1 * x[0] + x[1], ops.exp(ops.load("a", s1 * x[0] + x[1])))
    spec = generate_kernel(KernelGroup("flat", (s0, s1), (), (GroupNode(body),),
                                       {"a": F32, "out": F32}))
    assert [c.body for c in spec.configs] == ["pointwise"]
    assert spec.cols is None


@pytest.mark.parametrize("table", TABLES)
def test_tiled_cross_entropy_backward_matches_torch_at_every_size(table):
    with use_table(table):
        kernel = compile_group(cross_entropy_backward_group())
    gen = generator(0)
    for rows in ROWS:
        for cols in COLS:
            logits = torch.randn(rows, cols, generator=gen)
            target = torch.randint(0, cols, (rows,), generator=gen)
            g = torch.rand(rows, generator=gen) + 0.5
            n = torch.tensor(float(rows))
            lse, expect = ce_backward_reference(logits, target, g, n)
            out = torch.full((rows, cols), float("nan"))
            launch(kernel, dict(logits=logits, lse=lse, g=g, n=n, target=target, out=out),
                   rows, cols)
            torch.testing.assert_close(out, expect, msg=f"rows={rows} cols={cols}")
    assert bodies_ran(kernel) == {"tiled", "pointwise"}


@pytest.mark.parametrize("table", TABLES)
def test_tiled_static_row_length_matches_torch(table):
    """A static vocabulary (cols 36: not a multiple of the tiles) with symbolic rows."""
    with use_table(table):
        kernel = compile_group(cross_entropy_backward_group(cols=36))
    assert [c.body for c in kernel.spec.configs] == ["tiled"]
    gen = generator(1)
    for rows in ROWS + [33]:
        logits = torch.randn(rows, 36, generator=gen)
        target = torch.randint(0, 36, (rows,), generator=gen)
        g, n = torch.rand(rows, generator=gen), torch.tensor(3.0)
        lse, expect = ce_backward_reference(logits, target, g, n)
        out = torch.full((rows, 36), float("nan"))
        launch(kernel, dict(logits=logits, lse=lse, g=g, n=n, target=target, out=out), rows)
        torch.testing.assert_close(out, expect, msg=f"rows={rows}")


def three_dim_group():
    """out[b, t, c] = a[b, t, c] * v[t] + w[c] + 1: rows are (b, t), split once per row."""
    def body(ops, x, r):
        at = s1 * s2 * x[0] + s2 * x[1] + x[2]
        value = ops.mul(ops.load("a", at), ops.load("v", x[1]))
        ops.store("out", at, ops.add(ops.add(value, ops.load("w", x[2])), ops.constant(1.0, F32)))
    return KernelGroup("btc", (s0, s1, s2), (), (GroupNode(body),),
                       {"a": F32, "v": F32, "w": F32, "out": F32})


@pytest.mark.parametrize("table", TABLES)
def test_tiled_rows_over_two_dims_match_torch(table):
    spec = generate_kernel(three_dim_group())
    body = body_of(spec.source, "tiled")
    assert "x0 = (yindex // (s1))" in body and "x1 = yindex % (s1)" in body
    assert "x2 = xindex" in body
    assert not any("xindex //" in ln or "xindex %" in ln for ln in element_lines(body)), body
    with use_table(table):
        kernel = compile_group(three_dim_group())
    gen = generator(2)
    for b, t, c in ((1, 1, 16), (2, 3, 5), (3, 7, 32), (1, 5, 48), (2, 2, 33)):
        a, v = torch.randn(b, t, c, generator=gen), torch.randn(t, generator=gen)
        w = torch.randn(c, generator=gen)
        out = torch.full((b, t, c), float("nan"))
        launch(kernel, dict(a=a, v=v, w=w, out=out), b, t, c)
        torch.testing.assert_close(out, a * v[:, None] + w + 1, msg=f"sizes {(b, t, c)}")
    assert bodies_ran(kernel) == {"tiled", "pointwise"}


def test_tiled_constant_store_and_gathered_rows_match_torch():
    """A constant stored over the tile, and rows read through a loaded index (embedding)."""
    def body(ops, x, r):
        row = ops.indirect_indexing(ops.load("idx", x[0]), 11)
        ops.store("emb", s1 * x[0] + x[1], ops.load("table", s1 * row + x[1]))
        ops.store("zeros", s1 * x[0] + x[1], ops.constant(0.0, F32))
    group = KernelGroup("gather", (s0, s1), (), (GroupNode(body),),
                        {"idx": torch.int64, "table": F32, "emb": F32, "zeros": F32})
    with use_table("tiny"):
        kernel = compile_group(group)
    assert "tiled" in kernel.spec.source.split("def gather_")[1][:6]
    gen = generator(3)
    for rows, cols in ((1, 1), (7, 16), (13, 33), (5, 32)):
        table = torch.randn(11, cols, generator=gen)
        idx = torch.randint(0, 11, (rows,), generator=gen)
        emb, zeros = torch.full((rows, cols), float("nan")), torch.full((rows, cols), 5.0)
        flag = launch(kernel, dict(idx=idx, table=table, emb=emb, zeros=zeros), rows, cols)
        assert flag == 0
        torch.testing.assert_close(emb, table[idx])
        assert torch.all(zeros == 0)
    assert bodies_ran(kernel) == {"tiled", "pointwise"}


def test_tile_is_picked_by_row_length():
    tiles = tiled_configs(s1, {s1: ValueRange(1, float("inf"))})
    assert [(t.YBLOCK, t.XBLOCK) for t in tiles] == [(1, 1024), (4, 256), (16, 64), (64, 16),
                                                    (256, 4)]

    def pick(cols):
        return next((t for t in tiles if t.serves(None, cols)), tiles[-1]).XBLOCK
    assert [pick(c) for c in (50304, 3072, 768, 2304, 64, 300, 12, 1)] == \
        [1024, 1024, 256, 256, 64, 64, 4, 4]
    # a static row length is decided at codegen; a range drops the tiles it never picks
    assert tiled_configs(sympy.Integer(768), {}) == (BlockConfig("tiled", XBLOCK=256, YBLOCK=4),)
    assert [t.XBLOCK for t in tiled_configs(s1, {s1: ValueRange(512, 4096)})] == [1024, 256, 64]
    assert [t.XBLOCK for t in tiled_configs(s1, {s1: ValueRange(1, 20)})] == [16, 4]


def test_one_compiled_graph_serves_every_size_with_tiles():
    """exp(x - m[:, None]) * g[:, None] + bias: one graph, no new variant after the first call."""
    def fn(x, m, g, bias):
        shifted = decomposed(torch.sub, x, decomposed(torch.unsqueeze, m, 1))
        scaled = decomposed(torch.mul, decomposed(torch.exp, shifted),
                            decomposed(torch.unsqueeze, g, 1))
        return decomposed(torch.add, scaled, bias)
    graph, env, _ = prims_graph(fn, [("a", "b"), ("a",), ("a",), ("b",)], device=DEVICE)
    reset_counters()
    with use_table("tiny"):
        compiled = compile_graph(graph, env, device_backend="triton")
    assert "_tiled(" in compiled.kernel_source
    gen = generator(4)
    variants = []
    for rows, cols in ((1, 1), (2, 16), (7, 17), (13, 32), (33, 2), (3, 48)):
        x, m = torch.randn(rows, cols, generator=gen), torch.randn(rows, generator=gen)
        g, bias = torch.randn(rows, generator=gen), torch.randn(cols, generator=gen)
        (got,) = compiled(x, m, g, bias)
        torch.testing.assert_close(got, torch.exp(x - m[:, None]) * g[:, None] + bias)
        variants.append(COUNTERS["variants"])
    assert variants[-1] == variants[0], f"variants grew after the first call: {variants}"


def test_tiled_dropout_draws_the_flat_index_numbers_bit_for_bit():
    """The Philox counter of an element is its flat index, whichever body prints it."""
    from prims.random import philox_hash, uniform_from_hash

    def body(ops, x, r):
        at = s1 * x[0] + x[1]
        keep = ops.gt(ops.philox_rand("seed", at, F32), 0.25)
        scaled = ops.mul(ops.load("a", at), ops.load("scale", x[0]))
        ops.store("out", at, ops.where(keep, scaled, 0.0))
    group = KernelGroup("drop_rows", (s0, s1), (), (GroupNode(body),),
                        {"a": F32, "scale": F32, "out": F32, "seed": torch.int64})
    with use_table("tiny"):
        kernel = compile_group(group)
    assert "_tiled(" in kernel.spec.source
    seed = torch.tensor(987654321987, dtype=torch.int64)
    gen = generator(5)
    for rows, cols in ((1, 1), (3, 16), (13, 33), (5, 32)):
        a, scale = torch.randn(rows, cols, generator=gen), torch.randn(rows, generator=gen)
        out = torch.full((rows, cols), float("nan"))
        launch(kernel, dict(a=a, scale=scale, out=out, seed=seed), rows, cols)
        u = uniform_from_hash(philox_hash(seed, torch.arange(rows * cols)), F32)
        expect = torch.where(u.view(rows, cols) > 0.25, a * scale[:, None], torch.zeros(()))
        assert torch.equal(out, expect), f"rows={rows} cols={cols}"
    assert bodies_ran(kernel) == {"tiled", "pointwise"}


def test_short_static_row_keeps_the_1d_body():
    def body(ops, x, r):
        ops.store("out", 6 * x[0] + x[1], ops.add(ops.load("a", 6 * x[0] + x[1]),
                                                  ops.load("b", x[1])))
    spec = generate_kernel(KernelGroup("short", (s0, 6), (), (GroupNode(body),),
                                       {"a": F32, "b": F32, "out": F32}))
    assert [c.body for c in spec.configs] == ["pointwise"]


def test_tiled_alignment_variant_reads_only_row_length_and_strides():
    """Rows never split a vector: a kernel over (s0, 40) has no aligned-sizes variant for s0
    (which would compile a binary that no access can use)."""
    assert generate_kernel(cross_entropy_backward_group(cols=40)).align_args == ()
    assert generate_kernel(cross_entropy_backward_group()).align_args == ("s1",)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(random_programs.step, min_size=1, max_size=5), a=st.integers(1, 9),
       b=st.integers(1, 9))
def test_random_programs_through_tiles_match_reference(steps, a, b):
    """Transposes, flips, pads and broadcast reductions (test_random_programs.py's programs)
    make kernels over two dims that do not merge: tiled, once, at every size."""
    graph, env, _ = prims_graph(lambda x, y: random_programs.run_program(steps, x, y),
                                [("a", "b"), ("a", "b")], device=DEVICE)
    with use_table("tiny"):
        compiled = compile_graph(graph, env, device_backend="triton")
    for shape in [(a, b), (1, 3), (5, 1), (13, 17), (16, 32), (48, 16)]:  # 16s: tiles
        gen = generator(a * 10 + b)
        inputs = [torch.randn(shape, generator=gen) for _ in range(2)]
        for got, want in zip(compiled(*inputs), run_reference(graph, inputs), strict=True):
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-4,
                                       msg=lambda m: f"{m}\n{steps}\n{compiled.source[-2500:]}")


@pytest.mark.parametrize("table", TABLES)
def test_tiled_masked_row_load_under_a_column_condition(table):
    """A per-row value read only where a column condition holds (a pad over the columns of a
    broadcast): its mask spans the tile, so its pointer must too."""
    def body(ops, x, r):
        inside = ops.lt(ops.index_expr(x[1], torch.int64), ops.constant(5, torch.int64))
        value = ops.masked(inside, lambda: ops.load("v", x[0]), 0.0)
        ops.store("out", s1 * x[0] + x[1], ops.add(value, ops.load("a", s1 * x[0] + x[1])))
    group = KernelGroup("pad_rows", (s0, s1), (), (GroupNode(body),),
                        {"v": F32, "a": F32, "out": F32})
    with use_table(table):
        kernel = compile_group(group)
    gen = generator(6)
    for rows, cols in ((1, 1), (7, 16), (13, 33), (3, 32)):
        v, a = torch.randn(rows, generator=gen), torch.randn(rows, cols, generator=gen)
        out = torch.full((rows, cols), float("nan"))
        launch(kernel, dict(v=v, a=a, out=out), rows, cols)
        keep = (torch.arange(cols) < 5)[None, :]
        torch.testing.assert_close(out, torch.where(keep, v[:, None], 0.0) + a)
    assert bodies_ran(kernel) == {"tiled", "pointwise"}
