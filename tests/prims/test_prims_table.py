"""Every prim in PRIMS: its reference matches an independent oracle (pointwise prims: Python's
own scalar arithmetic, tests/prims/scalar_oracles.py; var_mean: its formula in float64; the
rest: torch), and its meta (run on symbolic sizes inside a ShapeEnv) matches the real output's
shape and dtype, over dtypes and sizes 1, 2, 7, 33.

A prim without a row in PRIM_SAMPLES fails `test_every_prim_has_samples`.
"""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F

from prims import PRIMS, MetaTracer, ops, tracing
from prims.pointwise import BINARY_RULES, UNARY_RULES
from symbolic import ShapeEnv, TensorMeta
from tests.prims.scalar_oracles import BINARY_ORACLES, UNARY_ORACLES, elementwise
from tests.prims.samples import (
    FLOATS,
    SIZES,
    MetaMaker,
    RealMaker,
    close,
    flat,
    substitute,
    symbolic_size,
)

INTS = (torch.int32, torch.int64)
POSITIVE = {"log", "log2", "log1p", "sqrt", "rsqrt", "reciprocal"}


def _unary(name):
    _, allowed, to_bool = UNARY_RULES[name]
    dtypes = {"float": FLOATS, "numeric": FLOATS + INTS, "integral": INTS + (torch.bool,),
              "any": FLOATS + (torch.bool,)}[allowed]
    kind = "positive" if name in POSITIVE else "randn"

    def build(n, make, dtype):
        return [(make((n, 3), dtype, kind),)]

    def expected(a):
        return elementwise(UNARY_ORACLES[name], torch.bool if to_bool else a.dtype, a)

    return dtypes, build, expected


def _binary(name):
    _, allowed, to_bool = BINARY_RULES[name]
    dtypes = {"float": FLOATS, "numeric": FLOATS + INTS, "integral": INTS + (torch.bool,),
              "any": FLOATS + INTS}[allowed]
    if name.startswith("logical"):
        dtypes = (torch.bool, torch.float32)

    def build(n, make, dtype):
        b_kind = "positive" if name in ("floor_divide", "remainder", "pow") else "randn"
        a_kind = "positive" if name == "pow" else "randn"
        if name == "pow" and not dtype.is_floating_point:
            b = make((n, 3), dtype, "index", high=3)
        elif b_kind == "positive" and not dtype.is_floating_point:
            b = make((n, 3), dtype, "index", high=5)
            b = b + 1 if isinstance(b, torch.Tensor) else b
        else:
            b = make((n, 3), dtype, b_kind)
        a = make((n, 3), dtype, a_kind)
        scalar = True if dtype == torch.bool else 2
        return [(a, b), (a, scalar), (scalar, b) if name != "pow" else (a, 1)]

    def expected(a, b):
        t = a if isinstance(a, torch.Tensor) else b
        return elementwise(BINARY_ORACLES[name], torch.bool if to_bool else t.dtype, a, b)

    return dtypes, build, expected


def _var_mean_expected(a, dims, correction):
    """The definition in float64: mean = sum / n, var = sum of squared deviations / (n - c)."""
    x = a.double()
    n = math.prod(a.shape[d] for d in dims)
    mean = x.sum(dims, keepdim=True) / n
    var = ((x - mean) ** 2).sum(dims) / (n - correction) if n - correction > 0 else \
        torch.full(mean.sum(dims).shape, float("nan") if n - correction == 0 or n == 1
                   else float("inf"), dtype=torch.float64)
    return var.to(a.dtype), mean.sum(dims).to(a.dtype)


def _philox_expected(seed, offset, shape, dtype, device):
    """The documented formula, in plain Python ints (independent of the tensor version)."""
    mask = 0xFFFFFFFF

    def fmix(h):
        h ^= h >> 16
        h = (h * 0x85EBCA6B) & mask
        h ^= h >> 13
        h = (h * 0xC2B2AE35) & mask
        return h ^ (h >> 16)

    bits = {torch.float16: 11, torch.bfloat16: 8}.get(dtype, 24)
    s = int(seed) & ((1 << 64) - 1)
    values = []
    for i in range(math.prod(shape)):
        c = offset + i
        high = ((s >> 32) & mask) ^ ((c >> 32) & mask)
        key = fmix((s & mask) ^ 0x9E3779B9 ^ ((high * 0x85EBCA77) & mask))
        h = fmix(key ^ (c & mask))
        h = fmix(h ^ ((key * 0x27D4EB2F) & mask))
        values.append((h >> (32 - bits)) * 2.0 ** -bits)
    return torch.tensor(values, dtype=torch.float64).reshape(shape).to(dtype)


