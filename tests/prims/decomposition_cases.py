"""Sample calls for the non-family decompositions: shapes, reductions, indexing, creation,
linalg and nn.functional (registered into decomposition_samples.SAMPLES)."""

from __future__ import annotations

import operator

import torch
import torch.nn.functional as F

from tests.prims.decomposition_samples import BF16, BOOL, F16, F32, F64, I32, I64, T, sample

ONE = ((F32,),)


def _a(n, make, dt, *rest):
    return make((n, *rest), dt)


# --------------------------------------------------------------------------- shapes
@sample(torch.reshape, dtypes=(F32, I64))
def _reshape(n, make, dt):
    a = make((n, 6), dt)
    return [((a, (-1,)), {}), ((a, (3, -1)), {}), ((a, (-1, n)), {})]


@sample(T.reshape, T.view, dtypes=(F32, I64))
def _view(n, make, dt):
    a = make((n, 6), dt)
    return [((a, (-1,)), {}), ((a, 3, -1), {}), ((a, 2, n, 3), {}), ((a, (-1, n)), {})]


@sample(T.expand_as, T.type_as)
def _expand_as(n, make, dt):
    return [((make((n, 1), dt), make((n, 4), F64)), {})]


@sample(T.view_as, T.reshape_as)
def _view_as(n, make, dt):
    return [((make((n, 4), dt), make((4, n), F64)), {})]


@sample(torch.permute, T.permute)
def _permute(n, make, dt):
    return [((make((n, 2, 3), dt), (2, 0, 1)), {}), ((make((n, 2, 3), dt), (-1, 0, 1)), {})]


@sample(torch.transpose, T.transpose, torch.swapaxes, T.swapaxes)
def _transpose(n, make, dt):
    return [((make((n, 2, 3), dt), 0, -1), {})]


@sample(torch.t, T.t, torch.adjoint)
def _t(n, make, dt):
    return [((make((n, 3), dt),), {})]


@sample(T.contiguous, torch.clone, T.clone, T.detach, torch.detach, T.requires_grad_)
def _identity(n, make, dt):
    return [((make((n, 3), dt),), {})]


@sample(T.expand, dtypes=(F32, BOOL))
def _expand(n, make, dt):
    return [((make((n, 1), dt), n, 4), {}), ((make((n, 1), dt), (2, -1, 3)), {})]


@sample(torch.broadcast_to, T.broadcast_to)
def _broadcast_to(n, make, dt):
    return [((make((1, 3), dt), (n, 3)), {})]


@sample(torch.unsqueeze, T.unsqueeze)
def _unsqueeze(n, make, dt):
    return [((make((n, 3), dt), 0), {}), ((make((n, 3), dt), -1), {})]


@sample(torch.squeeze, T.squeeze)
def _squeeze(n, make, dt):
    return [((make((1, 3, 1), dt),), {}), ((make((n, 1, 3), dt), 1), {}),
            ((make((n, 1, 3), dt), -1), {})]


@sample(torch.flatten, T.flatten)
def _flatten(n, make, dt):
    return [((make((n, 2, 3), dt),), {}), ((make((n, 2, 3), dt), 1), {})]


@sample(torch.unflatten, T.unflatten)
def _unflatten(n, make, dt):
    return [((make((n, 6), dt), 1, (2, -1)), {})]


@sample(torch.narrow, T.narrow)
def _narrow(n, make, dt):
    # a 0-d int64 tensor start (eager reads its value): rows picked by index_select
    return [((make((n, 6), dt), 1, 1, 3), {}), ((make((n, 6), dt), 0, 0, n), {}),
            ((make((n, 6), dt), 1, make((), I64, "index", high=5), 2), {})]


@sample(torch.split, T.split)
def _split(n, make, dt):
    return [((make((n, 6), dt), 4, 1), {}), ((make((n, 6), dt), [1, 5], 1), {})]


@sample(torch.chunk, T.chunk)
def _chunk(n, make, dt):
    return [((make((n, 6), dt), 3, 1), {}), ((make((n, 7), dt), 2, -1), {})]


@sample(torch.unbind, T.unbind)
def _unbind(n, make, dt):
    return [((make((n, 3), dt), 1), {})]


