"""Triton codegen on hand-written fused groups, run under TRITON_INTERPRET=1 on CPU tensors.

Each case builds a KernelGroup whose node bodies call the ops handler, runs the generated kernel
at sizes 1, 2, 7, 33 with the default block table (persistent reductions) and the "tiny" one
(looped reductions, multi-block grids, tails), and compares with torch.
"""

from tests.device import interpret_triton

interpret_triton()  # on CPU tensors in CI; SYMC_TEST_DEVICE=cuda compiles real Triton

import pytest  # noqa: E402
import sympy  # noqa: E402
import torch  # noqa: E402

from inductor.codegen.triton import compile_group, generate_kernel  # noqa: E402
from inductor.codegen.triton_configs import use_table  # noqa: E402
from inductor.codegen.triton_group import GroupNode, KernelGroup  # noqa: E402
from inductor.runtime.kernel_errors import ERROR_BOUNDS  # noqa: E402
from prims.random import philox_hash, uniform_from_hash  # noqa: E402
from symbolic.ranges import ValueRange  # noqa: E402

pytestmark = pytest.mark.usefixtures("default_device")  # tensors on SYMC_TEST_DEVICE

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
SIZES = [1, 2, 7, 33]
TABLES = ["default", "tiny"]


def build(group, table="default", ranges=None):
    with use_table(table):
        return compile_group(group, ranges)


def launch(kernel, buffers: dict, *sizes):
    """Launch with `buffers` by name; returns the error flag (inductor/runtime/kernel_errors.py)
    for a kernel that takes one, else None. Under SYMC_DEBUG_BOUNDS (conftest.py runs a share
    of these tests so) the buffers' extents follow, and a bounds error fails the test."""
    tensors = [buffers[b] for b in kernel.buffer_args]
    flag = [torch.zeros(1, dtype=torch.int32)] if kernel.spec.meta.get("error_flag") else []
    extents = [t.numel() for t in tensors] if kernel.spec.meta.get("extents") else []
    kernel(*tensors, *flag, *sizes, *extents)
    if not flag:
        return None
    assert int(flag[0]) != ERROR_BOUNDS, f"kernel {kernel.spec.name}: an access out of bounds"
    return int(flag[0])


# -- pointwise ---------------------------------------------------------------------------------

def bias_relu_group(dtype):
    def body(ops, x, r):
        a = ops.load("a", s1 * x[0] + x[1])
        b = ops.load("b", x[1])
        ops.store("out", s1 * x[0] + x[1], ops.maximum(ops.add(a, b), 0.0))  # relu
    return KernelGroup("bias_relu", (s0, s1), (), (GroupNode(body),),
                       {"a": dtype, "b": dtype, "out": dtype})


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_pointwise_broadcast_matches_torch(table, dtype):
    kernel = build(bias_relu_group(dtype), table)
    for n in SIZES:
        for m in (1, 7, 33):
            a, b = torch.randn(n, m).to(dtype), torch.randn(m).to(dtype)
            out = torch.full((n, m), float("nan"), dtype=dtype)
            launch(kernel, dict(a=a, b=b, out=out), n, m)
            expect = torch.relu(a.float() + b.float()).to(dtype)
            torch.testing.assert_close(out, expect)


def test_contiguous_pointwise_indexes_without_division():
    def body(ops, x, r):
        v = ops.load("a", 768 * s1 * x[0] + 768 * x[1] + x[2])
        ops.store("out", 768 * s1 * x[0] + 768 * x[1] + x[2], ops.exp(v))
    group = KernelGroup("flat", (s0, s1, 768), (), (GroupNode(body),),
                        {"a": torch.float32, "out": torch.float32})
    spec = generate_kernel(group)
    body_text = spec.source.split("def flat_pointwise")[1]
    assert "//" not in body_text and "%" not in body_text, body_text
    assert "tl.load(a_ptr + (x0)" in body_text
    kernel = compile_group(group)
    a = torch.randn(2, 3, 768)
    out = torch.empty_like(a)
    launch(kernel, dict(a=a, out=out), 2, 3)
    torch.testing.assert_close(out, a.exp())


