"""Block configs by size class and access layout (codegen/triton_configs.py): outer reductions
(column sums, contiguous along x, strided along r) get wide-in-x tiles, row reductions keep the
row table; both compute the same values as torch under the interpreter."""

from tests.device import interpret_triton

interpret_triton()

import pytest  # noqa: E402
import sympy  # noqa: E402
import torch  # noqa: E402

from inductor.codegen.triton import generate_kernel  # noqa: E402
from inductor.codegen.triton_configs import (  # noqa: E402
    reduction_configs, reduction_layout, use_table)
from inductor.codegen.triton_group import GroupNode, KernelGroup  # noqa: E402
from symbolic.ranges import ValueRange  # noqa: E402
from test_triton_codegen import build, launch, row_reduction_group  # noqa: E402

pytestmark = pytest.mark.usefixtures("default_device")

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
x0, x1, r0, r1 = sympy.symbols("x0 x1 r0 r1", integer=True, nonnegative=True)
UNBOUNDED = {s0: ValueRange(1, float("inf")), s1: ValueRange(1, float("inf"))}


def test_layout_of_column_and_row_accesses():
    assert reduction_layout([3072 * r0 + x0], (x0,), (r0,)) == "outer"
    assert reduction_layout([s1 * r0 + x0], (x0,), (r0,)) == "outer"
    assert reduction_layout([s1 * x0 + r0], (x0,), (r0,)) == "inner"
    # layer-norm backward's weight gradient: two [rows, 768] reads, per-row vectors broadcast
    # over columns (they do not vary with x and do not vote)
    assert reduction_layout([768 * r0 + x0, 768 * r0 + x0, r0, r0, x0], (x0,), (r0,)) == "outer"
    # a transposed operand against a contiguous one: a tie stays with the row table
    assert reduction_layout([s1 * r0 + x0, s0 * x0 + r0], (x0,), (r0,)) == "inner"
    # x stride 1 on an outer x var only (x1 innermost): not contiguous along the lanes' x
    assert reduction_layout([s1 * r0 + 7 * x1 + x0], (x0, x1), (r0,)) == "inner"
    assert reduction_layout([], (x0,), (r0,)) == "inner"


def test_outer_configs_by_size_class():
    everything = reduction_configs(s0 * s1, UNBOUNDED, "outer")
    assert [c.body for c in everything] == ["persistent", "persistent", "looped"]
    looped = everything[-1]
    assert looped.XBLOCK > 1, "lanes of a warp read neighbouring columns"
    assert all(c.XBLOCK > 1 for c in everything)
    # rows provably short: persistent only; provably long: looped only
    assert [c.body for c in reduction_configs(s0, {s0: ValueRange(1, 16)}, "outer")] == \
        ["persistent"]
    assert [c.body for c in reduction_configs(s0, {s0: ValueRange(100, 10**6)}, "outer")] == \
        ["looped"]
    assert reduction_configs(8, {}, "outer")[0].body == "persistent"
    assert reduction_configs(4096, {}, "outer")[0].body == "looped"
    # few static columns (768, a GPT-2 bias): two per program, persistent up to 4096 rows
    narrow = reduction_configs(s0 * s1, UNBOUNDED, "outer", 768)
    assert [(c.body, c.XBLOCK, c.RBLOCK) for c in narrow][2:] == \
        [("persistent", 2, 1024), ("persistent", 2, 4096), ("looped", 4, 512)]
    assert reduction_configs(s0 * s1, UNBOUNDED, "outer", 3072) == everything
    assert reduction_configs(s0 * s1, UNBOUNDED, "outer", s1) == everything
    assert reduction_configs(4096, {}, "outer", 768)[0].XBLOCK == 2
    # the row table is unchanged
    assert reduction_configs(768, {}) == reduction_configs(768, {}, "inner")
    assert reduction_configs(768, {})[0].XBLOCK >= 1


def column_sum_group():
    """sum(a[s0, s1], 0) and sum(a * v[:, None], 0): bias and layer-norm weight gradients."""
    def body(ops, x, r):
        a = ops.load("a", s1 * r[0] + x[0])
        ops.store("db", x[0], ops.reduction(torch.float32, torch.float32, "sum", a))
        v = ops.load("v", r[0])
        ops.store("dw", x[0], ops.reduction(torch.float32, torch.float32, "sum", ops.mul(a, v)))
    return KernelGroup("column_sums", (s1,), (s0,), (GroupNode(body),),
                       {"a": torch.float32, "v": torch.float32, "db": torch.float32,
                        "dw": torch.float32})


