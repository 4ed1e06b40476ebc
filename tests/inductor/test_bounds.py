"""Never out of bounds, one division semantics, eager's errors instead of crashes.

The reproducers (tests/inductor/bounds_cases.py) run in a child process per backend: a kernel
that segfaults or traps (SIGFPE, SIGILL) kills the child, and the test fails naming the case,
instead of killing pytest. Each case is compared with eager over sizes 1, 2, primes and sizes
above the first call's hint, forward and backward. The in-process tests pin the pieces: the one
division proof both printers use, SYMC_DEBUG_BOUNDS catching an index past its buffer, and the
error flag of the C++ and Triton kernels.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # the Triton kernels below run on the CPU

import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
import sympy  # noqa: E402
import torch  # noqa: E402

from inductor.codegen.common import GroupNode, KernelGroup  # noqa: E402
from inductor.codegen.cpp_ops import CppIndexPrinter  # noqa: E402
from inductor.codegen.triton_printer import TritonExprPrinter  # noqa: E402
from inductor.runtime.kernel_errors import KernelBoundsError  # noqa: E402
from symbolic import Analyzer, FloorDiv  # noqa: E402
from symbolic.ranges import ValueRange  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
CASES = Path(__file__).with_name("bounds_cases.py")

CONFIGS = {
    "eager": ("eager", {}),
    "prims": ("prims", {}),
    "aot_eager": ("aot_eager", {}),
    "inductor_cpp": ("inductor", {"SYMC_CPU_BACKEND": "cpp"}),
    "inductor_cpp_debug_bounds": ("inductor", {"SYMC_CPU_BACKEND": "cpp",
                                               "SYMC_DEBUG_BOUNDS": "1"}),
    "inductor_triton": ("inductor", {"SYMC_CPU_BACKEND": "triton", "TRITON_INTERPRET": "1"}),
}


def run_cases(backend: str, env: dict, *names: str) -> dict:
    """{case: None (ok) or the failure}, from a child process; a dead child fails the test."""
    child_env = {k: v for k, v in os.environ.items()
                 if k not in ("SYMC_DEBUG_BOUNDS", "SYMC_CPU_BACKEND")}
    child_env.update(env)
    child_env["PYTHONPATH"] = os.pathsep.join([str(ROOT), child_env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, str(CASES), backend, *names], cwd=ROOT,
                          env=child_env, capture_output=True, text=True, timeout=1200)
    started = [line.split()[1] for line in proc.stdout.splitlines()
               if line.startswith("START ")]
    results = {}
    for line in proc.stdout.splitlines():
        if line.startswith("CASE "):
            _, name, verdict = line.split(" ", 2)
            results[name] = None if verdict == "OK" else verdict
    if proc.returncode < 0 or (proc.returncode and not results):
        dying = started[-1] if started else "(before the first case)"
        pytest.fail(f"the child died with status {proc.returncode} in case {dying!r} "
                    f"(a crash of generated code)\n{proc.stderr[-3000:]}")
    return results


@pytest.mark.parametrize("config", list(CONFIGS))
def test_reproducers_match_eager(config):  # the child's environment is CONFIGS' own
    backend, env = CONFIGS[config]
    results = run_cases(backend, env)
    failures = {name: why for name, why in results.items() if why is not None}
    assert not failures, "\n".join(f"{k}: {v}" for k, v in failures.items())
    from bounds_cases import CASES as ALL  # noqa: PLC0415 - the case table, read only

    assert set(results) == set(ALL)


# -- one division semantics ---------------------------------------------------------------------
s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
x0 = sympy.Symbol("x0", integer=True, nonnegative=True)
RANGES = {s0: ValueRange(2, float("inf")), s1: ValueRange(1, float("inf"))}


@pytest.mark.parametrize("expr, native", [
    (FloorDiv(x0 + s1, s1), True),
    (sympy.Mod(x0, s1), True),
    (FloorDiv(-s0, 2), False),          # x * (-n // 2) at n = 5: -3, C gives -2
    (sympy.Mod(-3, s0), False),         # roll(-3): 3 - n % ... C's % is negative
    (FloorDiv(x0 - s0, 2), False),
    (FloorDiv(x0, 2 - s0), False),      # a divisor that may be negative
])
def test_both_printers_decide_division_from_one_proof(expr, native):
    a, b = expr.args
    an = Analyzer(ranges=RANGES)
    assert an.native_division(a, b) is native
    cpp, triton = CppIndexPrinter(an)(expr), TritonExprPrinter(an)(expr)
    if native:
        assert "symc_" not in cpp and "_py(" not in triton, (cpp, triton)
    else:
        helper = "symc_floordiv" if isinstance(expr, FloorDiv) else "symc_mod"
        assert helper in cpp and ("floordiv_py" in triton or "mod_py" in triton), (cpp, triton)


def test_cpp_floor_helpers_match_python():
    """The printed C++ of FloorDiv/Mod, compiled and run, equals Python's // and % for every
    sign (the old printer's C `/` and `%` truncated)."""
    from inductor.kernels import compile_cpp

    a = sympy.Symbol("s0", integer=True)  # an unbounded int: the helper is required
    exprs = [FloorDiv(a, 3), sympy.Mod(a, 3), FloorDiv(a, -3), sympy.Mod(a, -3)]

    def body(ops, xs, rs):
        for k, e in enumerate(exprs):
            ops.store("out", k, ops.index_expr(e, torch.int64))
    group = KernelGroup("k_div", (1,), (), (GroupNode(body),), {"out": torch.int64},
                        outputs=("out",), symbol_args=(a,))
    kernel = compile_cpp([group]).kernels["k_div"]
    out = torch.zeros(4, dtype=torch.int64)
    for v in (-7, -6, -1, 0, 1, 5, 7):
        kernel(out.data_ptr(), v)
        assert out.tolist() == [v // 3, v % 3, v // -3, v % -3], v


# -- SYMC_DEBUG_BOUNDS: an index past its buffer is an error, not a silent read -------------------
def _shifted_copy_group():
    """out[x0] = a[x0 + 1] for x0 < s0 with both buffers of s0 elements: reads one past `a`."""
    def body(ops, xs, rs):
        ops.store("out", xs[0], ops.load("a", xs[0] + 1))
    return KernelGroup("k_oob", (s0,), (), (GroupNode(body),),
                       {"a": torch.float32, "out": torch.float32}, inputs=("a",),
                       outputs=("out",), symbol_args=(s0,))


def test_debug_bounds_cpp_raises_for_a_read_past_the_buffer(monkeypatch):
    from inductor.kernels import compile_cpp

    monkeypatch.setenv("SYMC_DEBUG_BOUNDS", "1")
    kernel_set = compile_cpp([_shifted_copy_group()])
    assert kernel_set.passes_extents
    a, out = torch.arange(5.0), torch.zeros(5)
    kernel = kernel_set.kernels["k_oob"]
    with pytest.raises(KernelBoundsError, match="k_oob"):
        kernel(a.data_ptr(), out.data_ptr(), 5, a.numel(), out.numel())
    assert out[:4].tolist() == [1.0, 2.0, 3.0, 4.0]  # the in-bounds lanes ran
    kernel(a[:4].data_ptr(), out.data_ptr(), 3, 4, 5)  # in bounds: no error, flag was reset


def test_debug_bounds_triton_raises_for_a_read_past_the_buffer(monkeypatch):
    from inductor.kernels import compile_triton

    monkeypatch.setenv("SYMC_DEBUG_BOUNDS", "1")
    kernel = compile_triton([_shifted_copy_group()]).kernels["k_oob"]
    a, out = torch.arange(5.0), torch.zeros(5)
    with pytest.raises(KernelBoundsError, match="k_oob"):
        kernel(a, out, 5)
    kernel(a[:4].clone(), out, 3)


@pytest.mark.no_debug_bounds
def test_debug_bounds_is_off_by_default(monkeypatch):
    from inductor.kernels import compile_cpp

    monkeypatch.delenv("SYMC_DEBUG_BOUNDS", raising=False)
    kernel_set = compile_cpp([_shifted_copy_group()])
    assert not kernel_set.passes_extents and "symc_in_bounds(" not in kernel_set.source.split(
        "symc_in_bounds(int64_t")[-1]


def test_a_share_of_inductor_tests_runs_with_debug_bounds(request):
    """conftest.py turns SYMC_DEBUG_BOUNDS on for a fixed share of this directory's tests."""
    import zlib

    every = int(os.environ.get("SYMC_TEST_DEBUG_BOUNDS_EVERY", "3"))  # conftest.py's rule
    on = every > 0 and zlib.crc32(request.node.nodeid.encode()) % every == 0
    assert (os.environ.get("SYMC_DEBUG_BOUNDS") == "1") == on


def test_cpp_and_triton_print_divisions_from_the_loop_extents_alike():
    """torch.flip's index `s0 - 1 - x0` is >= 0 only inside the loop (x0 <= s0 - 1): with the
    extents as the Analyzer's scoped facts both printers emit the native operators for it,
    and the compiled C++ equals Python's floor semantics for every size, 1 and primes included."""
    from inductor.kernels import compile_cpp

    flip = s0 - 1 - x0
    exprs = [FloorDiv(flip, 2), sympy.Mod(flip, 3), FloorDiv(flip - 1, 2), sympy.Mod(flip - 1, s0)]
    an = Analyzer()
    with an.loop_extents({x0: s0}):
        cpp = [CppIndexPrinter(an)(e) for e in exprs]
        triton = [TritonExprPrinter(an)(e) for e in exprs]
    assert ["symc_" in c for c in cpp] == ["_py(" in t for t in triton] == [False, False,
                                                                             True, True]

    def body(ops, xs, rs):
        for k, e in enumerate(exprs):
            ops.store(f"out{k}", xs[0], ops.index_expr(e.xreplace({x0: xs[0]}), torch.int64))
    group = KernelGroup("k_flip", (s0,), (), (GroupNode(body),),
                        {f"out{k}": torch.int64 for k in range(4)},
                        outputs=tuple(f"out{k}" for k in range(4)), symbol_args=(s0,))
    kernel_set = compile_cpp([group])
    assert "symc_floordiv" in kernel_set.source  # the `flip - 1` ones
    for n in (1, 2, 5, 7, 13):
        outs = [torch.zeros(n, dtype=torch.int64) for _ in exprs]
        kernel_set.kernels["k_flip"](*(o.data_ptr() for o in outs), n)
        for e, o in zip(exprs, outs):
            assert o.tolist() == [int(e.xreplace({s0: n, x0: i}).doit()) for i in range(n)], e
