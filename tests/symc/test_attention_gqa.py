"""Grouped-query attention: sdpa(enable_gqa=True) repeats each key/value head Hq // Hkv times
(dim -3) as eager does; forward and gradients match eager on every backend, one compilation
over every sequence length."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import symc
from tests.symc.eager_oracle import BACKENDS, assert_matches_eager


def _gqa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)


def _gqa_masked(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, enable_gqa=True)


@pytest.mark.parametrize("hq, hkv", [(4, 2), (6, 3), (4, 1), (2, 2)])
def test_gqa_matches_eager_forward_and_backward(hq, hkv):
    def inputs(t):
        return [torch.randn(2, hq, t, 8, requires_grad=True),
                torch.randn(2, hkv, t, 8, requires_grad=True),
                torch.randn(2, hkv, t, 8, requires_grad=True)]

    assert_matches_eager(_gqa, inputs, (5, 1, 2, 7, 13))


def test_gqa_with_a_float_mask_matches_eager():
    def inputs(t):
        return [torch.randn(3, 4, t, 8, requires_grad=True),
                torch.randn(3, 2, t + 2, 8, requires_grad=True),
                torch.randn(3, 2, t + 2, 8, requires_grad=True),
                torch.randn(t, t + 2)]

    assert_matches_eager(_gqa_masked, inputs, (5, 1, 7, 13), atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gqa_compiles_once_without_breaks(backend):
    compiled = symc.compile(_gqa, backend=backend)
    for t in (5, 1, 7, 13):
        q, k, v = torch.randn(2, 4, t, 8), torch.randn(2, 2, t, 8), torch.randn(2, 2, t, 8)
        torch.testing.assert_close(compiled(q, k, v), _gqa(q, k, v))
    report = symc.explain(compiled)
    assert report.graph_breaks == 0, report.breaks
    assert report.compiles == 1, report.recompile_reasons
