"""Shape rules of the extern op table (prims/decompositions/extern_ops.py): each takes the op's
arguments as TensorMetas (sizes symbolic) and returns the output shape, or a list of shapes for an
op returning a tuple. torch_extern's meta checks them against torch's meta kernel at the example
sizes (prims/torch_externs.py).

    svd(a f32[s0, s1], full_matrices=False)
        -> [(s0, Min(s0, s1)), (Min(s0, s1),), (Min(s0, s1), s1)]
"""

from __future__ import annotations

import math

import sympy

from prims.core import PrimError
from prims.decompositions.common import is_tensor, shape_of
from prims.sizes import (as_expr, broadcast_shapes, floordiv, guard_true, normalize_dim,
                          sym_min)


def same(a, *args, **kwargs):
    """Pointwise on one tensor: its shape."""
    return shape_of(a)


def broadcast(*args, **kwargs):
    """Pointwise on several operands: the broadcast of the tensor ones."""
    return broadcast_shapes(*(shape_of(v) for v in args if is_tensor(v)))


def second(n, a, *args, **kwargs):  # polygamma(n, x)
    return shape_of(a)


def pair_same(a, *args, **kwargs):  # frexp: (mantissa, exponent)
    return [shape_of(a)] * 2


def _batch(a):
    return shape_of(a)[:-2]


def _mn(a):
    m, n = shape_of(a)[-2:]
    return m, n, sym_min(m, n)


def batch_only(a, *args, **kwargs):  # det, logdet, cond, matrix_rank
    return _batch(a)


def pair_batch(a, *args, **kwargs):  # slogdet: (sign, logabsdet)
    return [_batch(a), _batch(a)]


def with_info(rule):
    """`rule`'s shapes and the batch-shaped `info` of the *_ex variants."""
    def shapes(a, *args, **kwargs):
        out = rule(a, *args, **kwargs)
        return [*(out if isinstance(out, list) else [out]), _batch(a)]
    return shapes


def eigh(a, *args, **kwargs):
    return [(*_batch(a), shape_of(a)[-1]), shape_of(a)]


def eigvalsh(a, *args, **kwargs):
    return (*_batch(a), shape_of(a)[-1])


def transposed(a, *args, **kwargs):  # pinv
    m, n, _ = _mn(a)
    return (*_batch(a), n, m)


def svd(a, full_matrices=True, **kwargs):
    m, n, k = _mn(a)
    b = _batch(a)
    if full_matrices:
        return [(*b, m, m), (*b, k), (*b, n, n)]
    return [(*b, m, k), (*b, k), (*b, k, n)]


def svd_old(a, some=True, compute_uv=True):  # torch.svd: V, not Vh
    m, n, k = _mn(a)
    b = _batch(a)
    if some or not compute_uv:
        return [(*b, m, k), (*b, k), (*b, n, k)]
    return [(*b, m, m), (*b, k), (*b, n, n)]


def svdvals(a, **kwargs):
    return (*_batch(a), _mn(a)[2])


def qr(a, mode="reduced"):
    m, n, k = _mn(a)
    b = _batch(a)
    if mode == "complete":
        return [(*b, m, m), (*b, m, n)]
    return [(0,) if mode == "r" else (*b, m, k), (*b, k, n)]


def qr_old(a, some=True):
    return qr(a, "reduced" if some else "complete")


def lu(a, *, pivot=True, **kwargs):  # linalg.lu and lu_unpack: (P, L, U)
    m, n, k = _mn(a)
    b = _batch(a)
    return [(*b, m, m) if pivot else (0,), (*b, m, k), (*b, k, n)]


def lu_unpack(lu_data, pivots, unpack_data=True, unpack_pivots=True):
    if not (unpack_data and unpack_pivots):
        raise PrimError("lu_unpack: unpack_data=False or unpack_pivots=False is not supported")
    return lu(lu_data)


def lu_factor(a, *args, **kwargs):  # (LU, pivots)
    return [shape_of(a), (*_batch(a), _mn(a)[2])]


def lu_with_info(a, *args, **kwargs):  # torch._lu_with_info: (LU, pivots, info)
    return [*lu_factor(a), _batch(a)]


def _solve_like(a, b):
    """X of A X = B (or X A = B) with A's and B's batch dims broadcast: B's matrix shape."""
    return (*broadcast_shapes(_batch(a), _batch(b)), *shape_of(b)[-2:])


def rhs_first(b, a, *args, **kwargs):  # cholesky_solve(B, L), lu_solve(B, LU, piv)
    return _solve_like(a, b)


