"""Batch and instance norm in training mode write their running statistics like eager
(capture/running_stats.py): the momentum update with the unbiased variance, after two calls at
two batch sizes, through one compilation; the native variants' save_mean / save_invstd match."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

import symc

BACKENDS = ("aot_eager", "inductor")


def _report(compiled):
    report = symc.explain(compiled)
    assert report.graph_breaks == 0, report.breaks
    return report


def _assert_matches(fn, backend, make_input, stats=2):
    """Outputs, input gradients and running stats equal eager's at both calls; one compile."""
    want, got, compiled = _two_calls(fn, backend, make_input, stats)
    for w_call, g_call in zip(want, got, strict=True):
        for w, g in zip(w_call, g_call, strict=True):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-5)
    assert _report(compiled).compiles == 1


def _two_calls(fn, backend, make_input, stats=2):
    """Run fn eagerly and compiled on two batch sizes with fresh running stats shared across the
    calls; return (eager outputs and stats, compiled outputs and stats, the compiled fn)."""
    compiled = symc.compile(fn, backend=backend)
    results = []
    for run in (fn, compiled):
        torch.manual_seed(0)
        rm, rv = torch.randn(stats), torch.rand(stats) + 0.5
        outs = []
        for batch in (4, 7):
            x = make_input(batch).requires_grad_()
            out = run(x, rm, rv)
            out = out if isinstance(out, tuple) else (out,)
            (grad,) = torch.autograd.grad((out[0] * out[0]).sum(), x)
            outs.append([o.detach() for o in out] + [grad, rm.clone(), rv.clone()])
        results.append(outs)
    return results[0], results[1], compiled


@pytest.mark.parametrize("backend", BACKENDS)
def test_batch_norm_updates_running_stats_like_eager(backend):
    def fn(x, rm, rv):
        return F.batch_norm(x, rm, rv, training=True, momentum=0.3, eps=1e-3)

    _assert_matches(fn, backend, lambda n: torch.randn(n, 2, 5))


@pytest.mark.parametrize("backend", BACKENDS)
def test_native_batch_norm_returns_eager_saved_stats(backend):
    w, b = torch.randn(3), torch.randn(3)

    def fn(x, rm, rv):
        return torch.native_batch_norm(x, w, b, rm, rv, True, 0.2, 1e-5)

    _assert_matches(fn, backend, lambda n: torch.randn(n, 3, 2, 2), stats=3)


@pytest.mark.parametrize("backend", BACKENDS)
def test_instance_norm_averages_running_stats_over_the_batch(backend):
    def fn(x, rm, rv):
        return F.instance_norm(x, rm, rv, momentum=0.5)

    _assert_matches(fn, backend, lambda n: torch.randn(n, 2, 6))


def test_batch_norm_module_training_step_updates_buffers():
    torch.manual_seed(0)
    eager = torch.nn.BatchNorm1d(4)
    mine = torch.nn.BatchNorm1d(4)
    compiled = symc.compile(mine, backend="inductor")
    for batch in (5, 9):
        x = torch.randn(batch, 4)
        torch.testing.assert_close(compiled(x), eager(x), rtol=1e-4, atol=1e-5)
    for name in ("running_mean", "running_var", "num_batches_tracked"):
        torch.testing.assert_close(getattr(mine, name), getattr(eager, name))


@pytest.mark.parametrize("training_stats", [False, True])
def test_batch_norm_of_one_value_per_channel_raises_like_eager(training_stats):
    def fn(x, rm, rv):
        stats = (rm, rv) if training_stats else (None, None)
        return F.batch_norm(x, *stats, training=True)

    compiled = symc.compile(fn, backend="inductor")
    compiled(torch.randn(4, 3), torch.zeros(3), torch.ones(3))
    for run in (fn, compiled):
        with pytest.raises(ValueError, match="more than 1 value per channel"):
            run(torch.randn(1, 3), torch.zeros(3), torch.ones(3))
    assert _report(compiled).compiles == 1   # a runtime assert, not a recompile


def test_instance_norm_of_one_spatial_element_raises_like_eager():
    def fn(x):
        return F.instance_norm(x)

    compiled = symc.compile(fn, backend="inductor")
    compiled(torch.randn(2, 3, 4))
    for run in (fn, compiled):
        with pytest.raises(ValueError, match="more than 1 spatial element"):
            run(torch.randn(2, 3, 1))
