"""An output the forward both returns and saves for the backward (a model's logits, saved by
its loss's backward) is one buffer, not a copy: the runtime saves a view of the user's tensor,
so an in-place change of it before the backward raises as in eager, never a wrong gradient."""

from __future__ import annotations

import pytest
import torch

import inductor
import symc

V = 12


def _logits_and_loss(x, w):
    y = torch.matmul(x, w)            # an mm over [B*T, V], returned at [B, T, V]
    return y, (y * y).sum()           # its backward needs y: y is saved


@pytest.fixture
def compiled_graphs(monkeypatch):
    seen = []
    original = inductor.compile_graph

    def recording(graph, env=None, **kw):
        cg = original(graph, env, **kw)
        seen.append(cg)
        return cg
    monkeypatch.setattr(inductor, "compile_graph", recording)
    return seen


def test_returned_and_saved_output_is_one_buffer_with_eager_grads(compiled_graphs):
    torch.manual_seed(0)
    w = torch.randn(6, V, requires_grad=True)
    fn = symc.compile(_logits_and_loss, backend="inductor")
    for b, t in ((2, 5), (1, 1), (3, 7), (1, 13)):
        x = torch.randn(b, t, 6)
        w.grad = None
        y, loss = fn(x, w)
        loss.backward()
        w_ref = w.detach().clone().requires_grad_()
        y_ref, loss_ref = _logits_and_loss(x, w_ref)
        loss_ref.backward()
        torch.testing.assert_close(y, y_ref)
        torch.testing.assert_close(w.grad, w_ref.grad)
    forward = compiled_graphs[0]
    assert forward.output_aliases == ((2, 0),), "the saved logits share the returned buffer"
    assert forward.kernels == 1, f"only the loss's reduction, no copy of the logits:\n{forward}"


def test_in_place_change_of_the_returned_output_raises_like_eager():
    torch.manual_seed(0)
    w = torch.randn(6, V, requires_grad=True)
    fn = symc.compile(_logits_and_loss, backend="inductor")
    x = torch.randn(2, 5, 6)
    fn(x, w)[1].backward()  # compiles both graphs
    y, loss = fn(x, w)
    with torch.no_grad():
        y.add_(1)                     # eager raises at the backward: y was saved
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()
    y_ref, loss_ref = _logits_and_loss(x, w.detach().clone().requires_grad_())
    with torch.no_grad():
        y_ref.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss_ref.backward()
