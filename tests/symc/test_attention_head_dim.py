"""Attention written out in prims (float mask, or dropout off CUDA) with every size dynamic:
the 1/sqrt(head dim) scale is computed in the graph, so one graph serves every head dim."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import symc


def _attention(q, k, v, mask):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_symbolic_head_dim_matches_eager_without_breaks(backend):
    compiled = symc.compile(_attention, backend=backend)
    for b, h, t, d in [(2, 3, 16, 8), (2, 3, 7, 5), (2, 3, 11, 13)]:
        q, k, v = (torch.randn(b, h, t, d) for _ in range(3))
        mask = torch.randn(t, t)
        torch.testing.assert_close(compiled(q, k, v, mask), _attention(q, k, v, mask),
                                   rtol=1e-4, atol=1e-5)
    report = symc.explain(compiled)
    assert report.graph_breaks == 0, report.breaks
    assert report.compiles == 1, report.recompile_reasons
