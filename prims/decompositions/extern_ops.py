"""The extern op table: torch ops symc calls at run time instead of decomposing (as torch.compile
does for them too): linalg factorizations and solvers, real-output FFTs, special functions.

One row per op: its name, the torch callable, a shape rule over symbolic sizes, which arguments
torch differentiates and notes. Each row registers one decomposition (for the function, its
aliases and its Tensor method) onto the `torch_extern` prim (prims/torch_externs.py), whose VJP
is the `torch_extern_backward` extern (autograd_aot/vjp_extern_rules.py):

    torch.linalg.cholesky(a f32[s0, s0]) -> torch_extern("linalg.cholesky", (a,), (), ((s0, s0),))
    backward: torch_extern_backward("linalg.cholesky", (a,), (), (0,), (g,)) -> (grad_a,)

Complex results (FFTs of real inputs, eig) have rows too: their meta raises a PrimError naming the
complex dtype, so the call is a graph break with that reason, never a wrong answer.
"""

from __future__ import annotations

import inspect

import torch
from torch.utils._pytree import tree_leaves

from prims import ops
from prims.decompositions import extern_shapes as S
from prims.decompositions.registry import DECOMPOSITIONS, register_decomposition
from prims.core import PrimError
from prims.torch_externs import (ExternOp, differentiable_outputs, grad_positions, output_shapes,
                                 register_extern_op)
from prims.trace import TracedTensor

T = torch.Tensor
la = torch.linalg


def histogramdd_flat(*args, **kwargs):
    """torch.histogramdd with its bin edges flattened: (hist, edges_0, edges_1, ...)."""
    hist, edges = torch.histogramdd(*args, **kwargs)
    return (hist, *edges)


sp = torch.special