@sample(torch.cat, torch.concat, torch.concatenate, dtypes=(F32, F16))
def _cat(n, make, dt):
    return [(([make((n, 3), dt), make((2, 3), F32)],), {}),
            (([make((n, 3), dt), make((n, 1), dt)], -1), {})]


@sample(torch.stack)
def _stack(n, make, dt):
    return [(([make((n, 3), dt), make((n, 3), dt)], 1), {})]


@sample(torch.flip, T.flip)
def _flip(n, make, dt):
    return [((make((n, 3), dt), (0, -1)), {}), ((make((n, 3), dt), (1,)), {})]


@sample(torch.ops.aten.slice.Tensor, torch.ops.aten.slice)
def _aten_slice(n, make, dt):
    a = make((n, 6), dt)
    return [((a, 1, 1, -2), {}), ((a,), {"dim": 1, "start": 1, "end": 5, "step": 3}),
            ((a, 0), {})]


@sample(torch.roll, T.roll)
def _roll(n, make, dt):
    # a size-0 dim rolls to itself (no modulo by zero), flattened or along the dim
    return [((make((n, 5), dt), 2, 1), {}), ((make((n, 5), dt), -1), {}),
            ((make((n, 0), dt), 1, 1), {}), ((make((0, n), dt), 3), {})]


@sample(T.repeat, dtypes=(F32, I64))
def _repeat(n, make, dt):
    a = make((n, 3), dt)
    return [((a, 2, 1), {}), ((a, 3, 1, 2), {}), ((a, (1, n)), {})]


@sample(torch.tile, T.tile)
def _tile(n, make, dt):
    return [((make((n, 3), dt), (2,)), {}), ((make((n, 3), dt), (2, 1, 2)), {})]


@sample(torch.repeat_interleave, T.repeat_interleave, dtypes=(F32, I64))
def _repeat_interleave(n, make, dt):
    a = make((2, n, 3), dt)
    return [((a, 2), {"dim": 1}), ((a, 3, -1), {}), ((a, 2), {}), ((a, n), {"dim": 0})]


# --------------------------------------------------------------------------- reductions
@sample(torch.sum, T.sum, torch.prod, T.prod, dtypes=(F32, F16, I32, BOOL))
def _sum(n, make, dt):
    a = make((n, 3, 2), dt, "unit" if dt.is_floating_point else "randn")
    return [((a,), {}), ((a, 1), {}), ((a, -1, True), {}), ((a,), {"dtype": F64})]


@sample(torch.mean, T.mean, dtypes=(F32, F16, BF16))
def _mean(n, make, dt):
    a = make((n, 3, 2), dt)
    return [((a,), {}), ((a, (0, 2)), {}), ((a, -1, True), {})]


@sample(torch.max, T.max, torch.min, T.min, dtypes=(F32, I64))
def _max(n, make, dt):
    a = make((n, 5), dt)
    return [((a,), {}), ((a, 1), {}), ((a, 0, True), {}), ((a, make((n, 5), dt)), {})]


@sample(torch.amax, T.amax, torch.amin, T.amin, torch.any, T.any, torch.all, T.all)
def _amax(n, make, dt):
    a = make((n, 5), dt)
    return [((a,), {}), ((a, 1), {}), ((a, 0, True), {})]


@sample(torch.argmax, T.argmax, torch.argmin, T.argmin, dtypes=(F32, I64))
def _argmax(n, make, dt):
    a = make((n, 5), dt)
    return [((a,), {}), ((a, 1), {}), ((a, 0, True), {})]


@sample(torch.var, T.var, torch.std, T.std, torch.var_mean, torch.std_mean, dtypes=(F32, F16))
def _var(n, make, dt):
    a = make((n, 5), dt)
    return [((a, 1), {}), ((a, 1), {"correction": 0}), ((a, (0, 1), False, True), {})]


@sample(torch.softmax, T.softmax, F.softmax, torch.log_softmax, T.log_softmax, F.log_softmax,
        dtypes=(F32, F16, BF16))
def _softmax(n, make, dt):
    return [((make((n, 5), dt), -1), {}), ((make((n, 5), dt), 0), {}),
            ((make((n, 5), dt), 1), {"dtype": F64})]


@sample(torch.logsumexp, T.logsumexp, dtypes=(F32, F16))
def _logsumexp(n, make, dt):
    return [((make((n, 5), dt), 1), {}), ((make((n, 5), dt), (0, 1), True), {})]