def _index_put_expected(a, indices, values, accumulate):
    """Loop over positions in Python (independent of torch's index_put)."""
    out = a.clone()
    grids = [torch.arange(a.shape[d]) if i is None else i for d, i in enumerate(indices)]
    if any(i is None for i in indices):  # None dims: every position, outer product with index
        mesh = torch.meshgrid(*grids, indexing="ij")
        positions = zip(*(m.flatten().tolist() for m in mesh))
        flat_values = values.reshape(-1).tolist()
    else:
        positions = zip(*(i.tolist() for i in indices))
        flat_values = values.reshape(len(indices[0]), -1).tolist()
    for pos, v in zip(positions, flat_values):
        if isinstance(v, list):  # a whole row (trailing dims not indexed)
            v = torch.tensor(v, dtype=a.dtype)
        out[pos] = out[pos] + v if accumulate else v
    return out


def _sdpa_backward_expected(g, q, k, v, mask, p, causal, scale, seed, offset):
    leaves = [t.detach().double().requires_grad_(True) for t in (q, k, v)]
    out = F.scaled_dot_product_attention(*leaves, is_causal=causal)
    return tuple(x.to(q.dtype) for x in torch.autograd.grad(out, leaves, g.double()))


def _attention_with_mask(q, k, v, p, causal, seed, offset):
    """Attention in float64 with the documented philox dropout mask; (out, logsumexp)."""
    scores = q.double() @ k.double().transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        scores = scores.masked_fill(~torch.ones_like(scores, dtype=torch.bool).tril(),
                                    float("-inf"))
    probs = torch.softmax(scores, -1)
    if p:
        keep = _philox_expected(seed, offset, probs.shape, torch.float32, None) >= p
        probs = torch.where(keep, probs / (1 - p), 0.0)
    return probs @ v.double(), torch.logsumexp(scores, -1)


def _sdpa_dropout_expected(q, k, v, p, causal, scale, seed, offset):
    out, lse = _attention_with_mask(q, k, v, p, causal, seed, offset)
    return out.to(q.dtype), lse.float(), torch.stack([seed, torch.tensor(offset)])


def _sdpa_dropout_backward_expected(g, q, k, v, out, lse, rng, p, causal, scale):
    leaves = [t.detach().double().requires_grad_(True) for t in (q, k, v)]
    result, _ = _attention_with_mask(*leaves, p, causal, rng[0], int(rng[1]))
    return tuple(x.to(q.dtype) for x in torch.autograd.grad(result, leaves, g.double()))


def _sdpa_dropout_backward_samples(n, make, dt):
    q, k, v = make((1, 2, n, 4), dt), make((1, 2, n, 4), dt), make((1, 2, n, 4), dt)
    rng = make((2,), torch.int64, "index", high=1000)  # (seed, offset)
    lse = make((1, 2, n), torch.float32)
    return [(make((1, 2, n, 4), dt), q, k, v, make((1, 2, n, 4), dt), lse, rng, 0.25, True, None)]


ALL = FLOATS + INTS
def _conv1d_oracle(x, w, b, stride, padding, dilation, transposed, output_padding, groups):
    """1-D convolution as a sum over kernel taps of strided slices (no aten convolution);
    transposed: the input gradient of the plain one (groups 1)."""
    (s,), (p,), (d,) = stride, padding, dilation
    if transposed:
        k, length = w.shape[2], x.shape[2]
        out_len = (length - 1) * s - 2 * p + d * (k - 1) + output_padding[0] + 1
        y = torch.zeros(x.shape[0], w.shape[1], out_len, dtype=torch.float64,
                        requires_grad=True)
        plain = _conv1d_oracle(y, w.double(), None, stride, padding, dilation, False, (0,), 1)
        (grad,) = torch.autograd.grad(plain, y, x.double())
        out = grad if b is None else grad + b.double()[None, :, None]
        return out.to(x.dtype)
    xp = F.pad(x.double(), (p, p))
    k = w.shape[2]
    out_len = (x.shape[2] + 2 * p - d * (k - 1) - 1) // s + 1
    out = sum(torch.einsum("ncl,oc->nol", xp[:, :, j * d: j * d + (out_len - 1) * s + 1: s],
                           w.double()[:, :, j]) for j in range(k))
    if b is not None:
        out = out + b.double()[None, :, None]
    return out.to(x.dtype) if not x.requires_grad else out


