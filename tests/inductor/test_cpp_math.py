"""The C++ kernels' float math (inductor/runtime/cpp_math.h) against libm in double, rounded:
a sweep of every 61st float bit pattern (70 million inputs: both signs, subnormals, inf, NaN
payloads) plus special values (+-0, +-inf, NaN, the least and largest subnormals, FLT_MAX) and
dense grids around the functions' thresholds, evaluated in an `omp simd` loop as kernels do.
Asserts the max error in ulp, NaN where libm gives NaN, inf where it gives inf, and the sign of
zero results; the numbers are printed (pytest -s).

The polynomials were fitted for the file (relative-error minimax by reweighted least squares in
double: erf(x)/x in x^2 on [0, 1], degree 6; erfc(x), absolute error, in t = (x - 2.5)/1.5 on
[1, 4], degree 14: a Chebyshev fit reweighted toward minimax, converted to monomials, all
|coefficients| < 0.05, no exp and no division); exp, log and tanh use Cephes-style
reductions with their classic coefficients.
Measured: exp 1, log 1, tanh 1, erf 2, sigmoid 2 ulp (erf evaluated by Estrin's scheme: the same 2)."""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest
import torch

import inductor
from inductor.runtime import cpp_build
from prims import ops
from tests.inductor.inductor_graphs import prims_graph

HARNESS = Path(__file__).with_name("cpp_math_ulp.cpp")
MAX_ULP = {"exp": 2, "log": 2, "tanh": 2, "erf": 3, "sigmoid": 3}


@pytest.fixture(scope="module")
def ulp_report(tmp_path_factory) -> dict:
    tmp = tmp_path_factory.mktemp("ulp")
    src, exe = tmp / "ulp.cpp", tmp / "ulp"
    src.write_text(cpp_build.full_source(HARNESS.read_text()))
    flags = [f for f in cpp_build.CXX_FLAGS if f not in ("-shared", "-fPIC")]
    subprocess.run([cpp_build.CXX, *flags, str(src), "-o", str(exe)], check=True)
    out = subprocess.run([str(exe), "61"], capture_output=True, text=True, check=True).stdout
    report = {}
    for line in out.splitlines():
        name, ulp, where, zero_sign = line.split()
        report[name] = (int(ulp), float.fromhex(where), int(zero_sign))
    print("max ulp:", {k: v[0] for k, v in report.items()})
    return report


@pytest.mark.parametrize("name", sorted(MAX_ULP))
def test_max_ulp_over_the_float_range(ulp_report, name):
    ulp, where, zero_sign = ulp_report[name]
    assert ulp <= MAX_ULP[name], f"{name}: {ulp} ulp at {where!r}"
    assert zero_sign == 0, f"{name}: {zero_sign} zero results with the wrong sign"


SPECIALS = [0.0, -0.0, math.inf, -math.inf, math.nan, 1e-45, -1e-45, 1.1754942e-38, 3.4e38,
            -3.4e38, 88.72284, -87.33655, -103.97208, -104.0, 0.625, 1.0, 4.0, -4.0, 20.0, -20.0]


def _ulp(got: torch.Tensor, want: torch.Tensor) -> torch.Tensor:
    """Distance in float32 ulp (0 where both are NaN or equal infinities)."""
    def ordered(t):
        bits = t.view(torch.int32).to(torch.int64)
        return torch.where(bits < 0, -(bits & 0x7FFFFFFF), bits)
    both_nan = got.isnan() & want.isnan()
    same = (got == want) | both_nan
    far = got.isnan() | want.isnan() | got.isinf() | want.isinf()
    dist = (ordered(got) - ordered(want)).abs()
    return torch.where(same, 0, torch.where(far, 2**31, dist))


@pytest.mark.parametrize("name,op,ref", [("exp", ops.exp, torch.exp), ("log", ops.log, torch.log),
                                         ("tanh", ops.tanh, torch.tanh),
                                         ("erf", ops.erf, torch.erf),
                                         ("sigmoid", ops.sigmoid, torch.sigmoid)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_compiled_kernels_on_special_values(name, op, ref, dtype):
    """A compiled kernel (size symbolic: the vector body and the scalar tail) on the special
    values, against the op in float64 (libm), rounded."""
    graph, env, _ = prims_graph(lambda x: op(x), [("a",)], dtype)
    compiled = inductor.compile_graph(graph, env, device_backend="cpp")
    x = torch.tensor(SPECIALS + [-v for v in SPECIALS], dtype=dtype)
    got, want = compiled(x)[0], ref(x.double()).to(dtype)
    if dtype == torch.float64:
        torch.testing.assert_close(got, want, equal_nan=True, rtol=1e-15, atol=0)
    else:
        assert _ulp(got, want).max().item() <= MAX_ULP[name], (x, got, want)
    assert torch.equal(torch.signbit(got[want == 0]), torch.signbit(want[want == 0]))