@sample(torch.cumsum, T.cumsum, torch.cumprod, T.cumprod, dtypes=(F32, I32, BOOL))
def _cumsum(n, make, dt):
    return [((make((n, 3), dt, "unit"), 0), {}), ((make((n, 3), dt, "unit"), -1), {})]


@sample(torch.diff, T.diff, dtypes=(F32, I64, BOOL))
def _diff(n, make, dt):
    a = make((n, 4), dt)
    return [((a,), {}), ((a, 2, 0), {}), ((a,), {"prepend": make((n, 1), dt)}),
            ((a, 1, -1), {"prepend": make((n, 2), dt), "append": make((n, 3), dt)})]


@sample(torch.topk, T.topk)
def _topk(n, make, dt):
    return [((make((n, 5), dt), 2), {}), ((make((n, 5), dt), 1, 0), {"largest": False})]


@sample(torch.sort, T.sort, torch.argsort, T.argsort)
def _sort(n, make, dt):
    return [((make((n, 5), dt),), {}), ((make((n, 5), dt), 0, True), {})]


# --------------------------------------------------------------------------- indexing
@sample(T.__getitem__, operator.getitem, dtypes=(F32, I64))
def _getitem(n, make, dt):
    a = make((n, 6, 4), dt)
    idx = make((3,), I64, "index", high=n)
    return [((a, 0), {}), ((a, -1), {}), ((a, (slice(1, None), None, 2)), {}),
            ((a, (Ellipsis, slice(None, None, 2))), {}), ((a, (slice(None), slice(-3, -1))), {}),
            ((a, (slice(0, n), slice(2, 100))), {}), ((a, (slice(None), slice(4, 1))), {}),
            ((a, idx), {}),
            ((a, (slice(None), make((2, 2), I64, "index", high=6))), {}),
            ((a, (idx, make((3,), I64, "index", high=6))), {}),
            ((a, (slice(None), make((2,), I64, "index", high=6), make((2,), I64, "index",
                                                                   high=4))), {}),
            ((a, (idx, slice(None), make((3,), I64, "index", high=4))), {})]


@sample(operator.setitem, T.__setitem__, dtypes=(F32, I64))
def _setitem(n, make, dt):
    a = make((n, 6, 4), dt)
    return [((a, 0, 1), {}), ((a, (slice(1, None), slice(None, None, 2)), make((4,), dt)), {}),
            ((a, (Ellipsis, -1), make((n, 6), dt)), {}),
            ((a, make((3,), I64, "index", high=n), 0), {}),
            ((a, (slice(None), make((2,), I64, "index", high=6)), make((n, 2, 4), dt)), {}),
            ((a, (slice(None), slice(2, n)), make((), F64)), {})]


@sample(torch.masked_fill, T.masked_fill, T.masked_fill_, dtypes=(F32, I64))
def _masked_fill(n, make, dt):
    return [((make((n, 3), dt), make((n, 3), BOOL, "bool"), 0), {}),
            ((make((n, 3), dt), make((3,), BOOL, "bool"), make((), dt)), {})]


@sample(torch.gather, T.gather)
def _gather(n, make, dt):
    return [((make((n, 5), dt), 1, make((n, 2), I64, "index", high=5)), {})]


@sample(torch.take_along_dim, T.take_along_dim)
def _take_along_dim(n, make, dt):
    return [((make((n, 5), dt), make((n, 2), I64, "index", high=5), 1), {}),
            ((make((n, 5), dt), make((1, 2), I64, "index", high=5), -1), {})]


@sample(torch.index_select, T.index_select)
def _index_select(n, make, dt):
    # a 0-d input takes one index (0), given 1-d or 0-d
    return [((make((n, 5), dt), 1, make((3,), I64, "index", high=5)), {}),
            ((make((), dt), 0, make((1,), I64, "index", high=1)), {}),
            ((make((), dt), -1, make((), I64, "index", high=1)), {})]


@sample(torch.index_put, T.index_put)
def _index_put(n, make, dt):
    # one bool mask: one value row broadcast to every selected row (set or accumulated)
    a = make((n, 4), dt)
    return [((a, (make((n,), BOOL, "bool"),), make((4,), dt)), {}),
            ((a, (make((n, 4), BOOL, "bool"),), make((1,), dt)), {"accumulate": True}),
            ((a, (make((3,), I64, "index", high=n),), make((3, 4), dt)), {"accumulate": True})]


