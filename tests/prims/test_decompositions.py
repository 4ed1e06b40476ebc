"""Every decomposition: on real tensors it equals torch; run through `infer_meta` on symbolic
TensorMetas inside a ShapeEnv its output meta matches the real output after substituting the
example sizes. Any int()/bool() of a symbolic size inside a decomposition raises TypeError here.
"""

from __future__ import annotations

import operator

import pytest
import sympy
import torch
import torch.fx as fx

import tests.prims.decomposition_cases  # noqa: F401  (registers the samples)
from prims import (
    DECOMPOSITIONS,
    GraphTracer,
    PrimError,
    TracedTensor,
    infer_meta,
    run_reference,
    tracing,
)
from prims.decompositions.registry import target_name
from symbolic import ShapeEnv, TensorMeta
from tests.prims.decomposition_samples import SAMPLES, missing_samples
from tests.prims.decomposition_samples_random import RANDOM_DRAWS
from tests.prims.samples import MetaMaker, RealMaker, close, flat, substitute, symbolic_size

SIZES = (1, 2, 7, 33)
RANDOM = {torch.nn.functional.dropout, torch.dropout}
SETITEM = {operator.setitem, torch.Tensor.__setitem__}
UNINITIALISED = {torch.empty, torch.empty_like, torch.Tensor.new_empty}


def _clone(value):
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (tuple, list)):
        return type(value)(_clone(v) for v in value)
    return value


def _cases():
    targets = sorted(DECOMPOSITIONS, key=target_name)
    for target in targets:
        if target not in SAMPLES:
            continue
        for dtype in SAMPLES[target][0]:
            for n in SIZES:
                name = f"{target_name(target)}-{str(dtype).replace('torch.', '')}-{n}"
                yield pytest.param(target, dtype, n, id=name)


CASES = list(_cases())


def test_every_decomposition_has_samples():
    missing = sorted(target_name(t) for t in missing_samples())
    assert not missing, f"decompositions without samples in tests/prims: {missing}"


def _check_dropout(got, args):
    x, p, training = args[0], args[1], args[2]
    if not training or p == 0:
        assert torch.equal(got, x)
        return
    scaled = (x.float() / (1 - p)).to(x.dtype)
    kept = torch.isclose(got.float(), scaled.float(), rtol=1e-2, atol=1e-3) & (scaled != 0)
    assert torch.all(kept | (got == 0)), "dropout: every element is dropped or scaled"
    if x.numel() >= 200:
        fraction = kept.float().mean().item()
        assert 0.5 < fraction < 0.95, f"dropout kept {fraction:.2f} of elements at p={p}"


@pytest.mark.parametrize("target, dtype, n", CASES)
def test_decomposition_matches_torch(target, dtype, n):
    _, build = SAMPLES[target]
    for args, kwargs in build(n, RealMaker(seed=n), dtype):
        got = DECOMPOSITIONS[target](*args, **kwargs)
        if target in RANDOM:
            _check_dropout(got, args)
            continue
        if target in RANDOM_DRAWS:  # symc's stream, not torch's: shapes and dtypes only
            for g, w in zip(flat(got), flat(target(*_clone(args), **kwargs)), strict=True):
                assert (tuple(g.shape), g.dtype) == (tuple(w.shape), w.dtype), (g, w)
            continue
        if target in SETITEM:  # torch mutates and returns None; compare the mutated tensor
            want = _clone(args[0])
            target(want, *args[1:])
        else:
            want = target(*_clone(args), **kwargs)
        got_flat, want_flat = flat(got), flat(want)
        assert len(got_flat) == len(want_flat), f"{len(got_flat)} outputs, torch gives " \
                                                f"{len(want_flat)}"
        for g, w in zip(got_flat, want_flat):
            assert tuple(g.shape) == tuple(w.shape), f"shape {tuple(g.shape)} vs {tuple(w.shape)}"
            assert g.dtype == w.dtype, f"dtype {g.dtype} vs torch {w.dtype}"
            if target not in UNINITIALISED:
                assert close(g, w, dtype), f"{args} {kwargs}:\ngot\n{g}\ntorch\n{w}"


