"""int32 indexing where it is safe (codegen/triton_index_width.py): proved from value ranges at
codegen, else checked per launch against symbolic bounds of every index; past int32 the int64
twin of the body runs. Here the int32 limit is lowered so small sizes cross it."""

from tests.device import DEVICE, interpret_triton

interpret_triton()

import re  # noqa: E402

import pytest  # noqa: E402
import sympy  # noqa: E402
import torch  # noqa: E402
from inductor_graphs import decomposed, prims_graph  # noqa: E402

from inductor.codegen import triton_index_width  # noqa: E402
from inductor.codegen.triton_configs import use_table  # noqa: E402
from inductor.codegen.triton_index_width import _interval, _Unbounded, index_width  # noqa: E402
from inductor.compile import compile_graph  # noqa: E402
from inductor.runtime.triton_launch import COUNTERS, reset_counters  # noqa: E402
from symbolic.ranges import ValueRange  # noqa: E402

pytestmark = pytest.mark.usefixtures("default_device")

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
x0, r0 = sympy.symbols("x0 r0", integer=True, nonnegative=True)
POSITIVE = {s0: ValueRange(1, float("inf")), s1: ValueRange(1, float("inf"))}


def test_interval_of_a_row_major_index():
    lo, hi = _interval(r0 + s1 * x0, {x0: s0, r0: s1}, POSITIVE)
    assert lo == 0 and sympy.expand(hi - (s1 * s0 - 1)) == 0


def test_interval_of_a_flipped_index_has_a_lower_bound():
    lo, hi = _interval(s1 - 1 - r0, {r0: s1}, POSITIVE)
    assert sympy.expand(lo) == 0 and sympy.expand(hi - (s1 - 1)) == 0


def test_an_unbounded_form_keeps_int64_only():
    form = sympy.Abs(x0 - s1)  # (Max/Min are bounded: test_interval_of_powers_clamps...)
    with pytest.raises(_Unbounded):
        _interval(form, {x0: s0}, POSITIVE)
    width = index_width([form], {}, {x0: s0}, (s0, s1))
    assert width.dtype == "tl.int64" and width.fits is None


def test_runtime_check_at_the_limit():
    width = index_width([r0 + s1 * x0, s0 * s1 + 1], {}, {x0: s0, r0: s1}, (s0, s1))
    assert width.dtype == "tl.int64" and width.fits is not None
    limit = triton_index_width.INT32_MAX - triton_index_width.MARGIN
    assert width.fits(1000, 1000)
    assert width.fits(1, limit - 1)
    assert not width.fits(1, limit)
    assert not width.fits(2**16, 2**16)


@pytest.mark.parametrize("op", ["softmax", "bias_gelu"])
def test_launch_switches_to_int64_past_the_limit(op, monkeypatch):
    fns = {"softmax": (lambda x, b: decomposed(torch.softmax, decomposed(torch.add, x, b), -1),
                       lambda x, b: torch.softmax(x + b, -1)),
           "bias_gelu": (lambda x, b: decomposed(torch.nn.functional.gelu,
                                                 decomposed(torch.add, x, b)),
                         lambda x, b: torch.nn.functional.gelu(x + b))}
    fn, reference = fns[op]
    graph, env, _ = prims_graph(fn, [("a", "b"), ("b",)], device=DEVICE)
    with use_table("tiny"):
        compiled = compile_graph(graph, env, device_backend="triton")
    assert "_i64(" in compiled.kernel_source
    # int32 "ends" at 200 elements: 5 x 7 runs int32 bodies, 20 x 37 the int64 ones
    monkeypatch.setattr(triton_index_width, "MARGIN", triton_index_width.INT32_MAX - 200)
    reset_counters()
    for n, m, wide in [(5, 7, False), (20, 37, True), (1, 1, False), (3, 101, True)]:
        before = COUNTERS["int64_launch_plans"]
        x, b = torch.randn(n, m), torch.randn(m)
        (got,) = compiled(x, b)
        torch.testing.assert_close(got, reference(x, b), atol=2e-5, rtol=1e-4)
        assert (COUNTERS["int64_launch_plans"] > before) == wide, (n, m)