def rhs_last(*args, **kwargs):  # ormqr(A, tau, C), ldl_solve(LD, piv, B), linalg.lu_solve
    tensors = [v for v in args if is_tensor(v)]
    return _solve_like(tensors[0], tensors[-1])


def rhs_second(a, b, *args, **kwargs):  # solve_triangular(A, B)
    return _solve_like(a, b)


def solve(a, b, *, left=True):
    """linalg.solve: B is a batch of vectors when 1-D, or when its shape is A's minus the last
    dim (torch's rule; the size equality is decided with a guard)."""
    sa, sb = shape_of(a), shape_of(b)
    vector = len(sb) == 1 or (len(sb) == len(sa) - 1 and all(
        guard_true(_eq(x, y), "linalg.solve: vector right-hand side")
        for x, y in zip(sb, sa[:-1])))
    if vector:
        return (*broadcast_shapes(_batch(a), sb[:-1]), sb[-1])
    return _solve_like(a, b)


def _eq(x, y):
    return sympy.Eq(as_expr(x), as_expr(y))


def triangular_solve(b, a, *args, **kwargs):  # (solution, cloned coefficient)
    batch = broadcast_shapes(_batch(a), _batch(b))
    return [(*batch, *shape_of(b)[-2:]), (*batch, *shape_of(a)[-2:])]


def geqrf(a):
    return [shape_of(a), (*_batch(a), _mn(a)[2])]


def ldl_factor(a, *, hermitian=False):
    return [shape_of(a), shape_of(a)[:-1]]


def tensorinv(a, ind=2):
    s = shape_of(a)
    return (*s[ind:], *s[:ind])


def tensorsolve(a, b, dims=None):
    s = list(shape_of(a))
    if dims is not None:
        moved = [normalize_dim(d, len(s)) for d in dims]
        s = [x for i, x in enumerate(s) if i not in moved] + [s[i] for i in moved]
    return tuple(s[len(shape_of(b)):])


def vander(x, *, N=None):
    s = shape_of(x) or (1,)  # a 0-dim x is one point
    return (*s, s[-1] if N is None else N)


def _fft_dims(a, s, dim):
    """The dims an n-dimensional FFT transforms and their output lengths (None: unchanged)."""
    ndim = len(shape_of(a))
    if dim is None:
        dims = list(range(ndim)) if s is None else list(range(ndim - len(s), ndim))
    else:
        dims = [normalize_dim(d, ndim) for d in ([dim] if isinstance(dim, int) else dim)]
    sizes = [None] * len(dims) if s is None else list(s)
    return dims, sizes


def _c2r(a, s, dims):
    """Real output of a Hermitian FFT: the last dim's length is s[-1] or 2 * (n - 1)."""
    out = list(shape_of(a))
    dims, sizes = dims
    for d, n in zip(dims, sizes):
        if n is not None and n != -1:
            out[d] = n
    last, n = dims[-1], sizes[-1]
    if n is None or n == -1:
        out[last] = 2 * (shape_of(a)[last] - 1)
    return tuple(out)


def irfft(a, n=None, dim=-1, norm=None):
    return _c2r(a, None, _fft_dims(a, None if n is None else [n], dim))


def irfft2(a, s=None, dim=(-2, -1), norm=None):
    return _c2r(a, s, _fft_dims(a, s, dim))


def irfftn(a, s=None, dim=None, norm=None):
    return _c2r(a, s, _fft_dims(a, s, dim))


def complex_result(*args, **kwargs):
    raise PrimError("unreachable: a complex result is refused before its shape rule")


def _reduced(a, dim, keepdim):
    """The shape of a reduction of `a` over `dim` (None: every dim)."""
    s = list(shape_of(a))
    if dim is None:
        return tuple(1 for _ in s) if keepdim else ()
    if not s:
        return ()
    d = normalize_dim(dim, len(s))
    if keepdim:
        s[d] = 1
    else:
        del s[d]
    return tuple(s)


def mode(a, dim=-1, keepdim=False):  # (values, int64 indices)
    return [_reduced(a, dim, keepdim)] * 2


def quantile(a, q, dim=None, keepdim=False, *, interpolation="linear"):
    out = _reduced(a, dim, keepdim)
    if is_tensor(q) and len(shape_of(q)) == 1:
        return (shape_of(q)[0], *out)
    return out


def histc(a, bins=100, min=0, max=0):
    return (bins,)


def histogram(a, bins, *, range=None, weight=None, density=False):  # (hist, bin_edges)
    if is_tensor(bins):
        return [(shape_of(bins)[0] - 1,), shape_of(bins)]
    return [(bins,), (bins + 1,)]