@pytest.mark.parametrize("table", TABLES)
def test_transpose_and_slice_views(table):
    # out[i, j] = a[j, i + 1] * 2 where a is [s1, s0 + 1]: a permute of a slice, as index math
    def body(ops, x, r):
        v = ops.load("a", (s0 + 1) * x[1] + x[0] + 1)
        ops.store("out", s1 * x[0] + x[1], ops.mul(v, 2.0))
    kernel = build(KernelGroup("tslice", (s0, s1), (), (GroupNode(body),),
                               {"a": torch.float32, "out": torch.float32}), table)
    for n in SIZES:
        for m in (1, 2, 33):
            a = torch.randn(m, n + 1)
            out = torch.empty(n, m)
            launch(kernel, dict(a=a, out=out), n, m)
            torch.testing.assert_close(out, a[:, 1:].t() * 2)


def test_dropout_matches_prims_philox_bit_for_bit():
    def body(ops, x, r):
        u = ops.philox_rand("seed", 5 + x[0], torch.float32)
        v = ops.load("a", x[0])
        keep = ops.gt(u, 0.25)
        ops.store("out", x[0], ops.where(keep, ops.mul(v, 1 / 0.75), 0.0))
    kernel = build(KernelGroup("drop", (s0,), (), (GroupNode(body),),
                               {"a": torch.float32, "out": torch.float32, "seed": torch.int64}),
                   "tiny")
    seed = torch.tensor(987654321987, dtype=torch.int64)
    for n in SIZES:
        a = torch.randn(n)
        out = torch.empty(n)
        launch(kernel, dict(a=a, out=out, seed=seed), n)
        u = uniform_from_hash(philox_hash(seed, torch.arange(n) + 5), torch.float32)
        assert torch.equal(out, torch.where(u > 0.25, a * (1 / 0.75), torch.zeros(())))


@pytest.mark.parametrize("table", TABLES)
def test_gather_rows_with_indirect_index(table):
    # out[i, j] = w[idx[i], j] (embedding); indices must lie in [0, 10) (decompositions wrap
    # negative ones); outside, the error flag is 1 and the masked read gives NaN (the error
    # shows in the output until the flag is read: runtime/error_flags.py)
    def body(ops, x, r):
        row = ops.indirect_indexing(ops.load("idx", x[0]), 10)
        ops.store("out", s1 * x[0] + x[1], ops.load("w", s1 * row + x[1]))
    kernel = build(KernelGroup("embed", (s0, s1), (), (GroupNode(body),),
                               {"idx": torch.int64, "w": torch.float32, "out": torch.float32}),
                   table)
    for n in SIZES:
        for m in (1, 7):
            w = torch.randn(10, m)
            idx = torch.randint(0, 10, (n,))
            out = torch.empty(n, m)
            assert launch(kernel, dict(idx=idx, w=w, out=out), n, m) == 0
            torch.testing.assert_close(out, w[idx])
            bad = idx.clone()
            bad[-1] = -1 if n % 2 else 10
            assert launch(kernel, dict(idx=bad, w=w, out=out), n, m) == 1
            torch.testing.assert_close(out[:-1], w[bad[:-1]])
            assert out[-1].isnan().all()


# -- reductions --------------------------------------------------------------------------------

def row_reduction_group(rtype, dtype=torch.float32, out_dtype=None):
    out_dtype = out_dtype or dtype

    def body(ops, x, r):
        v = ops.load("a", s1 * x[0] + r[0])
        red = ops.reduction(out_dtype, dtype, rtype, v)
        ops.store("out", x[0], red)
    return KernelGroup(f"row_{rtype}", (s0,), (s1,), (GroupNode(body),),
                       {"a": dtype, "out": out_dtype})


REDUCTIONS = {
    "sum": lambda a: a.sum(1),
    "amax": lambda a: a.amax(1),
    "amin": lambda a: a.amin(1),
    "prod": lambda a: a.prod(1),
    "argmax": lambda a: a.argmax(1),
    "argmin": lambda a: a.argmin(1),
}


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("rtype", sorted(REDUCTIONS))
def test_row_reductions_match_torch(table, rtype):
    out_dtype = torch.int64 if rtype.startswith("arg") else torch.float32
    kernel = build(row_reduction_group(rtype, out_dtype=out_dtype), table)
    for n in SIZES:
        for m in SIZES:
            a = torch.randn(n, m)
            if rtype.startswith("arg") and m > 2:
                a[:, 1] = a[:, 2]  # ties keep the first index
            out = torch.empty(n, dtype=out_dtype)
            launch(kernel, dict(a=a, out=out), n, m)
            torch.testing.assert_close(out, REDUCTIONS[rtype](a), msg=f"{rtype} at {(n, m)}")


