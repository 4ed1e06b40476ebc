"""Dtypes at the edge of what the Triton kernels hold: uint8/int8 math stays in its dtype, and
a dtype no kernel can hold (complex) runs the prims reference instead of failing the call.

Programs run on the test device (tests/device.py): CUDA and real Triton in the GPU run, CPU
tensors through the Triton interpreter in CI. The interpreter accepts code the compiler rejects
(a uint8 `//` int32 literal), so one test also compiles the kernels for sm_90 without a GPU.
"""

from __future__ import annotations

import os

from tests.device import DEVICE, interpret_triton, use_triton

interpret_triton()

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

import symc  # noqa: E402


def _u8(dtype=torch.uint8):
    return (torch.arange(35, device=DEVICE) * 37 % 256).to(dtype).reshape(5, 7)


NARROW_PROGRAMS = {
    "add_mul_wraps": lambda x: (x + x) * 3,
    "floordiv": lambda x: x // 3,
    "remainder": lambda x: x % 7,
    "sum_to_int64": lambda x: (x * 3).sum(1),
    "sum_keeps_dtype": lambda x: x.sum(1, dtype=x.dtype),
    "amax": lambda x: (x + 250).amax(1),
    "amin_of_minimum": lambda x: torch.minimum(x, torch.full_like(x, 5)).amin(1),
    "argmax": lambda x: x.argmax(1),
    "prod": lambda x: x.prod(1),
    "compare_count": lambda x: (x > 100).sum(1),
    "relu_sign_mixed": lambda x: torch.relu(x) + torch.sign(x),
    "bitwise": lambda x: (x & 7) | (x ^ 1),
    "where_max": lambda x: torch.where(x > 40, x, 0).amax(1),
    "to_float_mean": lambda x: x.float().mean(1),
}


@pytest.fixture
def triton(monkeypatch):
    use_triton(monkeypatch)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8])
@pytest.mark.parametrize("name", sorted(NARROW_PROGRAMS))
def test_narrow_integer_programs_match_eager(name, dtype, triton):
    fn = NARROW_PROGRAMS[name]
    compiled = symc.compile(fn, backend="inductor")
    for rows in (5, 2):  # the second size runs the same entry
        x = _u8(dtype)[:rows]
        got, expect = compiled(x), fn(x)
        assert got.dtype == expect.dtype, f"{name}: {got.dtype} != {expect.dtype}"
        torch.testing.assert_close(got, expect, msg=f"{name}/{dtype} at {rows} rows")
    assert symc.explain(compiled).entries[0].kernels > 0


# The interpreter runs what the compiler rejects: compile the uint8 kernels for sm_90 here too.
AHEAD = textwrap.dedent("""
    import json, sys, sympy, torch
    sys.path.insert(0, {root!r})
    from inductor.codegen.triton import generate_kernel
    from inductor.codegen.triton_group import GroupNode, KernelGroup
    from inductor.runtime.triton_launch import compile_ahead
    s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
    U8 = torch.uint8

    def floordiv(ops, x, r):
        v = ops.floor_divide(ops.load("a", s1 * x[0] + x[1]), ops.constant(3, U8))
        ops.store("out", s1 * x[0] + x[1], v)

    def minimum_then_min(ops, x, r):
        v = ops.minimum(ops.load("a", s1 * x[0] + r[0]), ops.constant(5, U8))
        ops.store("out", x[0], ops.reduction(U8, U8, "amin", v))

    def relu_sum(ops, x, r):
        v = ops.add(ops.maximum(ops.load("a", s1 * x[0] + r[0]), ops.constant(0, U8)),
                    ops.constant(1, U8))
        ops.store("out", x[0], ops.reduction(U8, U8, "sum", v))

    groups = [
        KernelGroup("u8_floordiv", (s0, s1), (), (GroupNode(floordiv),), {{"a": U8, "out": U8}},
                    inputs=("a",), outputs=("out",), symbol_args=(s0, s1)),
        KernelGroup("u8_min", (s0,), (s1,), (GroupNode(minimum_then_min),), {{"a": U8, "out": U8}},
                    inputs=("a",), outputs=("out",), symbol_args=(s0, s1)),
        KernelGroup("u8_sum", (s0,), (s1,), (GroupNode(relu_sum),), {{"a": U8, "out": U8}},
                    inputs=("a",), outputs=("out",), symbol_args=(s0, s1)),
    ]
    report = {{}}
    for g in groups:
        spec = generate_kernel(g)
        dtypes = {{f"{{b}}_ptr": d for b, d in g.buffers.items()}}
        for body in sorted({{cfg.body for cfg in spec.configs}}):
            try:
                compile_ahead(spec, body, 0, dtypes=dtypes)
                report[f"{{g.name}}/{{body}}"] = "ok"
            except Exception as e:
                report[f"{{g.name}}/{{body}}"] = f"{{type(e).__name__}}: {{str(e)[-300:]}}"
    print(json.dumps(report))
""")


def test_uint8_kernels_compile_for_sm90(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env.update(SYMC_CACHE_DIR=str(tmp_path), TRITON_CACHE_DIR=str(tmp_path / "triton"),
               TRITON_DEFAULT_FP_FUSION="1")
    proc = subprocess.run([sys.executable, "-c", AHEAD.format(root=root)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(report) >= 5, report
    failed = {k: v for k, v in report.items() if v != "ok"}
    assert not failed, failed


# -- complex: no Triton (or C++) dtype; the graph runs the prims reference, the call succeeds --
@pytest.mark.parametrize("kernels", ["triton", "native"])
def test_complex_graph_runs_the_reference_with_a_reason(kernels, monkeypatch):
    if kernels == "triton":
        use_triton(monkeypatch)
    elif DEVICE == "cpu":
        monkeypatch.delenv("SYMC_CPU_BACKEND", raising=False)  # the C++ kernels

    def fn(x, y):
        return (x * 2).abs(), x * y + 1

    compiled = symc.compile(fn, backend="inductor")
    for n in (3, 7):
        x = torch.randn(n, 4, dtype=torch.complex64, device=DEVICE)
        y = torch.randn(n, 4, dtype=torch.complex64, device=DEVICE)
        for got, expect in zip(compiled(x, y), fn(x, y)):
            torch.testing.assert_close(got, expect)
    report = symc.explain(compiled)
    if report.graph_breaks:  # capture or prims may refuse complex first: a break, with a reason
        assert all(b.reason for b in report.breaks), str(report)
        return
    code = "\n".join(report.entries[0].generated_code.values())
    assert "complex64" in code and "reference" in code, code