@sample(torch.scatter_add, T.scatter_add)
def _scatter_add(n, make, dt):
    return [((make((n, 5), dt), 1, make((n, 2), I64, "index", high=5), make((n, 2), dt)), {})]


@sample(F.embedding)
def _embedding(n, make, dt):
    return [((make((n, 3), I64, "index", high=7), make((7, 4), dt)), {})]


@sample(torch.embedding)
def _torch_embedding(n, make, dt):
    return [((make((7, 4), dt), make((n, 3), I64, "index", high=7)), {})]


# --------------------------------------------------------------------------- creation
@sample(torch.arange, dtypes=(I64, F32))
def _arange(n, make, dt):
    return [((n,), {}), ((1, n + 3), {}), ((0, n, 2), {}), ((n,), {"dtype": dt}),
            ((0.5, 3.0, 0.25), {})]


@sample(torch.zeros, torch.ones, torch.empty, dtypes=(F32, I64))
def _zeros(n, make, dt):
    return [((n, 3), {}), (((n, 2),), {"dtype": dt})]


@sample(torch.full)
def _full(n, make, dt):
    return [(((n, 3), 1.5), {}), (((n,), 2), {}), (((n,), True), {}), (((2, n), 7), {"dtype": F16})]


@sample(torch.tensor, torch.as_tensor, dtypes=(F32, I64, F16))
def _tensor_of_data(n, make, dt):
    """Python data (sizes among it): eager's dtype inference, then each dtype asked for."""
    data = [0.5, -1.7, True, 3, n, (n, 2), [[n, 1], [2, n * 3]], [[True, False]], [],
            [[1, 1], [1, 1]], [1, 2.5]]
    return [((d,), {}) for d in data] + [((d,), {"dtype": dt}) for d in data[:8]]


@sample(torch.zeros_like, torch.ones_like, torch.empty_like, dtypes=(F32, I64))
def _like(n, make, dt):
    return [((make((n, 3), dt),), {}), ((make((n, 3), dt),), {"dtype": F16})]


@sample(torch.full_like)
def _full_like(n, make, dt):
    return [((make((n, 3), dt), 2.5), {})]


@sample(T.new_zeros, T.new_ones, T.new_empty)
def _new(n, make, dt):
    return [((make((2,), dt), (n, 3)), {}), ((make((2,), dt), n, 3), {})]


@sample(T.new_full)
def _new_full(n, make, dt):
    return [((make((2,), dt), (n, 3), 4.0), {})]


@sample(torch.triu, T.triu, torch.tril, T.tril, T.triu_, T.tril_, dtypes=(F32, BOOL))
def _triu(n, make, dt):
    return [((make((n, 5), dt),), {}), ((make((2, n, n), dt), 1), {}),
            ((make((n, 4), dt), -1), {})]


@sample(T.zero_, dtypes=(F32, BOOL))
def _zero(n, make, dt):
    return [((make((n, 3), dt),), {})]


@sample(T.fill_, dtypes=(F32, I64))
def _fill(n, make, dt):
    return [((make((n, 3), dt), 2), {}), ((make((n, 3), dt), make((), I32)), {})]


@sample(T.copy_, dtypes=(F32, I64))
def _copy(n, make, dt):
    return [((make((n, 3), dt), make((3,), F64)), {}), ((make((n, 3), dt), make((), I32)), {})]


@sample(T.to, dtypes=(F32, I64))
def _to(n, make, dt):
    a = make((n, 3), dt)
    return [((a, F16), {}), ((a,), {"dtype": F64}), ((a, "cpu"), {}),
            ((a, make((2,), BF16)), {}), ((a, "cpu", I32), {})]


@sample(T.type)
def _type(n, make, dt):
    return [((make((n, 3), dt), I64), {})]


for _method in ("float", "half", "bfloat16", "double", "long", "int", "bool", "short", "char",
                "byte"):
    sample(getattr(T, _method), dtypes=(F32, I64))(lambda n, make, dt: [((make((n, 3), dt),),
                                                                          {})])


