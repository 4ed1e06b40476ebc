"""The extern op table: torch ops symc calls at run time instead of decomposing (as torch.compile
does for them too): linalg factorizations and solvers, real-output FFTs, special functions.

One row per op: its name, the torch callable, a shape rule over symbolic sizes, which arguments
torch differentiates and notes. Each row registers one decomposition (for the function, its
aliases and its Tensor method) onto the `torch_extern` prim (prims/torch_externs.py), whose VJP
is the `torch_extern_backward` extern (autograd_aot/vjp_extern_rules.py):

    torch.linalg.cholesky(a f32[s0, s0]) -> torch_extern("linalg.cholesky", (a,), ())
    backward: torch_extern_backward("linalg.cholesky", (a,), (), (0,), (g,)) -> (grad_a,)

Complex results (FFTs of real inputs, eig) have rows too: their meta raises a PrimError naming the
complex dtype, so the call is a graph break with that reason, never a wrong answer.
"""

from __future__ import annotations

import math

import sympy
import torch
from torch.utils._pytree import tree_leaves

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import is_tensor, shape_of
from prims.decompositions.registry import register_decomposition
from prims.sizes import (as_expr, broadcast_shapes, floordiv, guard_true, normalize_dim,
                          sym_min)
from prims.torch_externs import ExternOp, differentiable_outputs, register_extern_op
from prims.trace import TracedTensor

T = torch.Tensor
la = torch.linalg
sp = torch.special


# --------------------------------------------------------------------------- shape rules
def _same(a, *args, **kwargs):
    """Pointwise on one tensor: its shape."""
    return shape_of(a)


def _broadcast(*args, **kwargs):
    """Pointwise on several operands: the broadcast of the tensor ones."""
    return broadcast_shapes(*(shape_of(v) for v in args if is_tensor(v)))


def _second(n, a, *args, **kwargs):  # polygamma(n, x)
    return shape_of(a)


def _pair_same(a, *args, **kwargs):  # frexp: (mantissa, exponent)
    return [shape_of(a)] * 2


def _batch(a):
    return shape_of(a)[:-2]


def _mn(a):
    m, n = shape_of(a)[-2:]
    return m, n, sym_min(m, n)


def _batch_only(a, *args, **kwargs):  # det, logdet, cond, matrix_rank
    return _batch(a)


def _pair_batch(a, *args, **kwargs):  # slogdet: (sign, logabsdet)
    return [_batch(a), _batch(a)]


def _with_info(rule):
    """`rule`'s shapes and the batch-shaped `info` of the *_ex variants."""
    def shapes(a, *args, **kwargs):
        out = rule(a, *args, **kwargs)
        return [*(out if isinstance(out, list) else [out]), _batch(a)]
    return shapes


def _eigh(a, *args, **kwargs):
    return [(*_batch(a), shape_of(a)[-1]), shape_of(a)]


def _eigvalsh(a, *args, **kwargs):
    return (*_batch(a), shape_of(a)[-1])


def _transposed(a, *args, **kwargs):  # pinv
    m, n, _ = _mn(a)
    return (*_batch(a), n, m)


def _svd(a, full_matrices=True, **kwargs):
    m, n, k = _mn(a)
    b = _batch(a)
    if full_matrices:
        return [(*b, m, m), (*b, k), (*b, n, n)]
    return [(*b, m, k), (*b, k), (*b, k, n)]


def _svd_old(a, some=True, compute_uv=True):  # torch.svd: V, not Vh
    m, n, k = _mn(a)
    b = _batch(a)
    if some or not compute_uv:
        return [(*b, m, k), (*b, k), (*b, n, k)]
    return [(*b, m, m), (*b, k), (*b, n, n)]


def _svdvals(a, **kwargs):
    return (*_batch(a), _mn(a)[2])


def _qr(a, mode="reduced"):
    m, n, k = _mn(a)
    b = _batch(a)
    if mode == "complete":
        return [(*b, m, m), (*b, m, n)]
    return [(0,) if mode == "r" else (*b, m, k), (*b, k, n)]


