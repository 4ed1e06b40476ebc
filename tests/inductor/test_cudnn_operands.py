"""Where cuDNN runs attention's backward, its output gradient reaches it contiguous, written by
a generated copy kernel (cuDNN misreads a permuted one: prims/cuda_attention.py); where flash
runs it, the permuted gradient is read in place. Lowered for CUDA metas on any machine (the
kernel choice is mocked; nothing runs)."""

from __future__ import annotations

from unittest import mock

import pytest
import torch
from inductor_graphs import prims_graph

from inductor.graph import GraphLowering
from inductor.ir import Buffer, ExternNode, PermutedBuffer
from prims import cuda_attention, ops

SHAPES = [(2, "t", 3, 64), (2, 3, "t", 64), (2, 3, "t", 64), (2, 3, "t", 64), (2, 3, "t", 64),
          (2, 3, "t"), (2,)]
DTYPES = [torch.bfloat16] * 5 + [torch.float32, torch.int64]


def _backward(g_btHD, q, k, v, out, lse, rng):
    g = ops.permute(g_btHD, (0, 2, 1, 3))  # the projection's gradient in (b, t, h, e) order
    return ops.sdpa_dropout_backward(g, q, k, v, out, lse, rng, 0.1, True, None)


@pytest.mark.parametrize("cudnn", [True, False])
def test_the_output_gradient_is_copied_only_for_cudnn(cudnn):
    graph, env, _ = prims_graph(_backward, SHAPES, DTYPES, device="cuda")
    with mock.patch.object(torch.cuda, "is_available", return_value=True), \
            mock.patch.object(cuda_attention, "cudnn_wanted", return_value=cudnn):
        lowered = GraphLowering(graph, env).run()
    externs = [n for n in lowered.nodes if isinstance(n, ExternNode)]
    assert len(externs) == 1
    g = externs[0].args[0]
    kernels = [n for n in lowered.nodes if not isinstance(n, ExternNode)]
    if cudnn:
        assert type(g) is Buffer and len(kernels) == 1  # one copy kernel writes it
    else:
        assert isinstance(g, PermutedBuffer) and not kernels


def test_a_cpu_graph_keeps_the_view():
    graph, env, _ = prims_graph(_backward, SHAPES, DTYPES, device="cpu")
    with mock.patch.object(cuda_attention, "cudnn_wanted", return_value=True):
        lowered = GraphLowering(graph, env).run()
    (extern,) = [n for n in lowered.nodes if isinstance(n, ExternNode)]
    assert isinstance(extern.args[0], PermutedBuffer)
