"""Dtypes outside prims' set (complex, uint16/32/64) are graph breaks with a reason, never a
crash (issue 18, class 7: `KeyError: torch.complex64` from the C++ code generator)."""

from __future__ import annotations

import pytest
import torch

import symc
from prims import PRIM_DTYPES, PrimError, infer_meta
from symbolic import ShapeEnv, TensorMeta
from tests.symc.eager_oracle import BACKENDS


def _mul(x):
    if x.dtype == torch.uint32:  # eager has few uint32 kernels
        return x.to(torch.int64) * 2 + 1
    return x * 2 + 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128, torch.uint32])
def test_unsupported_input_dtype_runs_eagerly_with_a_reason(backend, dtype):
    fn = symc.compile(_mul, backend=backend)
    for n in (4, 1, 7):
        x = torch.arange(3 * n).reshape(3, n).to(dtype)
        torch.testing.assert_close(fn(x), _mul(x))
    assert str(dtype) in str(symc.explain(fn))


@pytest.mark.parametrize("backend", BACKENDS)
def test_complex_made_inside_the_region_breaks(backend):
    def fn(x):
        return torch.view_as_complex(x).abs() * 2

    compiled = symc.compile(fn, backend=backend)
    for n in (4, 1, 7):
        x = torch.randn(3, n, 2)
        torch.testing.assert_close(compiled(x), fn(x))


def test_prims_reject_complex_metas():
    meta = TensorMeta.contiguous((3, 4), torch.complex64, "cpu")
    with pytest.raises(PrimError, match="complex64"):
        infer_meta(torch.mul, (meta, 2.0), {}, ShapeEnv())
    assert torch.uint8 in PRIM_DTYPES and torch.complex64 not in PRIM_DTYPES


@pytest.mark.parametrize("backend", BACKENDS)
def test_uint8_still_compiles(backend):
    fn = symc.compile(lambda x: (x + 3) * 2, backend=backend)
    for n in (4, 1, 7):
        x = torch.randint(0, 250, (3, n), dtype=torch.uint8)
        torch.testing.assert_close(fn(x), (x + 3) * 2)
    assert symc.explain(fn).breaks == []
