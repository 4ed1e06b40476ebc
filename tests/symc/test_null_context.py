"""`with contextlib.nullcontext()` (transformers' maybe_autocast when autocast is off) is
captured as a no-op block: no break, eager's values and gradients on every backend."""

from __future__ import annotations

import contextlib

import torch

import symc

from tests.symc.eager_oracle import assert_matches_eager


def _maybe_autocast(enabled):
    return torch.autocast("cpu") if enabled else contextlib.nullcontext()


def _rotary_like(x):
    with _maybe_autocast(False):
        freqs = x.float() * 2
    with contextlib.nullcontext(freqs) as f:
        with torch.no_grad():
            offset = f.sum()
        out = f.cos() + offset
    return out, torch.is_grad_enabled()


def test_null_context_block_matches_eager_forward_and_backward():
    assert_matches_eager(_rotary_like, lambda n: [torch.randn(3, n, requires_grad=True)],
                         (5, 1, 2, 7, 13))


def test_null_context_block_compiles_once_without_breaks():
    compiled = symc.compile(_rotary_like, backend="aot_eager")
    for n in (5, 1, 7, 13):
        compiled(torch.randn(3, n))
    report = symc.explain(compiled)
    assert report.graph_breaks == 0, report.breaks
    assert report.compiles == 1, report.recompile_reasons