# --------------------------------------------------------------------------- linalg
@sample(torch.matmul, T.matmul, T.__matmul__, operator.matmul, dtypes=(F32, F64))
def _matmul(n, make, dt):
    return [((make((n, 4), dt), make((4, 3), dt)), {}), ((make((2, n, 4), dt), make((4,), dt)), {}),
            ((make((4,), dt), make((2, 4, n), dt)), {}), ((make((4,), dt), make((4,), dt)), {}),
            ((make((2, 1, n, 4), dt), make((3, 4, 5), dt)), {}),
            ((make((2, n, 4), dt), make((4, 3), dt)), {})]


@sample(T.__rmatmul__)
def _rmatmul(n, make, dt):
    return [((make((4, 3), dt), make((n, 4), dt)), {})]


@sample(torch.outer, T.outer, torch.ger, T.ger)
def _outer(n, make, dt):
    return [((make((n,), dt), make((4,), dt)), {}), ((make((3,), dt), make((n,), dt)), {})]


@sample(torch.mm, T.mm)
def _mm(n, make, dt):
    return [((make((n, 4), dt), make((4, 3), dt)), {})]


@sample(torch.bmm, T.bmm)
def _bmm(n, make, dt):
    return [((make((2, n, 4), dt), make((2, 4, 3), dt)), {})]


@sample(torch.addmm, T.addmm)
def _addmm(n, make, dt):
    return [((make((3,), dt), make((n, 4), dt), make((4, 3), dt)), {}),
            ((make((n, 3), dt), make((n, 4), dt), make((4, 3), dt)), {"beta": 0.5, "alpha": 2})]


@sample(torch.baddbmm, T.baddbmm)
def _baddbmm(n, make, dt):
    return [((make((2, n, 3), dt), make((2, n, 4), dt), make((2, 4, 3), dt)), {"alpha": 0.5})]


@sample(F.linear, dtypes=(F32, F16))
def _linear(n, make, dt):
    return [((make((n, 4), dt), make((3, 4), dt)), {}),
            ((make((2, n, 4), dt), make((3, 4), dt), make((3,), dt)), {})]


@sample(torch.einsum)
def _einsum(n, make, dt):
    return [(("ij,jk->ik", make((n, 4), dt), make((4, 3), dt)), {}),
            (("bhqd,bhkd->bhqk", make((2, 3, n, 4), dt), make((2, 3, 5, 4), dt)), {}),
            (("bij,bjk->bik", make((2, n, 4), dt), make((2, 4, 3), dt)), {}),
            (("ij,jk,kl->il", make((n, 4), dt), make((4, 3), dt), make((3, 2), dt)), {}),
            (("ij->ji", make((n, 4), dt)), {}), (("ij->", make((n, 4), dt)), {}),
            (("i,j->ij", make((n,), dt), make((3,), dt)), {}),
            (("ij,ij->i", make((n, 4), dt), make((n, 4), dt)), {})]


@sample(torch.tensordot)
def _tensordot(n, make, dt):
    # a contracted size 1 against a size 4 (or 3): eager sums the other operand over that dim
    return [((make((n, 2, 1), dt), make((2, 4, n), dt)), {"dims": ([0, 1, 2], [2, 0, 1])}),
            ((make((3, n), dt), make((n, 1, 5), dt)), {"dims": ([0, 1], [1, 0])}),
            ((make((2, n), dt), make((n, 3), dt)), {"dims": 1})]


# --------------------------------------------------------------------------- nn.functional
@sample(F.relu, torch.relu, T.relu, torch.relu_, T.relu_, F.silu, F.mish, F.softplus,
        F.leaky_relu, F.hardtanh, dtypes=(F32, F16, BF16))
def _activation(n, make, dt):
    return [((make((n, 3), dt),), {})]


@sample(F.gelu, dtypes=(F32, F16, BF16))
def _gelu(n, make, dt):
    return [((make((n, 3), dt),), {}), ((make((n, 3), dt),), {"approximate": "tanh"})]


@sample(F.layer_norm, dtypes=(F32, F16, BF16))
def _layer_norm(n, make, dt):
    return [((make((n, 8), dt), (8,)), {}),
            ((make((2, n, 8), dt), (8,), make((8,), dt), make((8,), dt)), {"eps": 1e-6}),
            ((make((n, 2, 4), dt), (2, 4)), {})]


