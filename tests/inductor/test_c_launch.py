"""symc's C launcher (runtime/c_launch.py) against a FAKE CUDA driver built here.

The fake libcuda records every cuLaunchKernel: function, grid, block, shared memory, stream and
the parameter values it reads, as many as the test declared for that function (a real driver
reads as many as the kernel declares). Checked: argument marshalling per type, grids, the order
of a compiled graph's launches (the same kernels, grids and sizes Triton's own launcher was
given on the first call), driver errors, the context retry, and the fallbacks.
"""

from tests.device import interpret_triton

interpret_triton()

import ctypes  # noqa: E402
import shutil  # noqa: E402
import struct  # noqa: E402
import subprocess  # noqa: E402
from types import SimpleNamespace  # noqa: E402

import pytest  # noqa: E402
import torch  # noqa: E402

from inductor.codegen.triton import compile_group  # noqa: E402
from inductor.runtime import c_launch  # noqa: E402
from inductor.runtime import triton_fast_launch as fl  # noqa: E402
from tests.inductor.test_triton_launch import pointwise, softmax_like  # noqa: E402

pytestmark = [pytest.mark.no_debug_bounds,
              pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler")]

FAKE_DRIVER = r"""
#include <stdint.h>
#include <string.h>
typedef struct { uint64_t fn; unsigned g[3], b[3], shared; uint64_t stream; int n;
                 uint64_t p[16]; } Rec;
static Rec recs[1024]; static int nrec = 0, fail = 0, lost_ctx = 0, ctx_sets = 0;
static uint64_t declared_fn[64]; static int declared_n[64], ndeclared = 0;
void fake_reset(void) { nrec = 0; fail = 0; lost_ctx = 0; ctx_sets = 0; ndeclared = 0; }
void fake_declare(uint64_t fn, int n) { declared_fn[ndeclared] = fn; declared_n[ndeclared++] = n; }
void fake_fail(int code) { fail = code; }
void fake_lose_context(void) { lost_ctx = 1; }
int fake_count(void) { return nrec; }
int fake_ctx_sets(void) { return ctx_sets; }
Rec *fake_record(int i) { return &recs[i]; }
int cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                   unsigned bz, unsigned shared, void *stream, void **params, void **extra) {
  if (fail) return fail;
  if (lost_ctx) return 201;
  if (extra) return 1;
  Rec *r = &recs[nrec++ % 1024];
  r->fn = (uint64_t)f; r->g[0] = gx; r->g[1] = gy; r->g[2] = gz; r->b[0] = bx; r->b[1] = by;
  r->b[2] = bz; r->shared = shared; r->stream = (uint64_t)stream; r->n = -1;
  for (int k = 0; k < ndeclared; k++)
    if (declared_fn[k] == (uint64_t)f) r->n = declared_n[k];
  for (int i = 0; i < r->n; i++) memcpy(&r->p[i], params[i], 8);
  return 0;
}
int cuGetErrorName(int e, const char **s) { *s = "CUDA_ERROR_FAKE"; return 0; }
int cuDeviceGet(int *d, int ordinal) { *d = ordinal; return 0; }
int cuDevicePrimaryCtxRetain(void **ctx, int d) { *ctx = (void *)16; return 0; }
int cuCtxSetCurrent(void *ctx) { ctx_sets++; lost_ctx = 0; return 0; }
"""


class Rec(ctypes.Structure):
    _fields_ = [("fn", ctypes.c_uint64), ("g", ctypes.c_uint * 3), ("b", ctypes.c_uint * 3),
                ("shared", ctypes.c_uint), ("stream", ctypes.c_uint64), ("n", ctypes.c_int),
                ("p", ctypes.c_uint64 * 16)]


@pytest.fixture(scope="module")
def fake_path(tmp_path_factory):
    d = tmp_path_factory.mktemp("fakecuda")
    (d / "fake.c").write_text(FAKE_DRIVER)
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", str(d / "fake.c"), "-o",
                    str(d / "libcuda_fake.so")], check=True)
    return str(d / "libcuda_fake.so")


@pytest.fixture
def fake(fake_path, monkeypatch):
    monkeypatch.setenv("SYMC_LIBCUDA", fake_path)
    c_launch.reset()
    lib = ctypes.CDLL(fake_path)  # the same handle the extension dlopens: shared state
    lib.fake_record.restype = ctypes.POINTER(Rec)
    lib.fake_declare.argtypes = [ctypes.c_uint64, ctypes.c_int]
    lib.fake_reset()
    if c_launch.module() is None and "Python.h" in c_launch._STATE["reason"]:
        pytest.skip("no Python headers to build the extension with")
    assert c_launch.module() is not None, c_launch._STATE.get("reason")
    yield lib
    c_launch.reset()