# --------------------------------------------------------------------------- the table
# (name, torch callable, shape rule, grad_args, aliases and methods, notes)
NONE = ()
ROWS = (
    # special functions (pointwise)
    ("digamma", torch.digamma, S.same, None, (T.digamma, sp.digamma, sp.psi), ""),
    ("lgamma", torch.lgamma, S.same, None, (T.lgamma, sp.gammaln), ""),
    ("erfinv", torch.erfinv, S.same, None, (T.erfinv, sp.erfinv), ""),
    ("i0", torch.i0, S.same, None, (T.i0, sp.i0), ""),
    ("special.i0e", sp.i0e, S.same, None, (), ""),
    ("special.i1", sp.i1, S.same, None, (), ""),
    ("special.i1e", sp.i1e, S.same, None, (), ""),
    ("special.ndtri", sp.ndtri, S.same, None, (), ""),
    ("special.log_ndtr", sp.log_ndtr, S.same, None, (), ""),
    ("special.erfcx", sp.erfcx, S.same, None, (), ""),
    ("polygamma", torch.polygamma, S.second, (1,), (sp.polygamma,), "n is an int"),
    ("mvlgamma", torch.mvlgamma, S.same, (0,), (T.mvlgamma, sp.multigammaln), ""),
    ("igamma", torch.igamma, S.broadcast, (1,), (T.igamma, sp.gammainc),
     "no derivative for input (torch has none): its gradient is zero, where eager raises"),
    ("igammac", torch.igammac, S.broadcast, (1,), (T.igammac, sp.gammaincc),
     "no derivative for input (torch has none): its gradient is zero, where eager raises"),
    ("special.zeta", sp.zeta, S.broadcast, (1,), (), "no derivative for x (torch has none)"),
    ("nextafter", torch.nextafter, S.broadcast, None, (T.nextafter,), ""),
    ("frexp", torch.frexp, S.pair_same, None, (T.frexp,), "(mantissa, int32 exponent)"),
    *((f"special.{name}", getattr(sp, name), S.same, NONE, (), "not differentiable in torch")
      for name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_i0",
                   "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1",
                   "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
                   "spherical_bessel_j0", "airy_ai")),
    *((f"special.{name}", getattr(sp, name), S.broadcast, NONE, (), "not differentiable in torch")
      for name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
                   "chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
                   "laguerre_polynomial_l", "legendre_polynomial_p",
                   "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
                   "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w")),
    # linear algebra
    ("cholesky", torch.cholesky, S.same, None, (T.cholesky,), ""),
    ("cholesky_inverse", torch.cholesky_inverse, S.same, None, (T.cholesky_inverse,), ""),
    ("cholesky_solve", torch.cholesky_solve, S.rhs_first, None, (T.cholesky_solve,), ""),
    ("linalg.cholesky", la.cholesky, S.same, None, (), ""),
    ("linalg.cholesky_ex", la.cholesky_ex, S.with_info(S.same), None, (), ""),
    ("linalg.inv", la.inv, S.same, None, (torch.inverse, T.inverse), ""),
    ("linalg.inv_ex", la.inv_ex, S.with_info(S.same), None, (), ""),
    ("linalg.det", la.det, S.batch_only, None, (torch.det, T.det), ""),
    ("logdet", torch.logdet, S.batch_only, None, (T.logdet,), ""),
    ("linalg.slogdet", la.slogdet, S.pair_batch, None, (torch.slogdet, T.slogdet), ""),
    ("linalg.cond", la.cond, S.batch_only, None, (), ""),
    ("linalg.matrix_rank", la.matrix_rank, S.batch_only, NONE, (), "int64 result"),
    ("linalg.eigh", la.eigh, S.eigh, None, (), ""),
    ("linalg.eigvalsh", la.eigvalsh, S.eigvalsh, None, (), ""),
    ("linalg.eig", la.eig, S.complex_result, None, (), "complex result: a graph break"),
    ("linalg.eigvals", la.eigvals, S.complex_result, None, (), "complex result: a graph break"),
    ("linalg.householder_product", la.householder_product, S.same, None,
     (torch.orgqr, T.orgqr), ""),
    ("linalg.lu", la.lu, S.lu, None, (), ""),
    ("linalg.lu_factor", la.lu_factor, S.lu_factor, None, (), ""),
    ("linalg.lu_factor_ex", la.lu_factor_ex, S.with_info(S.lu_factor), None, (), ""),
    ("linalg.lu_solve", la.lu_solve, S.rhs_last, None, (), ""),
    ("S.lu_with_info", torch._lu_with_info, S.lu_with_info, None, (), "torch.lu calls it"),
    ("lu_solve", torch.lu_solve, S.rhs_first, None, (T.lu_solve,), ""),
    ("lu_unpack", torch.lu_unpack, S.lu_unpack, None, (), ""),
    ("linalg.pinv", la.pinv, S.transposed, None, (torch.pinverse, T.pinverse), ""),
    ("linalg.qr", la.qr, S.qr, None, (), ""),
    ("qr", torch.qr, S.qr_old, None, (T.qr,), ""),
    ("linalg.svd", la.svd, S.svd, None, (), ""),
    ("svd", torch.svd, S.svd_old, None, (T.svd,), ""),
    ("linalg.svdvals", la.svdvals, S.svdvals, None, (), ""),
    ("linalg.lstsq", la.lstsq, S.lstsq, None, (), "driver='gels' only (others: rank-dependent "
     "shapes)"),
    ("linalg.solve", la.solve, S.solve, None, (), ""),
    ("linalg.solve_ex", la.solve_ex, S.with_info(S.solve), None, (), ""),
    ("linalg.solve_triangular", la.solve_triangular, S.rhs_second, None, (), ""),
    ("triangular_solve", torch.triangular_solve, S.triangular_solve, None,
     (T.triangular_solve,), ""),
    ("linalg.tensorinv", la.tensorinv, S.tensorinv, None, (), ""),
    ("linalg.tensorsolve", la.tensorsolve, S.tensorsolve, None, (), ""),
    ("linalg.vander", la.vander, S.vander, None, (), ""),
    ("matrix_exp", torch.matrix_exp, S.same, None, (la.matrix_exp, T.matrix_exp), ""),
    ("ormqr", torch.ormqr, S.rhs_last, None, (T.ormqr,), ""),
    ("geqrf", torch.geqrf, S.geqrf, NONE, (T.geqrf,), "not differentiable in torch"),
    ("linalg.ldl_factor", la.ldl_factor, S.ldl_factor, NONE, (), "not differentiable"),
    ("linalg.ldl_factor_ex", la.ldl_factor_ex, S.with_info(S.ldl_factor), NONE, (), ""),
    ("linalg.ldl_solve", la.ldl_solve, S.rhs_last, NONE, (), "not differentiable"),
    # FFTs with real results (Hermitian inputs); complex results are graph breaks
    ("fft.irfft", torch.fft.irfft, S.irfft, None, (), ""),
    ("fft.irfft2", torch.fft.irfft2, S.irfft2, None, (), ""),
    ("fft.irfftn", torch.fft.irfftn, S.irfftn, None, (), ""),
    ("fft.hfft", torch.fft.hfft, S.irfft, None, (), ""),
    ("fft.hfft2", torch.fft.hfft2, S.irfft2, None, (), ""),
    ("fft.hfftn", torch.fft.hfftn, S.irfftn, None, (), ""),
    ("fft.fftshift", torch.fft.fftshift, S.same, None, (), ""),
    ("stft", torch.stft, S.stft, None, (T.stft,), "return_complex=False only (complex results "
     "are a graph break)"),
    ("fft.ifftshift", torch.fft.ifftshift, S.same, None, (), ""),
    *((f"fft.{name}", getattr(torch.fft, name), S.complex_result, None, (),
       "complex result: a graph break")
      for name in ("fft", "fft2", "fftn", "ifft", "ifft2", "ifftn", "rfft", "rfft2", "rfftn",
                   "ihfft", "ihfft2", "ihfftn")),
    # other ops with no decomposition yet (an extern per call; a decomposition would fuse)
    ("mode", torch.mode, S.mode, None, (T.mode,), "(values, int64 indices)"),
    ("quantile", torch.quantile, S.quantile, None, (T.quantile,), ""),
    ("nanquantile", torch.nanquantile, S.quantile, None, (T.nanquantile,), ""),
    ("histc", torch.histc, S.histc, None, (T.histc,), ""),
    ("histogram", torch.histogram, S.histogram, None, (T.histogram,), ""),
    ("histogramdd", histogramdd_flat, S.histogramdd, NONE, (),
     "torch.histogramdd's nested result flattened (its decomposition nests it again)"),
    ("grid_sampler", torch.grid_sampler, S.grid_sampler, None, (), "F.grid_sample calls it"),
    ("grid_sampler_2d", torch.grid_sampler_2d, S.grid_sampler, None, (), ""),
    ("grid_sampler_3d", torch.grid_sampler_3d, S.grid_sampler, None, (), ""),
    ("_upsample_bilinear2d_aa", torch.ops.aten._upsample_bilinear2d_aa, S.upsample_aa, None,
     (), "output_size given"),
    ("index_reduce", torch.index_reduce, S.like_arg(0), None, (T.index_reduce,), ""),
    ("max_pool2d_with_indices_backward", torch.ops.aten.max_pool2d_with_indices_backward.default,
     S.like_arg(1), None, (), "the grad of max_pool2d's input"),
    ("native_dropout_backward", torch.ops.aten.native_dropout_backward.default, S.like_arg(0),
     None, (), ""),
    ("ctc_loss", torch.ctc_loss, S.ctc_loss, (0,), (), "F.ctc_loss calls it"),
    ("segment_reduce", torch.segment_reduce, S.segment_reduce, (0,), (), ""),
    ("nn.functional.embedding_bag", torch.nn.functional.embedding_bag, S.embedding_bag, None,
     (), "no max_norm (an in-place renorm of the weight)"),
    ("combinations", torch.combinations, S.combinations, None, (), ""),
    ("scatter_reduce", torch.ops.aten.scatter_reduce.two, S.like_arg(0), None, (),
     "reduce amax/amin/prod (scatter.py decomposes sum and mean); torch's VJP splits ties"),
)


