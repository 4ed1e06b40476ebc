"""The Triton launcher: variants made once, picked per call; no size ever adds a compilation.

Runs under TRITON_INTERPRET=1 (variants are counted, not compiled); one test compiles the
generated kernels for sm_90 ahead of time in a subprocess without the interpreter, so code the
interpreter accepts but the compiler would reject is caught on a CPU-only machine.
"""

import os

from tests.device import interpret_triton

interpret_triton()  # on CPU tensors in CI; SYMC_TEST_DEVICE=cuda compiles real Triton

import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import textwrap  # noqa: E402

import pytest  # noqa: E402
import sympy  # noqa: E402
import torch  # noqa: E402

from inductor.codegen.triton import compile_group, generate_kernel  # noqa: E402
from inductor.codegen.triton_configs import reduction_configs, use_table  # noqa: E402
from inductor.codegen.triton_group import GroupNode, KernelGroup  # noqa: E402
from inductor.runtime.triton_launch import COUNTERS, reset_counters  # noqa: E402
from symbolic.ranges import ValueRange  # noqa: E402


s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)

# tensors on SYMC_TEST_DEVICE; these tests call the raw launcher with fixed arguments (no
# SYMC_DEBUG_BOUNDS extents)
pytestmark = [pytest.mark.usefixtures("default_device"), pytest.mark.no_debug_bounds]


def softmax_like(name="sm"):
    def amax(ops, x, r):
        v = ops.load("a", s1 * x[0] + r[0])
        ops.store("mx", x[0], ops.reduction(torch.float32, torch.float32, "amax", v))

    def out(ops, x, r):
        e = ops.exp(ops.sub(ops.load("a", s1 * x[0] + r[0]), ops.load("mx", x[0])))
        ops.store("out", s1 * x[0] + r[0], e)
    return KernelGroup(name, (s0,), (s1,), (GroupNode(amax), GroupNode(out)),
                       {"a": torch.float32, "mx": torch.float32, "out": torch.float32},
                       inputs=("a",), outputs=("mx", "out"), symbol_args=(s0, s1))


def pointwise(name="pw", width=8):
    def body(ops, x, r):
        ops.store("out", width * x[0] + x[1], ops.tanh(ops.load("a", width * x[0] + x[1])))
    return KernelGroup(name, (s0, width), (), (GroupNode(body),),
                       {"a": torch.float32, "out": torch.float32},
                       inputs=("a",), outputs=("out",), symbol_args=(s0,))


def test_variant_count_stops_growing_over_thirty_sizes():
    reset_counters()
    with use_table("tiny"):
        kernels = [compile_group(softmax_like()), compile_group(pointwise())]
    counts = []
    sizes = [(b, t) for b in (1, 2, 3) for t in (1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 33)][:30]
    for step, (b, t) in enumerate(sizes):
        a = torch.randn(b, t)
        mx, out = torch.empty(b), torch.empty(b, t)
        kernels[0](a, mx, out, b, t)
        torch.testing.assert_close(out, (a - a.amax(1, keepdim=True)).exp())
        x = torch.randn(t, 8)
        y = torch.empty_like(x)
        kernels[1](x, y, t)
        torch.testing.assert_close(y, x.tanh(), atol=1e-6, rtol=1e-5)
        counts.append(COUNTERS["variants"])
    assert counts[0] == counts[-1], f"variants kept being created: {counts}"
    expected = sum(len({(cfg.body, level) for cfg, level in k.all_variants()}) for k in kernels)
    assert counts[0] == expected
    assert COUNTERS["launches"] == 2 * len(sizes)
    # the size classes really were exercised: persistent and looped bodies both ran
    bodies = {cfg.split("_")[0] for cfg, _ in kernels[0].picks}
    assert bodies == {"persistent", "looped"}


def test_alignment_level_is_picked_per_call():
    with use_table("tiny"):
        kernel = compile_group(softmax_like("al"))
    assert kernel.spec.align_args == ("s1",)
    a = torch.randn(3, 32)
    kernel(a, torch.empty(3), torch.empty(3, 32), 3, 32)
    kernel(a[:, :31].contiguous(), torch.empty(3), torch.empty(3, 31), 3, 31)
    storage = torch.randn(3 * 32 + 1)
    kernel(storage[1:].view(3, 32), torch.empty(3), torch.empty(3, 32), 3, 32)  # odd pointer
    assert {level for _, level in kernel.picks} == {0, 1, 2}


def test_empty_launch_is_skipped():
    kernel = compile_group(pointwise("empty"))
    before = COUNTERS["launches"]
    kernel(torch.empty(0, 8), torch.empty(0, 8), 0)
    assert COUNTERS["launches"] == before


def test_static_reduction_has_one_config_and_ranges_prune_symbolic_ones():
    assert len(reduction_configs(768, {})) == 1
    assert reduction_configs(768, {})[0].RBLOCK == 1024
    assert reduction_configs(50257, {})[0].body == "looped"
    everything = reduction_configs(s1, {s1: ValueRange(1, float("inf"))})
    assert [c.body for c in everything][-1] == "looped" and len(everything) >= 3
    small = reduction_configs(s1, {s1: ValueRange(1, 100)})
    assert all(c.body == "persistent" for c in small) and small[-1].RBLOCK >= 100


AHEAD = textwrap.dedent("""
    import json, sys, torch
    sys.path.insert(0, {root!r})
    from inductor.codegen.triton import generate_kernel
    from inductor.runtime.triton_launch import compile_ahead
    sys.path.insert(0, {here!r})
    import test_triton_launch as t
    import test_triton_codegen as c
    import os
    os.environ["TRITON_INTERPRET"] = "0"  # the test modules set it when imported
    groups = [t.softmax_like("aot_sm"), t.pointwise("aot_pw", 768), c.layer_norm_group(t.s1),
              c.row_reduction_group("argmax", out_dtype=torch.int64),
              c.row_reduction_group("prod")]
    report = {{}}
    for g in groups:
        spec = generate_kernel(g)
        dtypes = {{f"{{b}}_ptr": d for b, d in g.buffers.items()}}
        for body in sorted({{cfg.body for cfg in spec.configs}}):
            for level in (0, 1, 2):
                ptx = compile_ahead(spec, body, level, dtypes=dtypes)["ptx"]
                report[f"{{g.name}}/{{body}}/{{level}}"] = "ld.global.v4" in ptx
    print(json.dumps(report))
""")


def test_generated_kernels_compile_for_sm90_and_aligned_variants_vectorise(tmp_path):
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["SYMC_CACHE_DIR"] = str(tmp_path)
    env["TRITON_CACHE_DIR"] = str(tmp_path / "triton")
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    proc = subprocess.run([sys.executable, "-c", AHEAD.format(root=root, here=here)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["aot_sm/persistent/2"] and report["aot_sm/looped/2"]
    assert report["aot_pw/pointwise/1"], "static 768 stride: pointer alignment suffices"
    assert not report["aot_sm/persistent/0"], "the generic variant cannot assume alignment"
