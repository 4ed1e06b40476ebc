"""Pointwise nodes over one iteration space factored two ways share one kernel: an MLP's saved
pre-activation `h[B, T, 4C] = mm + bias` next to `gelu(h)` over [B*T, 4C] (two kernels reading
the matmul's output twice before), on the C++ and the Triton backend, at sizes 1, odd, prime."""

from __future__ import annotations

import sympy
import torch
import torch.nn.functional as F

from tests.device import DEVICE, interpret_triton

interpret_triton()  # noqa: E402  (before triton is imported)

import pytest  # noqa: E402

import inductor  # noqa: E402
from inductor.codegen.triton_configs import use_table  # noqa: E402
from inductor.scheduler import map_vars, refined  # noqa: E402
from prims import ops, run_reference  # noqa: E402
from tests.inductor.inductor_graphs import decomposed, prims_graph  # noqa: E402

s0, s1 = sympy.symbols("s0 s1", integer=True, positive=True)
x0, x1, x2 = sympy.symbols("x0 x1 x2", integer=True)

REFINED_CASES = [  # (a, b, the common refinement or None)
    ((s0, s1, 128), (s0 * s1, 128), (s0, s1, 128)),
    ((s0 * s1, 128), (s0, s1, 128), (s0, s1, 128)),
    ((s0 * s1,), (s0, 1, s1), (s0, s1)),
    ((s0, s1 * 128), (s0 * s1, 128), None),      # crossing blocks: not a regrouping
    ((s0, 128), (s1, 128), None),
    ((2, 3 * s0), (6, s0), None),
]


@pytest.mark.parametrize("a,b,want", REFINED_CASES)
def test_refined_is_the_finer_factoring_or_none(a, b, want):
    assert refined(a, b) == want


def test_a_coarser_node_indexes_by_combined_group_vars():
    assert map_vars((s0 * s1, 128), (s0, s1, 128), (x0, x1, x2)) == (s1 * x0 + x1, x2)
    assert map_vars((s0, s1, 128), (s0, s1, 128), (x0, x1, x2)) == (x0, x1, x2)


def _pre_and_post_activation(x, w, b):
    # x: [a, c, 4], w: [4, 8]; h over [a*c, 8] from an mm, saved as [a, c, 8] and gelu'd
    h = ops.add(ops.mm(ops.reshape(x, (x.shape[0] * x.shape[1], 4)), w),
                ops.broadcast_in_dim(b, (x.shape[0] * x.shape[1], 8), (1,)))
    saved = ops.add(ops.reshape(ops.mm(ops.reshape(x, (x.shape[0] * x.shape[1], 4)), w),
                                (x.shape[0], x.shape[1], 8)),
                    ops.broadcast_in_dim(b, (x.shape[0], x.shape[1], 8), (2,)))
    return decomposed(F.gelu, h), saved


@pytest.mark.parametrize("backend", ["cpp", "triton"])
def test_siblings_factored_two_ways_are_one_kernel_matching_eager(backend):
    shapes = [("a", "c", 4), (4, 8), (8,)]
    device = DEVICE if backend == "triton" else "cpu"
    graph, env, _ = prims_graph(_pre_and_post_activation, shapes, torch.float32, device=device)
    with use_table("tiny"):
        compiled = inductor.compile_graph(graph, env, device_backend=backend)
    gen = torch.Generator().manual_seed(0)
    for a, c in ((1, 1), (3, 5), (2, 13), (7, 3)):
        inputs = [torch.randn(s, generator=gen).to(device) for s in ((a, c, 4), (4, 8), (8,))]
        want = run_reference(graph, inputs)
        got = compiled(*inputs)
        for g, w in zip(got, want, strict=True):
            assert g.shape == w.shape
            torch.testing.assert_close(g, w, atol=1e-5, rtol=1e-5)
    # both adds read the matmul's output: one pointwise kernel (two before)
    assert compiled.kernels == 1, compiled.source