def _refuse_untracked_grads(op: ExternOp, args) -> None:
    """An argument that requires grad where torch has no derivative: eager's backward raises, so
    the call runs eagerly (a graph break) instead of compiling to a silent zero gradient."""
    wanted = set(grad_positions(op.name, args))
    for i, arg in enumerate(args):
        if getattr(arg, "requires_grad", False) is True and i not in wanted:
            raise PrimError(f"{op.name}: argument {i} requires grad, but torch has no derivative "
                            "for it (eager's backward raises); the op runs eagerly")


def _tensor_kwargs_positional(op: ExternOp, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """Tensors passed by keyword moved to their positions (with the defaults before them):
    gradients are taken and checked by argument position (F.embedding_bag's
    per_sample_weights= is differentiable)."""
    keys = [k for k, v in kwargs.items() if isinstance(v, TracedTensor | torch.Tensor)]
    if not keys:
        return args, kwargs
    try:
        params = list(inspect.signature(op.fn).parameters.values())
    except (TypeError, ValueError):   # a builtin: no signature to place them by
        return args, kwargs
    names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if not all(k in names for k in keys):
        return args, kwargs
    last = max(names.index(k) for k in keys)
    args, kwargs = list(args), dict(kwargs)
    for param in params[len(args): last + 1]:
        if param.name in kwargs:
            args.append(kwargs.pop(param.name))
        elif param.default is not inspect.Parameter.empty:
            args.append(param.default)
        else:
            break   # a required argument is missing: eager raises on the call as it is
    return tuple(args), kwargs


def _decomposition(op: ExternOp):
    def decompose(*args, **kwargs):
        if "out" in kwargs:
            raise PrimError(f"{op.name}: out= writes a tensor in place; not supported")
        args, kwargs = _tensor_kwargs_positional(op, args, kwargs)
        kwargs = tuple(sorted(kwargs.items()))
        _refuse_untracked_grads(op, args)
        if not any(isinstance(v, TracedTensor) for v in tree_leaves((args, kwargs))):
            return ops.torch_extern(op.name, args, kwargs)  # real tensors: torch's autograd
        out = ops.torch_extern(op.name, args, kwargs, output_shapes(op.name, args, kwargs))
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


def call_extern(name: str, *args, **kwargs):
    """The extern op `name` of the table, called as its decomposition is (for decompositions
    that send some of their cases to torch)."""
    return _DECOMPOSE[name](*args, **kwargs)


_DECOMPOSE = {}
for _name, _fn, _shape, _grads, _aliases, _notes in ROWS:
    _DECOMPOSE[_name] = DECOMPOSITIONS[_fn]


@register_decomposition(torch.histogramdd)
def histogramdd(input, bins=10, *, range=None, weight=None, density=False):
    out = call_extern("histogramdd", input, bins, range=range, weight=weight, density=density)
    return out[0], tuple(out[1:])