def _conv_backward_expected(g, x, w, b, stride, padding, dilation, transposed, output_padding,
                            groups):
    leaves = [t.detach().double().requires_grad_(True) for t in (x, w)]
    bias = None if b is None else b.detach().double().requires_grad_(True)
    out = _conv1d_oracle(*leaves, bias, stride, padding, dilation, False, (0,), 1)
    grads = torch.autograd.grad(out, leaves + ([bias] if bias is not None else []), g.double())
    gb = grads[2] if bias is not None else torch.empty(0, dtype=torch.float64)
    return grads[0].to(x.dtype), grads[1].to(x.dtype), gb.to(x.dtype)


# Oracles of the torch_extern rows: torch called directly, not through the extern table.
_EXTERN_ORACLES = {"linalg.svd": torch.linalg.svd, "digamma": torch.digamma,
                   "special.zeta": torch.special.zeta, "linalg.cholesky": torch.linalg.cholesky,
                   "igamma": torch.igamma}


def _spd(x):
    """A symmetric positive definite matrix from `x` (real tensors; metas pass through)."""
    if not isinstance(x, torch.Tensor):
        return x
    return x @ x.mT + x.shape[-1] * torch.eye(x.shape[-1], dtype=x.dtype)


def _torch_extern_expected(name, args, kwargs):
    out = _EXTERN_ORACLES[name](*args, **dict(kwargs))
    return tuple(out) if isinstance(out, tuple) else out


def _torch_extern_backward_expected(name, args, kwargs, wrt, grads):
    leaves = [a.detach().requires_grad_(i in wrt) for i, a in enumerate(args)]
    out = _EXTERN_ORACLES[name](*leaves, **dict(kwargs))
    return torch.autograd.grad(out, [leaves[i] for i in wrt], grads[0])


