"""decompose(): torch-level fx graph -> prims graph; run_reference runs it at any size."""

from __future__ import annotations

import operator

import pytest
import torch
import torch.fx as fx
import torch.nn.functional as F

from prims import RNG_SEED_NAME, Prim, PrimError, decompose, getitem, run_reference
from symbolic import LocalSource, ShapeEnv, TensorMeta, meta_of, verify


def _placeholder(graph, name, meta):
    node = graph.placeholder(name)
    node.meta["val"] = meta
    return node


def _model_graph(env):
    s0 = env.create_symbol(5, LocalSource("x"))
    g = fx.Graph()
    x = _placeholder(g, "x", TensorMeta.contiguous((s0, 8), torch.float32))
    w = _placeholder(g, "w", TensorMeta.contiguous((8, 6), torch.float32))
    y = g.call_function(torch.matmul, (x, w))
    z = g.call_function(F.gelu, (y,), {"approximate": "tanh"})
    best = g.call_function(torch.max, (z, 1))
    values = g.call_function(operator.getitem, (best, 0))
    flat = g.call_function(torch.Tensor.view, (z, -1))
    tail = g.call_function(operator.getitem, (x, (slice(None), slice(2, None))))
    total = g.call_function(operator.add, (values, 1.0))
    g.output((total, flat, tail))
    return g, s0


def _eager(x, w):
    z = F.gelu(x @ w, approximate="tanh")
    return torch.max(z, 1)[0] + 1.0, z.view(-1), x[:, 2:]


def test_decompose_yields_prims_only_and_keeps_placeholders():
    env = ShapeEnv()
    graph, s0 = _model_graph(env)
    prims_graph = decompose(graph, env)
    verify(prims_graph)
    placeholders = [n for n in prims_graph.nodes if n.op == "placeholder"]
    assert [n.target for n in placeholders] == ["x", "w"]
    assert meta_of(placeholders[0]).shape == (s0, 8)
    targets = {n.target for n in prims_graph.nodes if n.op == "call_function"}
    assert targets and all(isinstance(t, Prim) or t is getitem for t in targets), targets
    assert not env.guards, [str(g) for g in env.guards]


@pytest.mark.parametrize("rows", [1, 2, 5, 11])
def test_decomposed_graph_runs_at_every_size(rows):
    env = ShapeEnv()
    graph, _ = _model_graph(env)
    prims_graph = decompose(graph, env)
    x, w = torch.randn(rows, 8), torch.randn(8, 6)
    got = run_reference(prims_graph, [x, w])
    for g, e in zip(got, _eager(x, w), strict=True):
        assert g.shape == e.shape
        torch.testing.assert_close(g, e, rtol=1e-5, atol=1e-5)


def test_input_graph_is_not_mutated():
    env = ShapeEnv()
    graph, _ = _model_graph(env)
    before = str(graph)
    decompose(graph, env)
    assert str(graph) == before


def test_unknown_target_names_the_module_to_extend():
    g = fx.Graph()
    x = _placeholder(g, "x", TensorMeta.contiguous((4,), torch.float32))
    g.output((g.call_function(torch.nonzero, (x,)),))
    with pytest.raises(PrimError, match="no decomposition for .*add one to prims/decompositions"):
        decompose(g, ShapeEnv())


def test_dropout_adds_one_seed_placeholder_and_is_reproducible():
    env = ShapeEnv()
    s0 = env.create_symbol(6, LocalSource("x"))
    g = fx.Graph()
    x = _placeholder(g, "x", TensorMeta.contiguous((s0, 50), torch.float32))
    a = g.call_function(F.dropout, (x, 0.5, True))
    b = g.call_function(F.dropout, (a, 0.5, True))
    g.output((a, b))
    pg = decompose(g, env)
    seeds = [n for n in pg.nodes if n.op == "placeholder" and n.meta.get("rng_seed")]
    assert [n.target for n in seeds] == [RNG_SEED_NAME]
    offsets = [n.args[1] for n in pg.nodes if getattr(n.target, "name", "") == "philox_rand"]
    assert offsets[0] == 0 and str(offsets[1]) == "50*s0"  # the second call owns later counters
    xs = torch.ones(6, 50)
    first = run_reference(pg, [xs, torch.tensor(7)])
    again = run_reference(pg, [xs, torch.tensor(7)])
    other = run_reference(pg, [xs, torch.tensor(8)])
    assert torch.equal(first[0], again[0]) and torch.equal(first[1], again[1])
    assert not torch.equal(first[0], other[0])
    assert set(first[0].unique().tolist()) <= {0.0, 2.0}


def test_symbol_placeholder_feeds_sympy_arguments():
    env = ShapeEnv()
    s0 = env.create_symbol(5, LocalSource("n"))
    g = fx.Graph()
    n = _placeholder(g, "n", s0)
    out = g.call_function(torch.arange, (n,))
    g.output((g.call_function(operator.mul, (out, 2)),))
    pg = decompose(g, env)
    (got,) = run_reference(pg, [9])
    assert torch.equal(got, torch.arange(9) * 2)
