"""torch.tensor / torch.as_tensor of Python data inside compiled code: no graph break, eager's
dtypes and values, and a size wrapped into a tensor stays symbolic (one compilation)."""

from __future__ import annotations

import pytest
import torch

import symc
from tests.symc.eager_oracle import BACKENDS, assert_matches_eager

SIZES = (5, 1, 2, 7, 13, 40)   # 40: above the first call's hint


def _masked_fill(x):
    # transformers 5.17's eager attention mask: torch.where(mask, torch.tensor(0.0, ...), min)
    mask = x > 0
    zero = torch.tensor(0.0, device=x.device, dtype=x.dtype)
    return torch.where(mask, zero, torch.finfo(x.dtype).min) + x


def _wrapped_sizes(x):
    n = x.shape[-1]
    sizes = torch.tensor([n, x.shape[0], n * 2 + 1])
    scale = torch.as_tensor(n, dtype=x.dtype)
    return x * scale / sizes.sum(), sizes, torch.tensor([[n, 1], [1, n]], dtype=torch.float32)


def _inferred_dtypes(x):
    return (x + torch.tensor(1.5), torch.tensor([True, False]), torch.tensor([1, 2, 3]),
            torch.tensor([1, 2.5]), torch.tensor(-1.7, dtype=torch.int64), torch.tensor([]),
            torch.tensor([[2, 2], [2, 2]], dtype=torch.float16))


@pytest.mark.parametrize("fn", [_masked_fill, _wrapped_sizes, _inferred_dtypes])
def test_tensor_of_python_data_matches_eager_forward_and_backward(fn):
    assert_matches_eager(fn, lambda n: [torch.randn(3, n, requires_grad=True)], SIZES)


@pytest.mark.parametrize("backend", BACKENDS)
def test_wrapped_size_compiles_once_without_breaks(backend):
    compiled = symc.compile(_wrapped_sizes, backend=backend)
    for n in SIZES:
        x = torch.randn(3, n)
        for got, want in zip(compiled(x), _wrapped_sizes(x)):
            assert got.dtype == want.dtype
            torch.testing.assert_close(got, want)
    report = symc.explain(compiled)
    assert report.graph_breaks == 0, report.breaks
    assert report.compiles == 1 and report.recompiles == 0, report.recompile_reasons


def _from_tensor(x):
    return torch.tensor(x) + 1


def _leaf(x):
    return x * torch.tensor(2.0, requires_grad=True)


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")
@pytest.mark.parametrize("fn, reason", [(_from_tensor, "found a tensor"),
                                        (_leaf, "requires_grad=True")])
def test_tensor_of_a_tensor_or_a_new_leaf_breaks_with_a_reason(fn, reason):
    compiled = symc.compile(fn, backend="aot_eager")
    x = torch.randn(4)
    torch.testing.assert_close(compiled(x), fn(x))
    report = symc.explain(compiled)
    assert any(reason in b.reason for b in report.breaks), report.breaks