PRIM_SAMPLES = {name: _unary(name) for name in UNARY_RULES}
PRIM_SAMPLES |= {name: _binary(name) for name in BINARY_RULES}
PRIM_SAMPLES |= {
    "where": (FLOATS + INTS, lambda n, make, dt: [
        (make((n, 3), dt, "bool"), make((n, 3), dt), make((n, 3), dt)),
        (make((n, 3), dt, "bool"), make((n, 3), dt), 0)],
        lambda c, a, b: torch.where(c, a, b).to(a.dtype)),
    "convert_element_type": (FLOATS + INTS + (torch.bool,), lambda n, make, dt: [
        (make((n, 3), torch.float32), dt), (make((n, 3), torch.int64), dt)],
        lambda a, dt: a.to(dt)),
    "sum": (FLOATS + INTS, lambda n, make, dt: [
        (make((n, 3, 5), dt), (0,)), (make((n, 3, 5), dt), (1, 2)), (make((n, 3), dt), ())],
        lambda a, dims: torch.sum(a, dims, dtype=a.dtype) if dims else a),
    "prod": (FLOATS + INTS, lambda n, make, dt: [
        (make((n, 3), dt, "unit" if dt.is_floating_point else "randn"), (0,)),
        (make((n, 3), dt), (0, 1))],
        lambda a, dims: torch.prod(a.flatten() if len(dims) == 2 else a, 0, dtype=a.dtype)),
    "amax": (FLOATS + INTS, lambda n, make, dt: [(make((n, 3, 5), dt), (0, 2))],
             lambda a, dims: torch.amax(a, dims)),
    "amin": (FLOATS + INTS, lambda n, make, dt: [(make((n, 3, 5), dt), (1,))],
             lambda a, dims: torch.amin(a, dims)),
    "any": (FLOATS + (torch.bool,), lambda n, make, dt: [(make((n, 3), dt), (0,))],
            lambda a, dims: torch.any(a, dims[0])),
    "all": (FLOATS + (torch.bool,), lambda n, make, dt: [(make((n, 3), dt), (1,))],
            lambda a, dims: torch.all(a, dims[0])),
    "argmax": (FLOATS + INTS, lambda n, make, dt: [(make((n, 3), dt), 0), (make((n, 3), dt), 1)],
               lambda a, d: torch.argmax(a, d)),
    "argmin": (FLOATS + INTS, lambda n, make, dt: [(make((n, 3), dt), 0)],
               lambda a, d: torch.argmin(a, d)),
    "var_mean": (FLOATS, lambda n, make, dt: [(make((n, 3), dt), (0,), 1),
                                               (make((n, 3), dt), (0, 1), 0)],
                 lambda a, dims, c: _var_mean_expected(a, dims, c)),
    "broadcast_in_dim": (ALL, lambda n, make, dt: [(make((n, 1), dt), (4, n, 3), (1, 2)),
                                                   (make((n,), dt), (n, 2), (0,))],
                         lambda a, shape, bdims: a.reshape(
                             [a.shape[bdims.index(i)] if i in bdims else 1
                              for i in range(len(shape))]).expand(shape)),
    "reshape": (ALL, lambda n, make, dt: [(make((n, 6), dt), (3, n, 2))],
                lambda a, shape: a.reshape(shape)),
    "permute": (ALL, lambda n, make, dt: [(make((n, 2, 3), dt), (2, 0, 1))],
                lambda a, dims: a.permute(dims)),
    "slice": (ALL, lambda n, make, dt: [(make((n, 4), dt), 0, 0, n, 2),
                                        (make((n, 4), dt), 1, 1, 3, 1)],
              lambda a, d, lo, hi, st: a[(slice(None),) * d + (slice(lo, hi, st),)]),
    "squeeze": (ALL, lambda n, make, dt: [(make((n, 1, 3, 1), dt), (1, 3))],
                lambda a, dims: a.squeeze(3).squeeze(1)),
    "flip": (ALL, lambda n, make, dt: [(make((n, 3), dt), (0, 1))],
             lambda a, dims: torch.flip(a, dims)),
    "cat": (ALL, lambda n, make, dt: [((make((n, 3), dt), make((2, 3), dt)), 0),
                                      ((make((n, 3), dt), make((n, 1), dt)), 1)],
            lambda ts, d: torch.cat(ts, d)),
    "pad": (ALL, lambda n, make, dt: [(make((n, 3), dt), ((1, 2), (0, 1)), 1)],
            lambda a, pads, v: F.pad(a, (0, 1, 1, 2), value=v)),
    "gather": (ALL, lambda n, make, dt: [(make((n, 5), dt), 1,
                                          make((n, 3), torch.int64, "index", high=5))],
               lambda a, d, i: torch.gather(a, d, i)),
    "index_select": (ALL, lambda n, make, dt: [
        (make((n, 4), dt), 0, make((3,), torch.int64, "index", high=n)),
        (make((), dt), 0, make((1,), torch.int64, "index", high=1))],  # 0-d: its one element
                     lambda a, d, i: (a[i] if a.ndim else a) if d == 0 else None),
    "scatter_add": (FLOATS + INTS, lambda n, make, dt: [
        (make((n, 4), dt), 1, make((n, 2), torch.int64, "index", high=4), make((n, 2), dt))],
        lambda a, d, i, s: a.clone().scatter_add_(d, i, s)),
    "index_put": (FLOATS + INTS, lambda n, make, dt: [
        (make((n, 4), dt), (make((3,), torch.int64, "index", high=n),
                            make((3,), torch.int64, "index", high=4)), make((3,), dt), True),
        (make((n, 4), dt), (make((2,), torch.int64, "index", high=n),), make((2, 4), dt),
         False),
        (make((n, 4), dt), (None, make((2,), torch.int64, "index", high=4)), make((n, 2), dt),
         True)],
        lambda a, idx, v, acc: _index_put_expected(a, idx, v, acc)),
    "iota": (FLOATS + INTS, lambda n, make, dt: [(n, 2, 3, dt, torch.device("cpu"))],
             lambda n, start, step, dt, dev: torch.arange(start, start + n * step, step,
                                                          dtype=dt)),
    "full": (ALL + (torch.bool,), lambda n, make, dt: [((n, 3), 1, dt, torch.device("cpu"))],
             lambda shape, v, dt, dev: torch.full(shape, v, dtype=dt)),
    "philox_rand": (FLOATS, lambda n, make, dt: [
        (make((), torch.int64, "index", high=2**40), 5, (n, 3), dt, torch.device("cpu"))],
        _philox_expected),
    "cumsum": (FLOATS + INTS, lambda n, make, dt: [(make((n, 3), dt), 0), (make((n, 3), dt), 1)],
               lambda a, d: torch.cumsum(a, d, dtype=a.dtype)),
    "cumprod": (FLOATS + INTS, lambda n, make, dt: [(make((n, 3), dt, "unit"), 0)],
                lambda a, d: torch.cumprod(a, d, dtype=a.dtype)),
    "mm": (FLOATS[:2], lambda n, make, dt: [(make((n, 4), dt), make((4, 3), dt))],
           lambda a, b: a @ b),
    "bmm": (FLOATS[:2], lambda n, make, dt: [(make((2, n, 4), dt), make((2, 4, 3), dt))],
            lambda a, b: a @ b),
    "sdpa": (FLOATS[:2], lambda n, make, dt: [
        (make((2, 2, n, 4), dt), make((2, 2, 3, 4), dt), make((2, 2, 3, 5), dt), None, 0.0,
         False, None, None, 0),
        (make((1, 2, n, 4), dt), make((1, 2, n, 4), dt), make((1, 2, n, 4), dt), None, 0.0,
         True, None, None, 0)],
        lambda q, k, v, m, p, causal, s, seed, off: F.scaled_dot_product_attention(
            q, k, v, is_causal=causal)),
    "sdpa_backward": (FLOATS[:2], lambda n, make, dt: [
        (make((1, 2, n, 5), dt), make((1, 2, n, 4), dt), make((1, 2, 3, 4), dt),
         make((1, 2, 3, 5), dt), None, 0.0, False, None, None, 0)],
        _sdpa_backward_expected),
    "sdpa_dropout": (FLOATS[:2], lambda n, make, dt: [
        (make((1, 2, n, 4), dt), make((1, 2, n, 4), dt), make((1, 2, n, 4), dt), p, True, None,
         make((), torch.int64, "index", high=2**40), 3) for p in (0.0, 0.25)],
        _sdpa_dropout_expected),
    "sdpa_dropout_backward": (FLOATS[:2], _sdpa_dropout_backward_samples,
                              _sdpa_dropout_backward_expected),
    "convolution": (FLOATS[:1], lambda n, make, dt: [
        (make((2, 3, n + 4), dt), make((4, 3, 3), dt), make((4,), dt), (1,), (1,), (1,), False,
         (0,), 1),
        (make((1, 3, n + 6), dt), make((2, 3, 3), dt), None, (2,), (0,), (2,), False, (0,), 1),
        (make((1, 3, n + 1), dt), make((3, 2, 3), dt), make((2,), dt), (2,), (1,), (1,), True,
         (1,), 1)],
        _conv1d_oracle),
    "convolution_backward": (FLOATS[:1], lambda n, make, dt: [
        (make((2, 4, n + 4), dt), make((2, 3, n + 4), dt), make((4, 3, 3), dt), make((4,), dt),
         (1,), (1,), (1,), False, (0,), 1)],
        _conv_backward_expected),
    "torch_extern": (FLOATS[:1], lambda n, make, dt: [
        ("linalg.svd", (make((n, 3), dt),), (("full_matrices", False),)),
        ("digamma", (make((n, 3), dt, "positive"),), ()),
        ("special.zeta", (make((n, 1), dt, "positive"), make((4,), dt, "positive")), ())],
        _torch_extern_expected),
    "torch_extern_backward": (FLOATS[:1], lambda n, make, dt: [
        ("linalg.cholesky", (_spd(make((n, n), dt)),), (), (0,), (make((n, n), dt),)),
        ("igamma", (make((n, 2), dt, "positive"), make((n, 2), dt, "positive")), (), (1,),
         (make((n, 2), dt),))],
        _torch_extern_backward_expected),
    "sort": (FLOATS[:2] + INTS, lambda n, make, dt: [(make((n, 3), dt), 0, True)],
             lambda a, d, desc: torch.sort(a, dim=d, descending=desc, stable=True)),
    "topk": (FLOATS[:2], lambda n, make, dt: [(make((n, 5), dt), 2, 1, True),
                                              (make((n, 5), dt), 1, 1, False)],
             lambda a, k, d, largest: torch.topk(a, k, d, largest=largest)),
}