def test_column_sums_generate_an_outer_kernel():
    spec = generate_kernel(column_sum_group())
    assert spec.meta["layout"] == "outer"
    assert spec.configs == reduction_configs(s0, UNBOUNDED, "outer")
    row = generate_kernel(row_reduction_group("sum"))
    assert row.meta["layout"] == "inner"
    assert row.configs == reduction_configs(s1, UNBOUNDED, "inner")


@pytest.mark.parametrize("table", ["default", "tiny"])
def test_column_sums_match_torch(table):
    kernel = build(column_sum_group(), table)
    # rows 1, 2, primes, and past the persistent blocks of both tables (looped, with tails)
    for rows, cols in [(1, 1), (2, 7), (7, 33), (33, 2), (67, 5), (131, 3)]:
        a = torch.randn(rows, cols)
        v = torch.randn(rows)
        db, dw = torch.empty(cols), torch.empty(cols)
        launch(kernel, dict(a=a, v=v, db=db, dw=dw), rows, cols)
        torch.testing.assert_close(db, a.sum(0), atol=1e-4, rtol=1e-4)
        torch.testing.assert_close(dw, (a * v[:, None]).sum(0), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("table", ["default", "tiny"])
def test_column_sums_over_few_static_columns_match_torch(table):
    def body(ops, x, r):
        a = ops.load("a", 5 * r[0] + x[0])
        ops.store("out", x[0], ops.reduction(torch.float32, torch.float32, "sum", a))
    group = KernelGroup("five_columns", (5,), (s0,), (GroupNode(body),),
                        {"a": torch.float32, "out": torch.float32})
    kernel = build(group, table)
    assert kernel.spec.meta["layout"] == "outer"
    assert any(c.XBLOCK == 2 for c in kernel.spec.configs)  # the narrow variants
    for rows in (1, 2, 7, 13, 33) + ((1031, 4099) if table == "default" else (67,)):
        a = torch.randn(rows, 5)
        out = torch.empty(5)
        launch(kernel, dict(a=a, out=out), rows)
        torch.testing.assert_close(out, a.sum(0), atol=1e-4, rtol=1e-4)


def test_outer_picks_by_rows_at_launch():
    with use_table("default"):
        kernel = build(column_sum_group())
    for rows in (3, 40, 200):
        a = torch.randn(rows, 5)
        launch(kernel, dict(a=a, v=torch.ones(rows), db=torch.empty(5), dw=torch.empty(5)),
               rows, 5)
    picked = {name for name, _ in kernel.launcher.picks}
    assert any(n.startswith("persistent_x64_r16") for n in picked), picked
    assert any(n.startswith("persistent_x16_r64") for n in picked), picked
    assert any(n.startswith("looped_x4") for n in picked), picked


COLUMN_REDUCTIONS = {
    "sum": lambda a: a.sum(0), "amax": lambda a: a.amax(0), "amin": lambda a: a.amin(0),
    "prod": lambda a: a.prod(0), "argmax": lambda a: a.argmax(0), "argmin": lambda a: a.argmin(0),
}


@pytest.mark.parametrize("table", ["default", "tiny"])
@pytest.mark.parametrize("rtype", sorted(COLUMN_REDUCTIONS))
def test_every_reduction_over_columns_matches_torch(table, rtype):
    out_dtype = torch.int64 if rtype.startswith("arg") else torch.float32

    def body(ops, x, r):
        a = ops.load("a", s1 * r[0] + x[0])
        ops.store("out", x[0], ops.reduction(out_dtype, torch.float32, rtype, a))
    group = KernelGroup(f"col_{rtype}", (s1,), (s0,), (GroupNode(body),),
                        {"a": torch.float32, "out": out_dtype})
    kernel = build(group, table)
    assert kernel.spec.meta["layout"] == "outer"
    for rows, cols in [(1, 3), (2, 7), (7, 2), (33, 5), (67, 3)]:
        a = torch.rand(rows, cols) + 0.5  # prod stays finite
        if rtype.startswith("arg") and rows > 2:
            a[1] = a[2]  # ties keep the first index
        out = torch.empty(cols, dtype=out_dtype)
        launch(kernel, dict(a=a, out=out), rows, cols)
        torch.testing.assert_close(out, COLUMN_REDUCTIONS[rtype](a), rtol=1e-4, atol=1e-5,
                                   msg=f"{rtype} at {(rows, cols)}")