@pytest.mark.parametrize("shape", [("a", 6), ("a", "b")])
def test_split_but_contiguous_indices_print_without_division(shape):
    """x + b over a short static row (1-D body): the bias load splits xindex into row and
    column, the x load and the store stay `xindex` (no division on their path; Triton can
    vectorise them). Over a symbolic row the body is tiled (triton_tiled.py): no division at
    all, the x load and the store at `x1 + s*x0`."""
    fn = lambda x, b: decomposed(torch.add, x, b)  # noqa: E731
    graph, env, _ = prims_graph(fn, [shape, shape[1:]], device=DEVICE)
    with use_table("tiny"):
        compiled = compile_graph(graph, env, device_backend="triton")
    if shape[1] == 6:
        body = compiled.kernel_source.split("_pointwise(")[1]
        assert "arg0_ptr + (xindex)" in body and "_ptr + (xindex), tmp" in body, body
    else:
        body = compiled.kernel_source.split("_tiled(")[1].split("\n\n")[0]
        per_element = body.split("x1 = xindex")[1]
        assert "//" not in per_element and "%" not in per_element, body
        assert re.search(r"arg0_ptr \+ \(x1 \+ s\d+\*x0\)", body), body
    for n, m in [(1, 6), (7, 6), (33, 6)] if shape[1] == 6 else [(1, 1), (7, 3), (5, 33)]:
        x, b = torch.randn(n, m), torch.randn(m)
        torch.testing.assert_close(compiled(x, b)[0], x + b)


def test_interval_of_powers_clamps_and_gathered_indices():
    # attention scores [s0, 4, s1, s1]: the flat size is a power of a size
    lo, hi = _interval(4 * s0 * s1**2 + 1, {}, POSITIVE)
    assert lo == hi == 4 * s0 * s1**2 + 1
    lo, hi = _interval(x0 + s1**2, {x0: s0}, POSITIVE)
    assert sympy.expand(hi - (s0 - 1 + s1**2)) == 0
    # a clamped slice of a cat input: Max/Min are monotone in each argument
    clamp = sympy.Max(0, sympy.Min(63, x0 - 128))
    lo, hi = _interval(64 * s1 + clamp, {x0: s0}, POSITIVE)
    f = index_width([64 * s1 + clamp], {}, {x0: s0}, (s0, s1)).fits
    assert f is not None and f(1000, 1000)
    assert not f(1, triton_index_width.INT32_MAX // 64)
    # a gathered row index (masked into [0, 50257) by the codegen) times a row stride
    tmp = sympy.Symbol("tmp7", integer=True)
    width = index_width([r0 + 768 * tmp], {tmp: ValueRange(0, 50256)}, {r0: 768}, (s0,))
    assert width.dtype == "tl.int64" and width.fits is not None and width.fits(8)
    # without a finite range the gathered index stays unbounded: int64 only
    width = index_width([r0 + 768 * tmp], {tmp: ValueRange(0, float("inf"))}, {r0: 768}, (s0,))
    assert width.fits is None
    # a power of a possibly negative base is not monotone: int64 only
    with pytest.raises(_Unbounded):
        _interval((x0 - s1)**2, {x0: s0}, POSITIVE)


def test_gather_kernels_get_int32_bodies():
    """An embedding lookup out[i, j] = w[idx[i], j] with a static vocabulary: int32 bodies
    (with int64 twins for sizes past int32) instead of int64 only; values still match."""
    from test_triton_codegen import build, launch
    from inductor.codegen.triton import generate_kernel
    from inductor.codegen.triton_group import GroupNode, KernelGroup

    def body(ops, x, r):
        row = ops.indirect_indexing(ops.load("idx", x[0]), 10)
        ops.store("out", s1 * x[0] + x[1], ops.load("w", s1 * row + x[1]))
    group = KernelGroup("embed32", (s0, s1), (), (GroupNode(body),),
                        {"idx": torch.int64, "w": torch.float32, "out": torch.float32})
    spec = generate_kernel(group)
    assert spec.meta["index_dtype"] == "tl.int32" and spec.meta["int64_fallback"]
    kernel = build(group)
    for n, m in [(1, 1), (2, 7), (33, 5)]:
        w = torch.randn(10, m)
        idx = torch.randint(0, 10, (n,))
        out = torch.empty(n, m)
        assert launch(kernel, dict(idx=idx, w=w, out=out), n, m) == 0
        torch.testing.assert_close(out, w[idx])