CASES = [
    pytest.param(name, dtype, n, id=f"{name}-{str(dtype).replace('torch.', '')}-{n}")
    for name in sorted(PRIMS)
    if name in PRIM_SAMPLES
    for dtype in PRIM_SAMPLES[name][0]
    for n in SIZES
]


def test_every_prim_has_samples():
    missing = sorted(set(PRIMS) - set(PRIM_SAMPLES))
    assert not missing, f"prims without a row in PRIM_SAMPLES: {missing}"


@pytest.mark.parametrize("name, dtype, n", CASES)
def test_prim_reference_matches_oracle(name, dtype, n):
    _, build, expected = PRIM_SAMPLES[name]
    for args in build(n, RealMaker(seed=n), dtype):
        got, want = PRIMS[name](*args), expected(*args)
        for g, w in zip(flat(got), flat(want), strict=True):
            assert g.shape == w.shape and g.dtype == w.dtype, f"{name}{args}: {g} vs {w}"
            assert close(g, w, dtype), f"{name}: ref\n{g}\n!= oracle\n{w}"


@pytest.mark.parametrize("name, dtype, n", CASES)
def test_prim_meta_matches_real_output_on_symbolic_sizes(name, dtype, n):
    _, build, _ = PRIM_SAMPLES[name]
    real_outputs = [PRIMS[name](*args) for args in build(n, RealMaker(seed=n), dtype)]
    env = ShapeEnv()
    size = symbolic_size(env, n)
    with tracing(MetaTracer(env)):
        metas = [PRIMS[name](*args) for args in build(size, MetaMaker(), dtype)]
    for meta, real in zip(metas, real_outputs, strict=True):
        for m, r in zip(flat(meta), flat(real), strict=True):
            assert isinstance(m, TensorMeta), f"{name}: meta returned {m!r}"
            assert substitute(m, env) == tuple(r.shape), f"{name}: {m} vs {tuple(r.shape)}"
            assert m.dtype == r.dtype, f"{name}: meta dtype {m.dtype} vs real {r.dtype}"
    assert not env.guards, f"{name}: meta recorded guards {[str(g) for g in env.guards]}"


