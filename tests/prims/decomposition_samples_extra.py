"""Samples for the decomposed aliases and entry points that no OpInfo entry calls (torch.arccos
for torch.acos, torch.max_pool2d for F.max_pool2d, ...); registered into SAMPLES.

    SAMPLES[torch.arccos] = ((F32,), build)   # build(n, make, dtype) -> [(args, kwargs)]
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from prims.decompositions.extern_ops import histogramdd_flat
from tests.prims.decomposition_samples import F32, sample

T = torch.Tensor


@sample(torch.arcsin, T.arcsin, torch.arccos, T.arccos, torch.arctan, T.arctan, torch.arctanh,
        T.arctanh, torch.arcsinh, T.arcsinh, torch.special.sinc, torch.special.erfc,
        torch.special.expit, T.hardshrink, torch.selu, torch.celu, torch.rrelu,
        F.rrelu, torch.special.logit)
def _unit_unary(n, make, dt):
    return [((make((n, 3), dt, "unit"),), {})]


@sample(torch.selu_, torch.celu_, getattr(F, "elu_", None))
def _unit_unary_inplace(n, make, dt):
    return [((make((n, 3), dt, "unit"),), {})]


@sample(torch.arccosh, T.arccosh)
def _above_one(n, make, dt):
    return [((make((n, 3), dt, "positive"),), {})]


@sample(torch.special.xlogy)
def _xlogy(n, make, dt):
    return [((make((n, 3), dt), make((n, 3), dt, "positive")), {})]


@sample(torch.threshold)
def _threshold(n, make, dt):
    return [((make((n, 3), dt), 0.1, -2.0), {})]


@sample(torch.matrix_power, T.matrix_power)
def _matrix_power(n, make, dt):
    return [((make((n, 3, 3), dt), 3), {}), ((make((3, 3), dt), 0), {})]


@sample(torch.chain_matmul)
def _chain_matmul(n, make, dt):
    return [((make((n, 3), dt), make((3, 4), dt), make((4, 2), dt)), {})]


@sample(torch.moveaxis, T.moveaxis)
def _moveaxis(n, make, dt):
    return [((make((n, 3, 4), dt), 0, -1), {})]


@sample(torch.detach_copy)
def _detach_copy(n, make, dt):
    return [((make((n, 3), dt),), {})]


@sample(torch.row_stack)
def _row_stack(n, make, dt):
    return [(([make((n, 3), dt), make((2, 3), dt)],), {})]


@sample(torch.unsafe_split_with_sizes)
def _split_sizes(n, make, dt):
    return [((make((4, n), dt), [1, 3]), {})]


@sample(torch._softmax_backward_data, torch.ops.aten._softmax_backward_data.default)
def _softmax_backward(n, make, dt):
    return [((make((n, 4), dt), make((n, 4), dt, "unit"), 1, dt), {})]


@sample(torch.native_channel_shuffle)
def _channel_shuffle(n, make, dt):
    return [((make((1, 6, n), dt), 3), {})]


@sample(torch.max_pool1d, F.max_pool1d_with_indices, torch.max_pool1d_with_indices)
def _max_pool1d(n, make, dt):
    return [((make((2, 3, n + 3), dt), 3, 2), {})]


@sample(torch.max_pool2d, F.max_pool2d_with_indices)
def _max_pool2d(n, make, dt):
    return [((make((1, 2, n + 3, 5), dt), 2), {})]


@sample(torch.max_pool3d, F.max_pool3d_with_indices)
def _max_pool3d(n, make, dt):
    return [((make((1, 2, n + 1, 3, 2), dt), 2), {})]


@sample(torch.adaptive_max_pool1d, F.adaptive_max_pool1d_with_indices)
def _adaptive_max_pool1d(n, make, dt):
    return [((make((2, 3, n + 3), dt), 2), {})]


@sample(F.adaptive_max_pool2d_with_indices)
def _adaptive_max_pool2d(n, make, dt):
    return [((make((1, 2, n + 3, 4), dt), (2, 3)), {})]


@sample(F.adaptive_max_pool3d_with_indices)
def _adaptive_max_pool3d(n, make, dt):
    return [((make((1, 2, n + 1, 3, 2), dt), 2), {})]


@sample(F.upsample)
def _upsample(n, make, dt):
    return [((make((1, 2, n + 1), dt),), {"scale_factor": 2, "mode": "nearest"})]


# Aliases and entry points of the torch extern table (prims/decompositions/extern_ops.py)
@sample(torch.det, T.det, torch.inverse, T.inverse, torch.slogdet, T.slogdet,
        torch.linalg.matrix_exp, torch._lu_with_info)
def _square(n, make, dt):
    return [((make((2, n, n), dt),), {})]


@sample(torch.orgqr, T.orgqr)
def _householder(n, make, dt):
    return [((make((n + 1, n), dt), make((n,), dt)), {})]


@sample(torch.special.digamma, torch.special.psi, torch.special.gammaln, torch.special.i0)
def _positive_unary(n, make, dt):
    return [((make((n, 3), dt, "positive"),), {})]


@sample(torch.special.erfinv)
def _unit_extern(n, make, dt):
    return [((make((n, 3), dt, "unit"),), {})]


@sample(torch.polygamma, torch.special.polygamma)
def _polygamma(n, make, dt):
    return [((1, make((n, 3), dt, "positive")), {})]


@sample(torch.special.multigammaln)
def _multigammaln(n, make, dt):
    return [((make((n, 3), dt, "positive"), 2), {})]


@sample(torch.special.gammainc, torch.special.gammaincc)
def _gammainc(n, make, dt):
    return [((make((n, 3), dt, "positive"), make((1, 3), dt, "positive")), {})]


@sample(torch.ctc_loss)
def _ctc_loss(n, make, dt):
    targets = make((2, 3), torch.int64, "index", high=4)
    return [((make((n + 5, 2, 5), dt), targets, [6, 6], [3, 2], 0, r, True), {})
            for r in (0, 1)]


@sample(torch.grid_sampler)
def _grid_sampler(n, make, dt):
    return [((make((1, 2, n, 3), dt), make((1, n, 2, 2), dt, "unit"), 0, 0, False), {})]


@sample(torch.ops.aten.max_pool2d_with_indices_backward.default)
def _max_pool2d_backward(n, make, dt):
    shape = (1, 2, n, 4)  # kernel 1, stride 1: indices < 4 are in every window's plane
    return [((make(shape, dt), make(shape, dt), [1, 1], [1, 1], [0, 0], [1, 1], False,
              make(shape, torch.int64, "index", high=4)), {})]


@sample(F.embedding_bag)
def _embedding_bag(n, make, dt):
    idx, weight = make((n + 2,), torch.int64, "index", high=6), make((6, 3), dt)
    offsets = make((2,), torch.int64, "index", high=1)   # zeros: an empty bag, then the rest
    return [((idx, weight, offsets), {"mode": "sum", "per_sample_weights": make((n + 2,), dt)}),
            ((make((2, n + 2), torch.int64, "index", high=6), weight), {"mode": "max"})]


@sample(torch.ops.aten.scatter_reduce.two)
def _scatter_reduce_two(n, make, dt):
    a, index = make((n, 4), dt), make((n, 5), torch.int64, "index", high=4)
    return [((a, 1, index, make((n, 5), dt), "amax"), {"include_self": False}),
            ((a, 1, index, make((n, 5), dt), "prod"), {})]


@sample(histogramdd_flat)
def _histogramdd_flat(n, make, dt):
    return [((make((n, 2), dt), (3, 2)), {}), ((make((n, 3), dt), 2), {"density": True})]