def records(lib) -> list:
    out = []
    for i in range(lib.fake_count()):
        r = lib.fake_record(i).contents
        out.append({"fn": r.fn, "grid": tuple(r.g), "block": tuple(r.b), "shared": r.shared,
                    "stream": r.stream, "params": [r.p[k] for k in range(max(r.n, 0))]})
    return out


def f32_bits(x: float) -> int:
    return struct.unpack("<I", struct.pack("<f", x))[0]


def test_arguments_are_marshalled_by_kind_with_zeroed_scratch_slots(fake):
    mod = c_launch.module()
    launcher = mod.make(0xABC0, 128, 4096, "pilLIfd", 3, "k")
    fake.fake_declare(0xABC0, 9)  # 7 arguments + Triton's two scratch pointers
    launcher(5, 777, 0x7F00_0000_1230, -7, -(2**40), 2**63 + 5, 2**32 - 1, 0.1, -2.5)
    (r,) = records(fake)
    assert (r["fn"], r["grid"], r["block"], r["shared"], r["stream"]) == (
        0xABC0, (5, 1, 1), (128, 1, 1), 4096, 777)
    p = r["params"]
    assert p[0] == 0x7F00_0000_1230
    assert p[1] & 0xFFFFFFFF == (-7) & 0xFFFFFFFF
    assert p[2] == (-(2**40)) & (2**64 - 1)
    assert p[3] == 2**63 + 5
    assert p[4] & 0xFFFFFFFF == 2**32 - 1
    assert p[5] & 0xFFFFFFFF == f32_bits(0.1)
    assert p[6] == struct.unpack("<Q", struct.pack("<d", -2.5))[0]
    assert p[7:] == [0, 0]


def test_empty_grid_launches_nothing_and_bad_calls_raise(fake):
    launcher = c_launch.module().make(1, 32, 0, "pi", 0, "k")
    launcher(0, 0, 16, 3)
    assert fake.fake_count() == 0
    with pytest.raises(TypeError, match="expected 4 positional"):
        launcher(1, 0, 16)
    with pytest.raises(OverflowError, match="int32"):
        launcher(1, 0, 16, 2**31)
    with pytest.raises(OverflowError, match="grid"):
        launcher(2**31, 0, 16, 1)
    with pytest.raises(TypeError):
        launcher(1, 0, "x", 1)
    assert fake.fake_count() == 0
    fake.fake_fail(700)
    with pytest.raises(RuntimeError, match="CUresult 700 .CUDA_ERROR_FAKE"):
        launcher(1, 0, 16, 1)


def test_lost_context_is_set_to_the_devices_primary_one_and_retried(fake):
    launcher = c_launch.module().make(9, 32, 0, "p", 0, "k")
    fake.fake_lose_context()
    launcher(3, 0, 64)
    assert fake.fake_ctx_sets() == 1 and [r["grid"] for r in records(fake)] == [(3, 1, 1)]


def test_repeat_launches_n_times_with_the_same_arguments(fake):
    mod = c_launch.module()
    launcher = mod.make(11, 64, 0, "pl", 0, "k")
    fake.fake_declare(11, 2)
    seconds = mod.repeat(launcher, 3, 4, 5, 4096, -3)
    assert isinstance(seconds, float) and seconds >= 0
    assert [(r["grid"][0], r["stream"], r["params"]) for r in records(fake)] == [
        (4, 5, [4096, 2**64 - 3])] * 3
    with pytest.raises(TypeError, match="expected 4 positional"):
        mod.repeat(launcher, 1, 4, 5, 4096)


def test_make_rejects_unknown_kinds(fake):
    with pytest.raises(ValueError, match="argument kinds"):
        c_launch.module().make(1, 32, 0, "px", 0, "k")


