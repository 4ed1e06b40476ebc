"""Hypothesis: random prims programs (pointwise math, transposes, flips, slices, broadcasts of
reductions) compiled once with symbolic sizes, run at several sizes, equal to the references."""

from __future__ import annotations

import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import inductor
from prims import ops, run_reference
from tests.inductor.inductor_graphs import prims_graph

UNARY = ("tanh", "sin", "neg", "abs", "sigmoid", "halve", "shift")
BINARY = ("add", "sub", "mul", "maximum", "minimum", "select")
REDUCE = ("sum", "amax", "amin")

step = st.one_of(
    st.tuples(st.just("unary"), st.sampled_from(UNARY), st.integers(0, 99)),
    st.tuples(st.just("binary"), st.sampled_from(BINARY), st.integers(0, 99), st.integers(0, 99)),
    st.tuples(st.just("transpose"), st.integers(0, 99)),
    st.tuples(st.just("flip"), st.integers(0, 99), st.sampled_from([(0,), (1,), (0, 1)])),
    st.tuples(st.just("reduce"), st.sampled_from(REDUCE), st.integers(0, 99), st.integers(0, 1)),
    st.tuples(st.just("shift_slice"), st.integers(0, 99)),
)


def _transpose(v):
    return ops.permute(v, (1, 0))


def run_program(steps, x, y):
    """Apply `steps` to a pool of values; every value is [A, B] or [B, A]."""
    pool = [(x, False), (y, False)]  # (value, transposed)
    for s in steps:
        kind = s[0]
        v, t = pool[s[2 if kind in ("unary", "binary", "reduce") else 1] % len(pool)]
        if kind == "unary":
            name = s[1]
            if name == "halve":
                out = ops.mul(v, 0.5)
            elif name == "shift":
                out = ops.add(v, 1.0)
            else:
                out = getattr(ops, name)(v)
        elif kind == "binary":
            w, tw = pool[s[3] % len(pool)]
            if tw != t:
                w = _transpose(w)
            if s[1] == "select":
                out = ops.where(ops.gt(v, w), v, w)
            else:
                out = getattr(ops, s[1])(v, w)
        elif kind == "transpose":
            out, t = _transpose(v), not t
        elif kind == "flip":
            out = ops.flip(v, s[2])
        elif kind == "reduce":
            dim = s[3]
            r = getattr(ops, s[1])(v, (dim,))
            out = ops.broadcast_in_dim(r, v.shape, (1 - dim,))
        else:  # a slice of a pad: same shape, values shifted by one along dim 1
            padded = ops.pad(v, ((0, 0), (1, 0)), 0.0)
            out = ops.slice(padded, 1, 0, v.shape[1], 1)
        pool.append((out, t))
    last, t = pool[-1]
    return (_transpose(last) if t else last), ops.sum(last, (0,))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(step, min_size=1, max_size=6), a=st.integers(1, 9), b=st.integers(1, 9))
def test_random_program_compiles_once_and_matches_reference(steps, a, b):
    graph, env, _ = prims_graph(lambda x, y: run_program(steps, x, y), [("a", "b"), ("a", "b")])
    compiled = inductor.compile_graph(graph, env, device_backend="cpp")
    for shape in [(a, b), (1, 3), (5, 1), (13, 6)]:
        gen = torch.Generator().manual_seed(a * 10 + b)
        inputs = [torch.randn(shape, generator=gen) for _ in range(2)]
        want = run_reference(graph, inputs)
        got = compiled(*inputs)
        for g, w in zip(got, want, strict=True):
            torch.testing.assert_close(g, w, rtol=1e-4, atol=1e-4,
                                       msg=lambda m: f"{m}\n{steps}\n{compiled.source[-2500:]}")