def test_binary_prim_rejects_mismatched_symbolic_shapes():
    env = ShapeEnv()
    s0, s1 = symbolic_size(env, 5), symbolic_size(env, 7)
    with tracing(MetaTracer(env)), pytest.raises(Exception, match="add"):
        ops.add(TensorMeta.contiguous((s0,), torch.float32),
                TensorMeta.contiguous((s1,), torch.float32))


def test_binary_prim_asserts_equal_symbols_at_runtime():
    env = ShapeEnv()
    s0, s1 = symbolic_size(env, 5), symbolic_size(env, 5)
    with tracing(MetaTracer(env)):
        out = ops.mul(TensorMeta.contiguous((s0, 3), torch.float32),
                      TensorMeta.contiguous((s1, 3), torch.float32))
    assert out.shape[1] == 3
    assert [str(a.expr) for a in env.asserts] == ["Eq(s0, s1)"]
    assert not env.guards


def test_binary_prim_rejects_mixed_dtypes():
    from prims import PrimError

    with tracing(MetaTracer(ShapeEnv())), pytest.raises(PrimError, match="one dtype"):
        ops.add(TensorMeta.contiguous((3,), torch.float32),
                TensorMeta.contiguous((3,), torch.float16))


def test_reduction_prim_rejects_negative_dims():
    from prims import PrimError

    with tracing(MetaTracer(ShapeEnv())), pytest.raises(PrimError, match="dims in"):
        ops.sum(TensorMeta.contiguous((2, 3), torch.float32), (-1,))
