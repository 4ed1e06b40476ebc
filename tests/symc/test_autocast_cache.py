"""The caller's autocast state is part of symc's cache key; CPU autocast breaks the graph."""

from __future__ import annotations

import pytest
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


class _Run:
    """A compiled graph's stand-in: notes the CUDA autocast flag it ran under."""

    def __init__(self, autocast_free=None, fails=False):
        if autocast_free is not None:
            self.autocast_free = autocast_free
        self.fails, self.seen = fails, []

    def __call__(self, *inputs):
        self.seen.append(torch.is_autocast_enabled("cuda"))
        if self.fails:
            raise ValueError("kernel failed")
        return inputs


def _cuda_autocast_on():
    enabled = torch.is_autocast_enabled("cuda")
    torch.set_autocast_enabled("cuda", True)
    return enabled


def test_autocast_off_runs_graphs_without_autocast_and_restores_it_even_on_errors():
    from symc.backends import _autocast_off

    run, failing = _Run(), _Run(fails=True)
    before = _cuda_autocast_on()
    try:
        assert _autocast_off(run)(1, 2) == (1, 2) and run.seen == [False]
        assert torch.is_autocast_enabled("cuda")
        assert _autocast_off(run).boxed([3]) == (3,) and run.seen == [False, False]
        with pytest.raises(ValueError, match="kernel failed"):
            _autocast_off(failing)(1)
        assert failing.seen == [False] and torch.is_autocast_enabled("cuda")
    finally:
        torch.set_autocast_enabled("cuda", before)
    _autocast_off(run)(1)  # autocast off: nothing to switch
    assert run.seen[-1] is False and not torch.is_autocast_enabled("cuda")


def test_autocast_off_leaves_a_graph_that_calls_no_torch_op_as_it_is():
    from symc.backends import _autocast_off

    free, not_free = _Run(autocast_free=True), _Run(autocast_free=False)
    assert _autocast_off(free) is free
    assert _autocast_off(not_free) is not not_free
