"""Every prim through inductor: lowered, compiled once with a symbolic size n, run at n = 1, 2, 7,
33 and compared with the prims' reference implementations (prims.run_reference).

Samples come from the prims table test (tests/prims/test_prims_table.py: PRIM_SAMPLES); every
prim in PRIMS must have a lowering. Backends: "cpp" (C++/OpenMP) and "torch" (the IR oracle).
"""

from __future__ import annotations

import pytest
import torch
import torch.fx as fx

from inductor import LOWERINGS, compile_graph
from inductor.lowerings import EXTERN_PRIMS
from prims import PRIMS, GraphTracer, TracedTensor, run_reference, tracing
from symbolic import ShapeEnv, TensorMeta
from tests.prims.samples import SIZES, RealMaker, close, flat, symbolic_size
from tests.prims.test_prims_table import PRIM_SAMPLES

DTYPES = (torch.float32, torch.bfloat16, torch.int64, torch.bool, torch.float16)


class PlaceholderMaker:
    """`make(shape, dtype, kind)` for tracing: each tensor becomes a graph placeholder."""

    def __init__(self, graph: fx.Graph):
        self.graph = graph
        self.count = 0

    def __call__(self, shape, dtype=torch.float32, kind="randn", high=None):
        if kind == "bool":
            dtype = torch.bool
        node = self.graph.placeholder(f"t{self.count}")
        self.count += 1
        meta = TensorMeta.contiguous(tuple(shape), dtype)
        node.meta["val"] = meta
        return TracedTensor(node, meta)


def tensors_in(arg_lists, kind):
    """Tensors (or TracedTensors) in order of first appearance in the sample args."""
    seen, out = set(), []
    for args in arg_lists:
        for value in flat(list(args)):
            if isinstance(value, kind) and id(value) not in seen:
                seen.add(id(value))
                out.append(value)
    return out


def build_graph(name, dtype):
    """All sample calls of prim `name` in one graph: inputs (n, tensors...), outputs flattened."""
    env = ShapeEnv()
    n = symbolic_size(env, 7)
    graph = fx.Graph()
    sym = graph.placeholder("n")
    sym.meta["val"] = n
    _, build, _ = PRIM_SAMPLES[name]
    outs = []
    arg_lists = build(n, PlaceholderMaker(graph), dtype)
    with tracing(GraphTracer(graph, env)):
        for args in arg_lists:
            outs += flat(PRIMS[name](*args))
    graph.output(tuple(o.node for o in outs))
    last = sym
    for traced in tensors_in(arg_lists, TracedTensor):  # placeholders in argument order
        last.append(traced.node)
        last = traced.node
    return graph, env


def real_inputs(name, dtype, n):
    _, build, _ = PRIM_SAMPLES[name]
    return [n] + tensors_in(build(n, RealMaker(seed=n), dtype), torch.Tensor)


LOWERED = sorted(name for name in PRIMS if name in PRIM_SAMPLES)
CASES = [pytest.param(name, dtype, id=f"{name}-{str(dtype).replace('torch.', '')}")
         for name in LOWERED for dtype in DTYPES if dtype in PRIM_SAMPLES[name][0]
         and not (name in EXTERN_PRIMS and dtype != PRIM_SAMPLES[name][0][0])]


def test_every_prim_has_a_lowering():
    missing = sorted(name for name in PRIMS if name not in LOWERINGS)
    assert not missing, f"prims without a lowering in inductor/lowerings.py: {missing}"


def _check(name, dtype, backend):
    graph, env = build_graph(name, dtype)
    compiled = compile_graph(graph, env, device_backend=backend)
    for n in SIZES:
        inputs = real_inputs(name, dtype, n)
        want = run_reference(graph, inputs)
        got = compiled(*inputs)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype, f"{name} n={n}: {g.shape} {w.shape}"
            assert close(g, w, dtype if w.dtype.is_floating_point else w.dtype), (
                f"{name} {dtype} n={n}\ngot\n{g}\nwant\n{w}\n{compiled.source[-3000:]}")


@pytest.mark.parametrize("name, dtype", CASES)
def test_lowering_matches_reference_cpp(name, dtype):
    _check(name, dtype, "cpp")


@pytest.mark.parametrize("name, dtype", CASES)
def test_lowering_matches_reference_torch_oracle(name, dtype):
    _check(name, dtype, "torch")