@sample(F.rms_norm, dtypes=(F32, F16))
def _rms_norm(n, make, dt):
    return [((make((n, 8), dt), (8,), make((8,), dt)), {}),
            ((make((n, 8), dt), (8,)), {"eps": 1e-6})]


@sample(F.normalize, dtypes=(F32, F16))
def _normalize(n, make, dt):
    return [((make((n, 8), dt),), {}), ((make((n, 8), dt),), {"p": 1, "dim": 0}),
            ((make((n, 8), dt),), {"p": 3.0, "dim": -1})]


@sample(F.cross_entropy, dtypes=(F32, F16))
def _cross_entropy(n, make, dt):
    logits, target = make((n, 5), dt), make((n,), I64, "index", high=5)
    weight, probs = make((5,), dt, "positive"), make((n, 5), dt, "positive")
    return [((logits, target), {}), ((logits, target), {"reduction": "sum"}),
            ((logits, target), {"reduction": "none"}),
            ((logits, target), {"label_smoothing": 0.1}),
            ((logits, target), {"weight": weight}),
            ((logits, target), {"weight": weight, "label_smoothing": 0.2}),
            ((make((2, 5, n), dt), make((2, n), I64, "index", high=5)), {}),
            ((make((5,), dt), make((), I64, "index", high=5)), {}),
            # class-probability targets (soft labels)
            ((logits, probs), {}), ((logits, probs), {"reduction": "none", "weight": weight}),
            ((logits, probs), {"label_smoothing": 0.3, "reduction": "sum"}),
            ((make((2, 5, n), dt), make((2, 5, n), dt, "positive")),
             {"weight": weight, "label_smoothing": 0.1}),
            ((make((5,), dt), make((5,), dt, "positive")), {"label_smoothing": 0.2})]


@sample(F.nll_loss, dtypes=(F32,))
def _nll_loss(n, make, dt):
    logp, target = make((n, 5), dt), make((n,), I64, "index", high=5)
    return [((logp, target), {}), ((logp, target), {"reduction": "none"}),
            ((logp, target), {"weight": make((5,), dt, "positive")})]


@sample(F.mse_loss, F.l1_loss, dtypes=(F32, F16))
def _mse(n, make, dt):
    return [((make((n, 3), dt), make((n, 3), dt)), {}),
            ((make((n, 3), dt), make((n, 3), dt)), {"reduction": "none"})]


@sample(F.scaled_dot_product_attention, dtypes=(F32, F64))
def _sdpa(n, make, dt):
    q, k, v = make((2, 2, n, 4), dt), make((2, 2, 3, 4), dt), make((2, 2, 3, 4), dt)
    qc, kc, vc = make((1, 2, n, 4), dt), make((1, 2, n, 4), dt), make((1, 2, n, 4), dt)
    causal = make((n, n), BOOL, "bool")
    return [((q, k, v), {}), ((qc, kc, vc), {"is_causal": True}),
            ((q, k, v), {"attn_mask": make((n, 3), dt)}), ((q, k, v), {"scale": 0.3}),
            ((qc, kc, vc), {"attn_mask": causal}),
            ((make((2, 6, n, 4), dt), make((2, 3, 3, 4), dt), make((2, 3, 3, 4), dt)),
             {"enable_gqa": True}),
            ((make((6, n, 4), dt), make((1, n, 4), dt), make((1, n, 4), dt)),
             {"enable_gqa": True, "is_causal": True}),
            ((q, k, v), {"enable_gqa": True})]


@sample(F.pad, dtypes=(F32, I64))
def _pad(n, make, dt):
    return [((make((n, 3), dt), (1, 2)), {}), ((make((n, 3), dt), (1, 0, 0, 2), "constant", 3), {}),
            ((make((n, 4), dt), (-1, 1)), {})]


@sample(F.one_hot, dtypes=(I64,))
def _one_hot(n, make, dt):
    return [((make((n,), I64, "index", high=4), 4), {})]


@sample(F.dropout, torch.dropout, dtypes=(F32, F16))
def _dropout(n, make, dt):
    return [((make((n, 40), dt), 0.25, True), {}), ((make((n, 3), dt), 0.5, False), {}),
            ((make((n, 3), dt), 0.0, True), {})]