def _qr_old(a, some=True):
    return _qr(a, "reduced" if some else "complete")


def _lu(a, *, pivot=True, **kwargs):  # linalg.lu and lu_unpack: (P, L, U)
    m, n, k = _mn(a)
    b = _batch(a)
    return [(*b, m, m) if pivot else (0,), (*b, m, k), (*b, k, n)]


def _lu_unpack(lu, pivots, unpack_data=True, unpack_pivots=True):
    if not (unpack_data and unpack_pivots):
        raise PrimError("lu_unpack: unpack_data=False or unpack_pivots=False is not supported")
    return _lu(lu)


def _lu_factor(a, *args, **kwargs):  # (LU, pivots)
    return [shape_of(a), (*_batch(a), _mn(a)[2])]


def _lu_with_info(a, *args, **kwargs):  # torch._lu_with_info: (LU, pivots, info)
    return [*_lu_factor(a), _batch(a)]


def _solve_like(a, b):
    """X of A X = B (or X A = B) with A's and B's batch dims broadcast: B's matrix shape."""
    return (*broadcast_shapes(_batch(a), _batch(b)), *shape_of(b)[-2:])


def _rhs_first(b, a, *args, **kwargs):  # cholesky_solve(B, L), lu_solve(B, LU, piv)
    return _solve_like(a, b)


def _rhs_last(*args, **kwargs):  # ormqr(A, tau, C), ldl_solve(LD, piv, B), lu_solve(LU, piv, B)
    tensors = [v for v in args if is_tensor(v)]
    return _solve_like(tensors[0], tensors[-1])


def _rhs_second(a, b, *args, **kwargs):  # solve_triangular(A, B)
    return _solve_like(a, b)


def _solve(a, b, *, left=True):
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


def _triangular_solve(b, a, *args, **kwargs):  # (solution, cloned coefficient)
    batch = broadcast_shapes(_batch(a), _batch(b))
    return [(*batch, *shape_of(b)[-2:]), (*batch, *shape_of(a)[-2:])]


def _geqrf(a):
    return [shape_of(a), (*_batch(a), _mn(a)[2])]


def _ldl_factor(a, *, hermitian=False):
    return [shape_of(a), shape_of(a)[:-1]]


def _tensorinv(a, ind=2):
    s = shape_of(a)
    return (*s[ind:], *s[:ind])


def _tensorsolve(a, b, dims=None):
    s = list(shape_of(a))
    if dims is not None:
        moved = [normalize_dim(d, len(s)) for d in dims]
        s = [x for i, x in enumerate(s) if i not in moved] + [s[i] for i in moved]
    return tuple(s[len(shape_of(b)):])


def _vander(x, *, N=None):
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


def _irfft(a, n=None, dim=-1, norm=None):
    return _c2r(a, None, _fft_dims(a, None if n is None else [n], dim))


def _irfft2(a, s=None, dim=(-2, -1), norm=None):
    return _c2r(a, s, _fft_dims(a, s, dim))


def _irfftn(a, s=None, dim=None, norm=None):
    return _c2r(a, s, _fft_dims(a, s, dim))


def _complex(*args, **kwargs):
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


def _mode(a, dim=-1, keepdim=False):  # (values, int64 indices)
    return [_reduced(a, dim, keepdim)] * 2


def _quantile(a, q, dim=None, keepdim=False, *, interpolation="linear"):
    out = _reduced(a, dim, keepdim)
    if is_tensor(q) and len(shape_of(q)) == 1:
        return (shape_of(q)[0], *out)
    return out


def _histc(a, bins=100, min=0, max=0):
    return (bins,)


def _histogram(a, bins, *, range=None, weight=None, density=False):  # (hist, bin_edges)
    if is_tensor(bins):
        return [(shape_of(bins)[0] - 1,), shape_of(bins)]
    return [(bins,), (bins + 1,)]