def grid_sampler(a, grid, *args, **kwargs):  # (N, C, *grid's spatial dims)
    return (shape_of(a)[0], shape_of(a)[1], *shape_of(grid)[1:-1])


def upsample_aa(a, output_size, align_corners, scale_factors=None):
    """output_size, or floor(size * scale) per spatial dim (F.interpolate's rule)."""
    from prims.decompositions.interpolate import output_sizes

    return (*shape_of(a)[:2], *output_sizes(a, 2, output_size, scale_factors)[0])


def like_arg(i):
    def shape(*args, **kwargs):
        return shape_of(args[i])
    return shape


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
              zero_infinity=False):
    batched = len(shape_of(log_probs)) == 3
    return (shape_of(log_probs)[1],) if reduction == 0 and batched else ()


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                    unsafe=False, initial=None):
    if lengths is not None:
        segments = shape_of(lengths)[-1]
    elif offsets is not None:
        segments = shape_of(offsets)[-1] - 1
    else:
        raise PrimError("segment_reduce: expected lengths or offsets")
    s = shape_of(data)
    axis = normalize_dim(axis, len(s))
    return (*s[:axis], segments, *s[axis + 1:])


def combinations(a, r=2, with_replacement=False):
    """(C, r) with C = binom(n, r), or binom(n + r - 1, r) with replacement (0 when n < r)."""
    if r < 1:
        raise PrimError(f"combinations: r={r} gives an empty result; not supported")
    n = as_expr(shape_of(a)[0]) + (r - 1 if with_replacement else 0)
    count = sympy.Integer(1)
    for i in range(r):
        count = count * (n - i)
    return (floordiv(count, math.factorial(r)) if r > 1 else n, r)


def lstsq(a, b, rcond=None, *, driver=None):
    """(solution, residuals, rank, singular_values) of the 'gels' driver: residuals (*, k) when
    m > n (a guard), else empty; the other drivers give rank-dependent shapes (data): refused."""
    if driver != "gels":
        raise PrimError(f"linalg.lstsq: driver={driver!r} gives residuals only for full-rank "
                        "inputs (a data-dependent shape); symc compiles driver='gels'")
    if len(shape_of(b)) < 2 or len(shape_of(b)) == len(shape_of(a)) - 1:
        raise PrimError("linalg.lstsq: a vector right-hand side is not supported")
    m, n, _ = _mn(a)
    batch = broadcast_shapes(_batch(a), _batch(b))
    k = shape_of(b)[-1]
    tall = guard_true(sympy.Gt(as_expr(m), as_expr(n)), "linalg.lstsq: residuals when m > n")
    return [(*batch, n, k), (*batch, k) if tall else (0,), (0,), (0,)]


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2.0,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """F.embedding_bag: one row of weight's width per bag (offsets' length, less one with
    include_last_offset; a 2-D input's rows)."""
    if max_norm is not None:
        raise PrimError("embedding_bag: max_norm renormalizes the weight in place; not "
                        "supported")
    if len(shape_of(input)) == 2:
        bags = shape_of(input)[0]
    elif offsets is None:
        raise PrimError("embedding_bag: a 1-D input needs offsets")
    else:
        bags = as_expr(shape_of(offsets)[0]) - (1 if include_last_offset else 0)
    return (bags, shape_of(weight)[1])


def histogramdd(input, bins, range=None, weight=None, density=False):
    """(hist, *bin_edges) of histogramdd_flat: D = input's last size (specialised: the
    histogram's rank), `bins` counts per dim (an int for all) or edge tensors (len - 1 bins)."""
    from prims.decompositions.shapes import guard_int

    dims = guard_int(shape_of(input)[-1])
    if isinstance(bins, int):
        bins = (bins,) * dims
    if len(bins) != dims:
        raise PrimError(f"histogramdd: expected {dims} bin counts or edge tensors, found "
                        f"{len(bins)}")
    counts = tuple(as_expr(shape_of(b)[0]) - 1 if is_tensor(b) else as_expr(b) for b in bins)
    return [counts, *((c + 1,) for c in counts)]


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None):
    """Real-output stft (return_complex=False; complex results are refused by the meta before
    this rule): (*batch, frequencies, frames, 2)."""
    *batch, length = shape_of(input)
    length = as_expr(length) + (2 * (n_fft // 2) if center else 0)
    hop = n_fft // 4 if hop_length is None else hop_length
    frames = 1 + floordiv(length - n_fft, hop)
    freqs = n_fft if onesided is False else n_fft // 2 + 1
    return (*batch, freqs, frames, 2)