@pytest.mark.parametrize("table", TABLES)
def test_max_propagates_nan(table):
    kernel = build(row_reduction_group("amax"), table)
    a = torch.randn(3, 33)
    a[1, 20] = float("nan")
    out = torch.empty(3)
    launch(kernel, dict(a=a, out=out), 3, 33)
    assert torch.isnan(out[1]) and not torch.isnan(out[0])


def softmax_group(dtype=torch.float32):
    def row(ops, x, r):
        return s1 * x[0] + r[0]

    def amax(ops, x, r):
        ops.store("mx", x[0], ops.reduction(torch.float32, dtype, "amax", ops.load("a", row(ops, x, r))))

    def total(ops, x, r):
        e = ops.exp(ops.sub(ops.load("a", row(ops, x, r)), ops.load("mx", x[0])))
        ops.store("sm", x[0], ops.reduction(torch.float32, torch.float32, "sum", e))

    def out(ops, x, r):
        e = ops.exp(ops.sub(ops.load("a", row(ops, x, r)), ops.load("mx", x[0])))
        ops.store("out", row(ops, x, r), ops.div(e, ops.load("sm", x[0])))
    return KernelGroup("softmax", (s0,), (s1,),
                       (GroupNode(amax, "max"), GroupNode(total, "sum"), GroupNode(out, "out")),
                       {"a": dtype, "mx": torch.float32, "sm": torch.float32, "out": dtype})


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_softmax_group_matches_torch(table, dtype):
    kernel = build(softmax_group(dtype), table)
    for n in SIZES:
        for m in SIZES:
            a = torch.randn(n, m).to(dtype)
            bufs = dict(a=a, mx=torch.empty(n), sm=torch.empty(n), out=torch.empty(n, m, dtype=dtype))
            launch(kernel, bufs, n, m)
            torch.testing.assert_close(bufs["out"], torch.softmax(a.float(), 1).to(dtype))


def test_looped_softmax_uses_two_loops():
    """max and sum of exponentials in one pass (online, codegen/triton_online.py), then the
    output: two reads of the row, not three."""
    with use_table("tiny"):
        spec = generate_kernel(softmax_group())
    looped = spec.source.split("def softmax_looped")[1]
    assert looped.count("for roffset in range(0, rnumel, RBLOCK):") == 2


def layer_norm_group(hidden, eps=1e-5):
    """var_mean (Welford) over a row, then normalise with weight and bias: one kernel."""
    def row(ops, x, r):
        return hidden * x[0] + r[0]

    def stats(ops, x, r):
        mean, m2, count = ops.reduction(torch.float32, torch.float32, "var_mean",
                                        ops.load("a", row(ops, x, r)))
        ops.store("mean", x[0], mean)
        rstd = ops.rsqrt(ops.add(ops.div(m2, count), eps))
        ops.store("rstd", x[0], rstd)

    def norm(ops, x, r):
        centered = ops.sub(ops.load("a", row(ops, x, r)), ops.load("mean", x[0]))
        scaled = ops.mul(ops.mul(centered, ops.load("rstd", x[0])), ops.load("w", r[0]))
        ops.store("out", row(ops, x, r), ops.add(scaled, ops.load("b", r[0])))
    bufs = {k: torch.float32 for k in ("a", "mean", "rstd", "w", "b", "out")}
    return KernelGroup("layer_norm", (s0,), (hidden,),
                       (GroupNode(stats, "stats"), GroupNode(norm, "norm")), bufs)


