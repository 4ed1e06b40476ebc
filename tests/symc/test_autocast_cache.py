"""The caller's autocast state is part of symc's cache key; CPU autocast breaks the graph."""

from __future__ import annotations

import torch

import symc


def matmul_relu(x, w):
    return (x @ w).relu().sum(dim=-1)


def test_autocast_state_is_part_of_the_cache_key_and_cpu_autocast_runs_eagerly():
    f = symc.compile(matmul_relu, backend="aot_eager")
    x, w = torch.randn(5, 8), torch.randn(8, 3)
    torch.testing.assert_close(f(x, w), matmul_relu(x, w))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got, want = f(x, w), matmul_relu(x, w)
    assert got.dtype == want.dtype
    torch.testing.assert_close(got, want)
    report = symc.explain(f)
    assert report.recompile_reasons and "autocast state cpu bfloat16" in report.recompile_reasons[0]
    assert report.graph_breaks == 1 and "autocast on cpu" in report.breaks[0].reason
    torch.testing.assert_close(f(torch.randn(9, 8), w).shape, torch.Size([9]))
    assert report.compiles == symc.explain(f).compiles == 1  # the first entry still serves
