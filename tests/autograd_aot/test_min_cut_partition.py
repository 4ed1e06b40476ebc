"""The min-cut partitioner: what is saved, what is recomputed, and that the split graphs agree
with torch.autograd at several sizes after one split."""

from __future__ import annotations

import pytest
import torch

from autograd_aot import reference_compile, split
from prims import ops
from tests.autograd_aot.builders import build_case


def _pointwise_chain(d, n, make):
    x = make((d, 8))
    return ops.sum(ops.cos(ops.sin(ops.exp(x))), (0, 1))


def _softmax_like(d, n, make):
    x = make((d, 8))
    top = ops.amax(x, (1,))
    e = ops.exp(ops.sub(x, ops.broadcast_in_dim(top, x.shape, (0,))))
    return ops.div(e, ops.broadcast_in_dim(ops.sum(e, (1,)), x.shape, (0,)))


def _matmul_tanh(d, n, make):
    y = ops.mm(make((d, 4)), make((4, 6)))
    return ops.sum(ops.tanh(y), (1,))


def _logits_and_loss(d, n, make):
    # a model's (logits, loss): logits[1, d, 6] a view of the mm over [d, 6], loss its
    # log-sum-exp (the backward needs exp(y - max), recomputable from y and the max)
    y = ops.mm(make((d, 4)), make((4, 6)))
    top = ops.broadcast_in_dim(ops.amax(y, (1,)), y.shape, (0,))
    lse = ops.log(ops.sum(ops.exp(ops.sub(y, top)), (1,)))
    return ops.reshape(y, (1, d, 6)), ops.sum(lse, (0,))


def _split(fn, n=5):
    graph, env, inputs, flags, _ = build_case(fn, n)
    return split(graph, env, flags), env


def test_pointwise_chain_is_recomputed_not_saved():
    s, _ = _split(_pointwise_chain)
    # the backward needs exp(x) and sin(exp(x)): saving x alone (an input, alive anyway, no
    # bigger than exp(x)) is the min cut, and the whole chain is recomputed from it
    assert s.info.saved_names == ("in0",), str(s.info)
    assert {"exp", "sin", "cos"} <= set(s.info.recomputed_ops), str(s.info)


def test_reduction_is_saved_never_recomputed():
    s, _ = _split(_softmax_like)
    assert "amax" not in s.info.recomputed_ops and "sum" not in s.info.recomputed_ops, str(s.info)
    assert len(s.info.saved) >= 1


def test_matmul_is_never_recomputed():
    s, _ = _split(_matmul_tanh)
    assert "mm" not in s.info.recomputed_ops, str(s.info)


def test_a_returned_output_is_saved_rather_than_a_pointwise_result_of_it():
    # the forward returns y (as a view) anyway: saving y shares its buffer, where saving
    # exp(y - max) would be one more [d, 6] buffer written by the forward
    s, _ = _split(_logits_and_loss)
    assert "mm" in s.info.saved_names and "exp" not in s.info.saved_names, str(s.info)
    assert "exp" in s.info.recomputed_ops, str(s.info)
    saved_big = [v for v in s.info.saved if v.meta.startswith("f64[s0, 6]")]
    assert len(saved_big) == 1, str(s.info)


def test_partition_info_prints_saved_and_recomputed():
    s, _ = _split(_pointwise_chain)
    text = str(s.info)
    assert "saved for backward: 1 tensors" in text
    assert "in0" in text and "f64[s0, 8]" in text
    assert "recomputed in backward: 4 ops" in text and "exp" in text
    assert "symbols passed as ints: s0" in text


def test_backward_takes_saved_then_symbols_then_tangents():
    s, _ = _split(_softmax_like)
    names = [n.target for n in s.backward.nodes if n.op == "placeholder"]
    k = s.num_saved
    assert all(name.startswith("saved_") for name in names[:k])
    assert names[k:k + len(s.symbols)] == [str(x) for x in s.symbols]
    assert all(name.startswith("tangent_") for name in names[k + len(s.symbols):])
    for node in s.backward.nodes:
        if node.op == "placeholder" and node.target in [str(x) for x in s.symbols]:
            assert node.meta["val"] in s.symbols


@pytest.mark.parametrize("fn", [_pointwise_chain, _softmax_like, _matmul_tanh])
def test_split_once_runs_at_every_size(fn):
    s, env = _split(fn, n=5)
    guards_before = list(env.guards)
    forward, backward = reference_compile(s.forward), reference_compile(s.backward)
    for n in (1, 2, 5, 9, 16):
        _, _, inputs, flags, _ = build_case(fn, n, seed=n)
        outs = forward(*inputs)
        user, saved = outs[: s.num_outputs], s.saved_values(inputs, outs[s.num_outputs:])
        tangents = [torch.randn_like(o) for o in user]
        symbols = [n for _ in s.symbols]  # the one symbol is the leading size
        grads = backward(*saved, *symbols, *tangents)
        leaves = [t.clone().requires_grad_(f) for t, f in zip(inputs, flags)]
        it = iter(leaves)
        want_out = fn(n, n, lambda *a, **k: next(it))
        torch.testing.assert_close(user[0], want_out.detach())
        want = torch.autograd.grad(want_out, [x for x in leaves if x.requires_grad], tangents[0])
        for g, w in zip(grads, want):
            torch.testing.assert_close(g, w)
    assert env.guards == guards_before, "running at other sizes must not add guards"