@pytest.mark.parametrize("target, dtype, n", CASES)
def test_decomposition_meta_matches_real_on_symbolic_sizes(target, dtype, n):
    _, build = SAMPLES[target]
    real = [DECOMPOSITIONS[target](*a, **k) for a, k in build(n, RealMaker(seed=n), dtype)]
    env = ShapeEnv()
    size = symbolic_size(env, n)
    metas = [infer_meta(target, a, k, env) for a, k in build(size, MetaMaker(), dtype)]
    for meta, out in zip(metas, real, strict=True):
        for m, r in zip(flat(meta), flat(out), strict=True):
            assert isinstance(m, TensorMeta), f"meta returned {m!r}"
            assert substitute(m, env) == tuple(r.shape), f"meta {m} vs real {tuple(r.shape)}"
            assert m.dtype == r.dtype, f"meta dtype {m.dtype} vs real {r.dtype}"


def test_infer_meta_names_missing_decomposition():
    with pytest.raises(PrimError, match=r"no decomposition for torch\.nonzero.*prims/decomp"):
        infer_meta(torch.nonzero, (TensorMeta.contiguous((4,), torch.float32),), {}, ShapeEnv())


def test_index_put_refuses_one_value_row_per_masked_element():
    """`a[mask] = v` with v of shape (count of True, ...) depends on the data: a graph break."""
    a, mask = TensorMeta.contiguous((4, 2), torch.float32), TensorMeta.contiguous((4,), torch.bool)
    with pytest.raises(PrimError, match="data-dependent"):
        infer_meta(torch.index_put, (a, (mask,), TensorMeta.contiguous((3, 2), torch.float32)),
                   {}, ShapeEnv())


def _trace_inputs(meta_value, real_value, graph, inputs):
    """Replace TensorMetas by placeholders (TracedTensors), pairing them with the real values."""
    if isinstance(meta_value, TensorMeta):
        node = graph.placeholder(f"in{len(inputs)}")
        node.meta["val"] = meta_value
        inputs.append(real_value)
        return TracedTensor(node, meta_value)
    if isinstance(meta_value, (tuple, list)):
        return type(meta_value)(_trace_inputs(m, r, graph, inputs)
                                for m, r in zip(meta_value, real_value, strict=True))
    if isinstance(meta_value, dict):
        return {k: _trace_inputs(v, real_value[k], graph, inputs) for k, v in meta_value.items()}
    return meta_value


GRAPH_CASES = [pytest.param(t, id=target_name(t)) for t in sorted(SAMPLES, key=target_name)
               if t in DECOMPOSITIONS]


@pytest.mark.parametrize("target", GRAPH_CASES)
def test_decomposition_graph_runs_like_the_decomposition(target):
    """GraphTracer mode: the recorded prims graph, run by run_reference at the real sizes,
    gives what the decomposition gives on real tensors (one graph serves sizes 1 and 7)."""
    dtypes, build = SAMPLES[target]
    dtype = dtypes[0]
    env = ShapeEnv()
    size = symbolic_size(env, 7)
    symbolic_cases = build(size, MetaMaker(), dtype)
    real_cases = build(7, RealMaker(seed=7), dtype)
    for (margs, mkwargs), (rargs, rkwargs) in zip(symbolic_cases, real_cases, strict=True):
        graph, inputs = fx.Graph(), []
        args = _trace_inputs(margs, rargs, graph, inputs)
        kwargs = _trace_inputs(mkwargs, rkwargs, graph, inputs)
        with tracing(GraphTracer(graph, env)):
            out = DECOMPOSITIONS[target](*args, **kwargs)
        graph.output(tuple(v.node for v in flat(out)))
        if any(n.meta.get("rng_seed") for n in graph.nodes if n.op == "placeholder"):
            inputs.append(torch.tensor(5))
        got = run_reference(graph, inputs, {size: 7} if isinstance(size, sympy.Symbol) else {})
        want = flat(DECOMPOSITIONS[target](*rargs, **rkwargs))
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype, f"{g.shape} vs {w.shape}"
            if target not in RANDOM | RANDOM_DRAWS | UNINITIALISED:
                assert close(g, w, dtype), f"graph gives\n{g}\ndecomposition gives\n{w}"