@pytest.mark.parametrize("table", TABLES)
@pytest.mark.parametrize("hidden", [s1, 8, 33])
def test_layer_norm_group_matches_torch(table, hidden):
    kernel = build(layer_norm_group(hidden), table)
    widths = SIZES if hidden == s1 else [hidden]
    for n in SIZES:
        for m in widths:
            a, w, b = torch.randn(n, m) * 3 + 1, torch.randn(m), torch.randn(m)
            bufs = dict(a=a, w=w, b=b, mean=torch.empty(n), rstd=torch.empty(n),
                        out=torch.empty(n, m))
            launch(kernel, bufs, *((n, m) if hidden == s1 else (n,)))
            expect = torch.nn.functional.layer_norm(a, (m,), w, b, 1e-5)
            torch.testing.assert_close(bufs["out"], expect, atol=2e-5, rtol=1e-4)
            torch.testing.assert_close(bufs["mean"], a.mean(1))


def test_reduction_of_2d_rows_over_two_reduction_dims():
    # sum over the last two dims of [s0, 3, s1]: rranges (3, s1) coalesce into one
    def body(ops, x, r):
        v = ops.load("a", 3 * s1 * x[0] + s1 * r[0] + r[1])
        ops.store("out", x[0], ops.reduction(torch.float32, torch.float32, "sum", v))
    group = KernelGroup("sum2", (s0,), (3, s1), (GroupNode(body),),
                        {"a": torch.float32, "out": torch.float32})
    for table in TABLES:
        kernel = build(group, table)
        for n, m in [(1, 1), (2, 7), (7, 33)]:
            a = torch.randn(n, 3, m)
            out = torch.empty(n)
            launch(kernel, dict(a=a, out=out), n, m)
            torch.testing.assert_close(out, a.sum((1, 2)), atol=1e-5, rtol=1e-5)


def test_index_dtype_follows_value_ranges():
    group = bias_relu_group(torch.float32)
    bounded = {s0: ValueRange(1, 4096), s1: ValueRange(1, 4096)}
    assert generate_kernel(group, bounded).meta["index_dtype"] == "tl.int32"
    assert not generate_kernel(group, bounded).meta["int64_fallback"]
    assert "s0: tl.int32" in generate_kernel(group, bounded).source
    # unbounded sizes: int32 bodies and their int64 twins, picked per launch by the sizes
    unbounded = generate_kernel(group)
    assert unbounded.meta["index_dtype"] == "tl.int32" and unbounded.meta["int64_fallback"]
    assert "_tiled_i64(" in unbounded.source and "s0: tl.int64" in unbounded.source


@pytest.mark.no_debug_bounds  # asserts the exact arguments and calls the raw launcher
def test_internal_buffer_is_forwarded_and_recomputed_in_later_loops():
    # y = a * 2 (internal, never stored), s = sum(y) over the row, out = y - s: in the looped
    # body, y is recomputed in the second loop instead of read back from memory.
    def make_y(ops, x, r):
        ops.store("y", s1 * x[0] + r[0], ops.mul(ops.load("a", s1 * x[0] + r[0]), 2.0))

    def total(ops, x, r):
        v = ops.load("y", s1 * x[0] + r[0])
        ops.store("s", x[0], ops.reduction(torch.float32, torch.float32, "sum", v))

    def out(ops, x, r):
        v = ops.sub(ops.load("y", s1 * x[0] + r[0]), ops.load("s", x[0]))
        ops.store("out", s1 * x[0] + r[0], v)
    group = KernelGroup("fwd", (s0,), (s1,),
                        (GroupNode(make_y), GroupNode(total), GroupNode(out)),
                        {"a": torch.float32, "y": torch.float32, "s": torch.float32,
                         "out": torch.float32},
                        inputs=("a",), outputs=("out", "s"), internal=frozenset({"y"}),
                        symbol_args=(s0, s1))
    for table in TABLES:
        kernel = build(group, table)
        assert "y_ptr" not in kernel.source
        assert kernel.spec.args == ("a_ptr", "out_ptr", "s_ptr", "s0", "s1")
        for n, m in [(1, 1), (2, 7), (7, 33)]:
            a = torch.randn(n, m)
            out, s = torch.empty(n, m), torch.empty(n)
            kernel(a, out, s, n, m)
            torch.testing.assert_close(s, (2 * a).sum(1), atol=1e-5, rtol=1e-5)
            torch.testing.assert_close(out, 2 * a - s[:, None], atol=1e-5, rtol=1e-5)