class CBinary:
    """A compiled variant as Triton 3.6/3.9 returns it: signature, metadata, CUfunction; its
    `run` (Triton's launcher) records what Triton's path was given."""

    def __init__(self, function: int, spec, log: list, num_warps: int, **meta):
        sig = {a: ("*fp32" if a in spec.pointer_args else "i32") for a in spec.args}
        sig.update({"XBLOCK": "constexpr", "RBLOCK": "constexpr"})
        self.src = SimpleNamespace(signature=sig)
        fields = dict(num_warps=num_warps, num_ctas=1, shared=256, name=f"k{function}",
                      global_scratch_size=0, profile_scratch_size=0, launch_pdl=False,
                      launch_cooperative_grid=False)
        fields.update(meta)
        self.metadata = SimpleNamespace(**fields)
        self.function, self.packed_metadata, self.log = function, ("packed",), log

    def run(self, g0, g1, g2, stream, function, packed, meta, enter, exit_, *args):
        self.log.append(("binary", function, g0, args))

    def launch_metadata(self, *args):
        return None


def fake_variants(kernel, log: list, driver, base: int) -> None:
    """`kernel.variant(body, level)` returns a jit whose launch records and yields a CBinary."""
    binaries: dict = {}
    spec = kernel.spec
    configs = {cfg.body: cfg for cfg in spec.configs}

    def variant(body, level):
        key = (body, level)
        if key not in binaries:
            function = base + len(binaries)
            binaries[key] = CBinary(function, spec, log, configs[body].num_warps)
            driver.fake_declare(function, len(spec.args) + 2)
        binary = binaries[key]

        class Jit:
            def __getitem__(self, grid):
                def launch(*args, num_warps, **constexprs):
                    log.append(("triton", binary.function, grid[0], args))
                    return binary
                return launch
        return Jit()
    kernel.variant = variant