def _grid_sampler(a, grid, *args, **kwargs):  # (N, C, *grid's spatial dims)
    return (shape_of(a)[0], shape_of(a)[1], *shape_of(grid)[1:-1])


def _upsample_aa(a, output_size, align_corners, scale_factors=None):
    if output_size is None:
        raise PrimError("_upsample_bilinear2d_aa: scale_factors without output_size is not "
                        "supported")
    return (*shape_of(a)[:2], *output_size)


def _like_arg(i):
    def shape(*args, **kwargs):
        return shape_of(args[i])
    return shape


def _ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=1,
              zero_infinity=False):
    batched = len(shape_of(log_probs)) == 3
    return (shape_of(log_probs)[1],) if reduction == 0 and batched else ()


def _segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
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


def _combinations(a, r=2, with_replacement=False):
    """(C, r) with C = binom(n, r), or binom(n + r - 1, r) with replacement (0 when n < r)."""
    if r < 1:
        raise PrimError(f"combinations: r={r} gives an empty result; not supported")
    n = as_expr(shape_of(a)[0]) + (r - 1 if with_replacement else 0)
    count = sympy.Integer(1)
    for i in range(r):
        count = count * (n - i)
    return (floordiv(count, math.factorial(r)) if r > 1 else n, r)


# --------------------------------------------------------------------------- the table
# (name, torch callable, shape rule, grad_args, aliases and methods, notes)
NONE = ()
ROWS = (
    # special functions (pointwise)
    ("digamma", torch.digamma, _same, None, (T.digamma, sp.digamma, sp.psi), ""),
    ("lgamma", torch.lgamma, _same, None, (T.lgamma, sp.gammaln), ""),
    ("erfinv", torch.erfinv, _same, None, (T.erfinv, sp.erfinv), ""),
    ("i0", torch.i0, _same, None, (T.i0, sp.i0), ""),
    ("special.i0e", sp.i0e, _same, None, (), ""),
    ("special.i1", sp.i1, _same, None, (), ""),
    ("special.i1e", sp.i1e, _same, None, (), ""),
    ("special.ndtri", sp.ndtri, _same, None, (), ""),
    ("special.log_ndtr", sp.log_ndtr, _same, None, (), ""),
    ("special.erfcx", sp.erfcx, _same, None, (), ""),
    ("polygamma", torch.polygamma, _second, (1,), (sp.polygamma,), "n is an int"),
    ("mvlgamma", torch.mvlgamma, _same, (0,), (T.mvlgamma, sp.multigammaln), ""),
    ("igamma", torch.igamma, _broadcast, (1,), (T.igamma, sp.gammainc),
     "no derivative for input (torch has none): its gradient is zero, where eager raises"),
    ("igammac", torch.igammac, _broadcast, (1,), (T.igammac, sp.gammaincc),
     "no derivative for input (torch has none): its gradient is zero, where eager raises"),
    ("special.zeta", sp.zeta, _broadcast, (1,), (), "no derivative for x (torch has none)"),
    ("nextafter", torch.nextafter, _broadcast, None, (T.nextafter,), ""),
    ("frexp", torch.frexp, _pair_same, None, (T.frexp,), "(mantissa, int32 exponent)"),
    *((f"special.{name}", getattr(sp, name), _same, NONE, (), "not differentiable in torch")
      for name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
                   "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
                   "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                   "spherical_bessel_j0", "airy_ai")),
    *((f"special.{name}", getattr(sp, name), _broadcast, NONE, (), "not differentiable in torch")
      for name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                   "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
                   "laguerre_polynomial_l", "legendre_polynomial_p",
                   "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                   "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w")),
    # linear algebra
    ("cholesky", torch.cholesky, _same, None, (T.cholesky,), ""),
    ("cholesky_inverse", torch.cholesky_inverse, _same, None, (T.cholesky_inverse,), ""),
    ("cholesky_solve", torch.cholesky_solve, _rhs_first, None, (T.cholesky_solve,), ""),
    ("linalg.cholesky", la.cholesky, _same, None, (), ""),
    ("linalg.cholesky_ex", la.cholesky_ex, _with_info(_same), None, (), ""),
    ("linalg.inv", la.inv, _same, None, (torch.inverse, T.inverse), ""),
    ("linalg.inv_ex", la.inv_ex, _with_info(_same), None, (), ""),
    ("linalg.det", la.det, _batch_only, None, (torch.det, T.det), ""),
    ("logdet", torch.logdet, _batch_only, None, (T.logdet,), ""),
    ("linalg.slogdet", la.slogdet, _pair_batch, None, (torch.slogdet, T.slogdet), ""),
    ("linalg.cond", la.cond, _batch_only, None, (), ""),
    ("linalg.matrix_rank", la.matrix_rank, _batch_only, NONE, (), "int64 result"),
    ("linalg.eigh", la.eigh, _eigh, None, (), ""),
    ("linalg.eigvalsh", la.eigvalsh, _eigvalsh, None, (), ""),
    ("linalg.eig", la.eig, _complex, None, (), "complex result: a graph break"),
    ("linalg.eigvals", la.eigvals, _complex, None, (), "complex result: a graph break"),
    ("linalg.householder_product", la.householder_product, _same, None,
     (torch.orgqr, T.orgqr), ""),
    ("linalg.lu", la.lu, _lu, None, (), ""),
    ("linalg.lu_factor", la.lu_factor, _lu_factor, None, (), ""),
    ("linalg.lu_factor_ex", la.lu_factor_ex, _with_info(_lu_factor), None, (), ""),
    ("linalg.lu_solve", la.lu_solve, _rhs_last, None, (), ""),
    ("_lu_with_info", torch._lu_with_info, _lu_with_info, None, (), "torch.lu calls it"),
    ("lu_solve", torch.lu_solve, _rhs_first, None, (T.lu_solve,), ""),
    ("lu_unpack", torch.lu_unpack, _lu_unpack, None, (), ""),
    ("linalg.pinv", la.pinv, _transposed, None, (torch.pinverse, T.pinverse), ""),
    ("linalg.qr", la.qr, _qr, None, (), ""),
    ("qr", torch.qr, _qr_old, None, (T.qr,), ""),
    ("linalg.svd", la.svd, _svd, None, (), ""),
    ("svd", torch.svd, _svd_old, None, (T.svd,), ""),
    ("linalg.svdvals", la.svdvals, _svdvals, None, (), ""),
    ("linalg.solve", la.solve, _solve, None, (), ""),
    ("linalg.solve_ex", la.solve_ex, _with_info(_solve), None, (), ""),
    ("linalg.solve_triangular", la.solve_triangular, _rhs_second, None, (), ""),
    ("triangular_solve", torch.triangular_solve, _triangular_solve, None,
     (T.triangular_solve,), ""),
    ("linalg.tensorinv", la.tensorinv, _tensorinv, None, (), ""),
    ("linalg.tensorsolve", la.tensorsolve, _tensorsolve, None, (), ""),
    ("linalg.vander", la.vander, _vander, None, (), ""),
    ("matrix_exp", torch.matrix_exp, _same, None, (la.matrix_exp, T.matrix_exp), ""),
    ("ormqr", torch.ormqr, _rhs_last, None, (T.ormqr,), ""),
    ("geqrf", torch.geqrf, _geqrf, NONE, (T.geqrf,), "not differentiable in torch"),
    ("linalg.ldl_factor", la.ldl_factor, _ldl_factor, NONE, (), "not differentiable"),
    ("linalg.ldl_factor_ex", la.ldl_factor_ex, _with_info(_ldl_factor), NONE, (), ""),
    ("linalg.ldl_solve", la.ldl_solve, _rhs_last, NONE, (), "not differentiable"),
    # FFTs with real results (Hermitian inputs); complex results are graph breaks
    ("fft.irfft", torch.fft.irfft, _irfft, None, (), ""),
    ("fft.irfft2", torch.fft.irfft2, _irfft2, None, (), ""),
    ("fft.irfftn", torch.fft.irfftn, _irfftn, None, (), ""),
    ("fft.hfft", torch.fft.hfft, _irfft, None, (), ""),
    ("fft.hfft2", torch.fft.hfft2, _irfft2, None, (), ""),
    ("fft.hfftn", torch.fft.hfftn, _irfftn, None, (), ""),
    ("fft.fftshift", torch.fft.fftshift, _same, None, (), ""),
    ("fft.ifftshift", torch.fft.ifftshift, _same, None, (), ""),
    *((f"fft.{name}", getattr(torch.fft, name), _complex, None, (),
       "complex result: a graph break")
      for name in ("fft", "fft2", "fftn", "ifft", "ifft2", "ifftn", "rfft", "rfft2", "rfftn",
                   "ihfft", "ihfft2", "ihfftn")),
    # other ops with no decomposition yet (an extern per call; a decomposition would fuse)
    ("mode", torch.mode, _mode, None, (T.mode,), "(values, int64 indices)"),
    ("quantile", torch.quantile, _quantile, None, (T.quantile,), ""),
    ("nanquantile", torch.nanquantile, _quantile, None, (T.nanquantile,), ""),
    ("histc", torch.histc, _histc, None, (T.histc,), ""),
    ("histogram", torch.histogram, _histogram, None, (T.histogram,), ""),
    ("grid_sampler", torch.grid_sampler, _grid_sampler, None, (), "F.grid_sample calls it"),
    ("grid_sampler_2d", torch.grid_sampler_2d, _grid_sampler, None, (), ""),
    ("grid_sampler_3d", torch.grid_sampler_3d, _grid_sampler, None, (), ""),
    ("_upsample_bilinear2d_aa", torch.ops.aten._upsample_bilinear2d_aa, _upsample_aa, None,
     (), "output_size given"),
    ("index_reduce", torch.index_reduce, _like_arg(0), None, (T.index_reduce,), ""),
    ("max_pool2d_with_indices_backward", torch.ops.aten.max_pool2d_with_indices_backward.default,
     _like_arg(1), None, (), "the grad of max_pool2d's input"),
    ("native_dropout_backward", torch.ops.aten.native_dropout_backward.default, _like_arg(0),
     None, (), ""),
    ("ctc_loss", torch.ctc_loss, _ctc_loss, (0,), (), "F.ctc_loss calls it"),
    ("segment_reduce", torch.segment_reduce, _segment_reduce, (0,), (), ""),
    ("combinations", torch.combinations, _combinations, None, (), ""),
)


def _decomposition(op: ExternOp):
    def decompose(*args, **kwargs):
        kwargs = tuple(sorted(kwargs.items()))
        out = ops.torch_extern(op.name, args, kwargs)
        if not any(isinstance(v, TracedTensor) for v in tree_leaves((args, kwargs))):
            return out  # real tensors: torch's autograd already ran
        # outputs eager's autograd does not track (lu's P, ints, ops with no derivative) get a
        # stop_gradient, so they never require grad nor take a cotangent
        flags = differentiable_outputs(op.name, args, kwargs)
        outs = tuple(o if keep or not o.dtype.is_floating_point else ops.stop_gradient(o)
                     for o, keep in zip(out if isinstance(out, tuple) else (out,), flags))
        return outs if isinstance(out, tuple) else outs[0]

    decompose.__name__ = op.name.replace(".", "_")
    return decompose


for _name, _fn, _shape, _grads, _aliases, _notes in ROWS:
    _op = register_extern_op(ExternOp(_name, _fn, _shape, _grads, _notes))
    register_decomposition(_fn, *_aliases)(_decomposition(_op))