def test_second_launch_goes_through_the_c_launcher_with_tritons_arguments(fake):
    log: list = []
    kernel = compile_group(pointwise("cl1")).launcher
    fake_variants(kernel, log, fake, 1000)
    x, y = torch.randn(37, 8), torch.empty(37, 8)
    kernel.launch(x, y, 37)
    assert fake.fake_count() == 0 and log[-1][0] == "triton"
    kernel.launch(x, y, 37)
    (r,) = records(fake)
    cfg = kernel.spec.configs[0]
    assert r["grid"] == ((37 * 8 + cfg.XBLOCK - 1) // cfg.XBLOCK, 1, 1)
    assert r["block"] == (32 * cfg.num_warps, 1, 1) and r["shared"] == 256
    assert r["fn"] == log[-1][1]
    assert r["params"] == [x.data_ptr(), y.data_ptr(), 37, 0, 0]
    assert r["stream"] == id(0)  # _stream_source's stand-in without CUDA
    assert len(log) == 1  # Triton's launcher was not called again
    entries = [e for s in kernel._launch_plans.values() for e in s if e is not None]
    assert [e[0] for e in entries] == ["c"]


def test_reduction_sizes_and_alignment_levels_keep_their_binaries(fake):
    from inductor.codegen.triton_configs import use_table

    log: list = []
    with use_table("tiny"):
        kernel = compile_group(softmax_like("cl2")).launcher
    fake_variants(kernel, log, fake, 2000)
    sizes = [(3, 32), (3, 32), (2, 200), (2, 200), (3, 32)]
    for b, t in sizes:
        kernel.launch(torch.randn(b, t), torch.empty(b), torch.empty(b, t), b, t)
    firsts = {}
    for kind, function, g0, args in log:
        firsts.setdefault(tuple(args[3:5]), (function, g0))
    got = [(r["fn"], r["grid"][0], tuple(r["params"][3:5])) for r in records(fake)]
    assert got == [(*firsts[(3, 32)], (3, 32)), (*firsts[(2, 200)], (2, 200)),
                   (*firsts[(3, 32)], (3, 32))]
    assert firsts[(3, 32)][0] != firsts[(2, 200)][0]  # persistent vs looped binary


def test_compiled_graph_launches_in_order_with_first_calls_grids_and_sizes(fake):
    from tests.inductor.inductor_graphs import decomposed, prims_graph

    from inductor.compile import compile_graph

    def chain(x, w):
        y = decomposed(torch.tanh, x)
        y = decomposed(torch.matmul, y, w)
        y = decomposed(torch.add, decomposed(torch.mul, y, 2.0), 1.0)
        return decomposed(torch.sigmoid, decomposed(torch.matmul, y, w))

    graph, env, _ = prims_graph(chain, [("a", 16), (16, 16)], device="cpu")
    cg = compile_graph(graph, env, device_backend="triton")
    log: list = []
    namespace = cg.run.__globals__
    kernels = [v.kernel for v in namespace.values() if hasattr(v, "kernel")]
    assert len(kernels) >= 3
    for i, kernel in enumerate(kernels):
        kernel.forget_entries()
        fake_variants(kernel, log, fake, 100 * (i + 1))
    x, w = torch.randn(7, 16), torch.randn(16, 16)
    cg(x, w)  # Triton's path: one "triton" record per launch, in the wrapper's order
    first = [(f, g0, [a for a in args if not isinstance(a, torch.Tensor)]) for _, f, g0, args
             in log]
    assert len(first) >= 3
    cg(x, w)
    got = records(fake)
    assert [(r["fn"], r["grid"][0]) for r in got] == [(f, g0) for f, g0, _ in first]
    for r, (_, _, scalars) in zip(got, first):
        n = len(r["params"]) - 2
        assert r["params"][n - len(scalars):n] == scalars and r["params"][n:] == [0, 0]
    assert got[0]["params"][0] == x.data_ptr()  # the input, contiguous, passed as it is
    assert len(log) == len(first)  # no launch went back to Triton's launcher


@pytest.mark.parametrize("change, reason", [
    ({"global_scratch_size": 64}, "global_scratch_size > 0"),
    ({"num_ctas": 2}, "num_ctas != 1"),
    ({"launch_pdl": True}, "PDL launch"),
])
def test_launch_features_the_c_launcher_lacks_keep_tritons(fake, change, reason):
    spec = compile_group(pointwise("cl3")).launcher.spec
    binary = CBinary(5, spec, [], 4, **change)
    before = c_launch.FALLBACKS[reason]
    assert fl.make_entry(binary, 3, (64,), [0], (id, 0), spec.args)[0] == "run"
    assert c_launch.FALLBACKS[reason] == before + 1


def test_signature_type_or_order_it_does_not_know_keeps_tritons(fake):
    spec = compile_group(pointwise("cl4")).launcher.spec
    binary = CBinary(5, spec, [], 4)
    assert fl.make_entry(binary, 3, (64,), [0], (id, 0), spec.args)[0] == "c"
    binary.src.signature[spec.pointer_args[0]] = "nvTmaDesc"
    assert c_launch.argument_kinds(binary, spec.args) is None
    assert fl.make_entry(binary, 3, (64,), [0], (id, 0), spec.args)[0] == "run"
    binary = CBinary(5, spec, [], 4)
    assert c_launch.argument_kinds(binary, tuple(reversed(spec.args))) is None
    binary.src.signature = {"XBLOCK": "constexpr", **binary.src.signature}
    assert c_launch.argument_kinds(binary, spec.args) is None  # a constexpr before an argument


def test_a_kernel_with_more_arguments_than_the_c_launcher_holds_keeps_tritons(fake):
    """A wide fused kernel (111 pointers on the H200 run) made `make` raise inside a training
    step; it must launch through Triton's launcher instead."""
    spec = compile_group(pointwise("cl5")).launcher.spec
    binary = CBinary(5, spec, [], 4)
    names = tuple(f"arg{i}_ptr" for i in range(c_launch.MAX_ARGS + 15))
    binary.src.signature = {**{n: "*fp32" for n in names}, "XBLOCK": "constexpr"}
    assert c_launch.argument_kinds(binary, names) == "p" * len(names)
    reason = f"{len(names)} arguments (the C launcher takes at most {c_launch.MAX_ARGS - 1})"
    before = c_launch.FALLBACKS[reason]
    assert c_launch.c_launcher(binary, names) is None
    assert c_launch.FALLBACKS[reason] == before + 1


def test_no_driver_or_no_compiler_falls_back_with_a_reason(fake_path, monkeypatch, tmp_path):
    spec = compile_group(pointwise("cl5")).launcher.spec
    monkeypatch.setenv("SYMC_LIBCUDA", str(tmp_path / "missing.so"))
    c_launch.reset()
    try:
        assert c_launch.module() is None
        assert "missing.so" in c_launch._STATE["reason"]
        assert fl.make_entry(CBinary(5, spec, [], 4), 3, (64,), [0], (id, 0),
                             spec.args)[0] == "run"
        monkeypatch.setenv("SYMC_LIBCUDA", fake_path)
        monkeypatch.setenv("CC", "/bin/false")
        c_launch._compiler.cache_clear()
        c_launch.reset()
        assert c_launch.module() is None and "C compiler" in c_launch._STATE["reason"]
    finally:
        c_launch._compiler.cache_clear()
        c_launch.reset()
