"""VJP rules: one per prim, written with prims, so the backward graph is itself a prims graph.

A rule is `rule(args, out, g) -> grads`: `args` are the forward node's positional arguments
(TracedTensors, scalars, sympy sizes, tuples), `out` its output (a TracedTensor, or a tuple for
multi-output prims), `g` the output cotangent (a tuple with None holes for multi-output prims).
It returns one entry per argument: a cotangent of that argument's shape and dtype, None where
nothing flows (scalars, indices, non-differentiable prims), or a tuple for a tuple argument (cat).

    mul(a, b), g  ->  (mul(g, b), mul(g, a))
    sum(a[s0, s1], (1,)), g[s0]  ->  broadcast_in_dim(g, (s0, s1), (0,))
"""

from __future__ import annotations

import math
from collections.abc import Callable

import sympy
import torch

from autograd_aot.errors import AutogradError
from prims import PRIMS, Prim, TracedTensor, ops
from prims.core import prim_op
from prims.sizes import analyzer, as_expr, prod

VJP_RULES: dict[Prim, Callable] = {}


def register_vjp(name, rule: Callable) -> None:
    """`rule` is the VJP of prim `name` (a PrimOp or its name; any other name is a PrimError)."""
    VJP_RULES[PRIMS[prim_op(name, "autograd_aot/vjp_rules.py")]] = rule


def vjp_rule_for(prim) -> Callable:
    """The VJP rule of `prim`; a missing one raises AutogradError naming this table."""
    rule = VJP_RULES.get(prim)
    if rule is None:
        name = getattr(prim, "name", repr(prim))
        raise AutogradError(f"no VJP rule for prim {name!r}; add one to autograd_aot/vjp_rules.py")
    return rule


# --------------------------------------------------------------------------- helpers
def is_tensor(value) -> bool:
    return isinstance(value, TracedTensor)


def zeros(shape, dtype, device):
    value = 0.0 if dtype.is_floating_point or dtype.is_complex else 0
    return ops.full(tuple(shape), value, dtype, device)


def expand_reduced(g, shape, dims):
    """Broadcast a reduction's cotangent (dims dropped) back to the input `shape`."""
    kept = tuple(i for i in range(len(shape)) if i not in dims)
    return ops.broadcast_in_dim(g, tuple(shape), kept)


def sum_to_shape(x, shape):
    """Sum `x` down to `shape` (torch broadcasting in reverse: leading dims, literal-1 dims)."""
    lead = x.ndim - len(shape)
    dims = [i for i in range(lead)]
    dims += [lead + i for i, s in enumerate(shape)
             if as_expr(s) == 1 and as_expr(x.shape[lead + i]) != 1]
    if not dims:
        return x
    return ops.reshape(ops.sum(x, tuple(dims)), tuple(shape))


def _sq(x):
    return ops.mul(x, x) if is_tensor(x) else x * x


def _none(args):
    return (None,) * len(args)


# --------------------------------------------------------------------------- no gradient
def _no_grad_vjp(args, out, g):
    return _none(args)


for _name in ("sign", "floor", "ceil", "round", "trunc", "logical_not", "bitwise_not", "isnan",
              "isinf", "floor_divide", "eq", "ne", "lt", "le", "gt", "ge", "logical_and",
              "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor", "any",
              "all", "argmax", "argmin", "iota", "full", "philox_rand", "stop_gradient"):
    register_vjp(_name, _no_grad_vjp)


# --------------------------------------------------------------------------- unary
def _abs_vjp(args, out, g):
    return (ops.mul(g, ops.sign(args[0])),)


register_vjp("abs", _abs_vjp)


def _neg_vjp(args, out, g):
    return (ops.neg(g),)


register_vjp("neg", _neg_vjp)


def _exp_vjp(args, out, g):
    return (ops.mul(g, out),)


register_vjp("exp", _exp_vjp)


def _exp2_vjp(args, out, g):
    return (ops.mul(ops.mul(g, out), math.log(2.0)),)


register_vjp("exp2", _exp2_vjp)


def _log_vjp(args, out, g):
    return (ops.div(g, args[0]),)


register_vjp("log", _log_vjp)


def _log2_vjp(args, out, g):
    return (ops.div(g, ops.mul(args[0], math.log(2.0))),)


register_vjp("log2", _log2_vjp)


def _log1p_vjp(args, out, g):
    return (ops.div(g, ops.add(args[0], 1.0)),)


register_vjp("log1p", _log1p_vjp)


def _expm1_vjp(args, out, g):
    return (ops.mul(g, ops.add(out, 1.0)),)


register_vjp("expm1", _expm1_vjp)


def _sqrt_vjp(args, out, g):
    return (ops.div(g, ops.mul(out, 2.0)),)


register_vjp("sqrt", _sqrt_vjp)


def _rsqrt_vjp(args, out, g):
    # d/da a^-1/2 = -1/2 a^-3/2 = -1/2 out^3
    return (ops.mul(g, ops.mul(ops.mul(_sq(out), out), -0.5)),)


register_vjp("rsqrt", _rsqrt_vjp)


def _sin_vjp(args, out, g):
    return (ops.mul(g, ops.cos(args[0])),)


register_vjp("sin", _sin_vjp)


def _cos_vjp(args, out, g):
    return (ops.neg(ops.mul(g, ops.sin(args[0]))),)


register_vjp("cos", _cos_vjp)


def _tan_vjp(args, out, g):
    return (ops.mul(g, ops.add(_sq(out), 1.0)),)


register_vjp("tan", _tan_vjp)


def _tanh_vjp(args, out, g):
    return (ops.mul(g, ops.sub(1.0, _sq(out))),)


register_vjp("tanh", _tanh_vjp)


def _erf_vjp(args, out, g):
    a = args[0]
    return (ops.mul(g, ops.mul(ops.exp(ops.neg(_sq(a))), 2.0 / math.sqrt(math.pi))),)


register_vjp("erf", _erf_vjp)


def _sigmoid_vjp(args, out, g):
    return (ops.mul(g, ops.mul(out, ops.sub(1.0, out))),)


register_vjp("sigmoid", _sigmoid_vjp)


def _reciprocal_vjp(args, out, g):
    return (ops.neg(ops.mul(g, _sq(out))),)


register_vjp("reciprocal", _reciprocal_vjp)


# --------------------------------------------------------------------------- binary
def _add_vjp(args, out, g):
    a, b = args
    return (g if is_tensor(a) else None, g if is_tensor(b) else None)


register_vjp("add", _add_vjp)


def _sub_vjp(args, out, g):
    a, b = args
    return (g if is_tensor(a) else None, ops.neg(g) if is_tensor(b) else None)


register_vjp("sub", _sub_vjp)


def _mul_vjp(args, out, g):
    a, b = args
    return (ops.mul(g, b) if is_tensor(a) else None, ops.mul(g, a) if is_tensor(b) else None)


register_vjp("mul", _mul_vjp)


def _div_vjp(args, out, g):
    a, b = args
    da = ops.div(g, b) if is_tensor(a) else None
    db = ops.neg(ops.div(ops.mul(g, out), b)) if is_tensor(b) else None  # -g a / b^2
    return da, db


register_vjp("div", _div_vjp)


def _pow_vjp(args, out, g):
    a, b = args
    da = db = None
    if is_tensor(a):
        exponent = ops.sub(b, 1.0) if is_tensor(b) else as_expr(b) - 1
        da = ops.mul(ops.mul(g, b), ops.pow(a, exponent))
    if is_tensor(b):
        if is_tensor(a):
            # 0 ** b has exponent-gradient 0 (torch's convention), not 0 * log(0) = nan
            log_a = ops.where(ops.eq(a, 0.0), 0.0, ops.log(a))
        else:
            base = float(a)
            if base <= 0:
                raise AutogradError(f"pow: the exponent's gradient needs a positive scalar "
                                    f"base, found {a}")
            log_a = math.log(base)
        db = ops.mul(ops.mul(g, out), log_a)
    return da, db


register_vjp("pow", _pow_vjp)


def _extremum_vjp(loses):
    def rule(args, out, g):
        a, b = args
        # ties split the gradient evenly, like torch
        half = ops.where(ops.eq(a, b), ops.mul(g, 0.5), g)
        da = ops.where(loses(a, b), 0.0, half) if is_tensor(a) else None
        db = ops.where(loses(b, a), 0.0, half) if is_tensor(b) else None
        return da, db

    return rule


register_vjp("maximum", _extremum_vjp(ops.lt))
register_vjp("minimum", _extremum_vjp(ops.gt))


def _atan2_vjp(args, out, g):
    a, b = args
    denom = ops.add(_sq(a), _sq(b)) if is_tensor(a) else ops.add(_sq(b), _sq(a))
    scaled = ops.div(g, denom)
    da = ops.mul(scaled, b) if is_tensor(a) else None
    db = ops.neg(ops.mul(scaled, a)) if is_tensor(b) else None
    return da, db


register_vjp("atan2", _atan2_vjp)


def _remainder_vjp(args, out, g):
    a, b = args
    da = g if is_tensor(a) else None
    db = ops.neg(ops.mul(g, ops.floor(ops.div(a, b)))) if is_tensor(b) else None
    return da, db


register_vjp("remainder", _remainder_vjp)


def _where_vjp(args, out, g):
    cond, a, b = args
    da = ops.where(cond, g, 0.0) if is_tensor(a) else None
    db = ops.where(cond, 0.0, g) if is_tensor(b) else None
    return None, da, db


register_vjp("where", _where_vjp)


def _convert_vjp(args, out, g):
    a, _ = args
    if not (a.dtype.is_floating_point or a.dtype.is_complex):
        return None, None
    return ops.convert_element_type(g, a.dtype), None


register_vjp("convert_element_type", _convert_vjp)


# --------------------------------------------------------------------------- reductions
def _sum_vjp(args, out, g):
    a, dims = args
    return expand_reduced(g, a.shape, tuple(dims)), None


register_vjp("sum", _sum_vjp)


def _extreme_reduction_vjp(args, out, g):
    a, dims = args
    dims = tuple(dims)
    hits = ops.convert_element_type(ops.eq(a, expand_reduced(out, a.shape, dims)), a.dtype)
    share = ops.div(g, ops.sum(hits, dims))  # ties share the gradient evenly, like torch
    return ops.mul(expand_reduced(share, a.shape, dims), hits), None


register_vjp("amax", _extreme_reduction_vjp)
register_vjp("amin", _extreme_reduction_vjp)


def _prod_vjp(args, out, g):
    # d prod / d a_i = product of the others: out / a_i where a_i != 0; at a zero, the product
    # of the non-zeros if it is the slice's only zero, else 0
    a, dims = args
    dims = tuple(dims)
    is_zero = ops.eq(a, 0.0)
    safe = ops.where(is_zero, 1.0, a)
    zero_count = ops.sum(ops.convert_element_type(is_zero, a.dtype), dims)
    at_zero = ops.where(ops.eq(zero_count, 1.0), ops.prod(safe, dims), 0.0)
    local = ops.where(is_zero, expand_reduced(at_zero, a.shape, dims),
                      ops.div(expand_reduced(out, a.shape, dims), safe))
    return ops.mul(local, expand_reduced(g, a.shape, dims)), None


register_vjp("prod", _prod_vjp)


def _var_mean_vjp(args, out, g):
    a, dims, correction = args
    dims = tuple(dims)
    g_var, g_mean = g
    var, mean = out
    count = prod(as_expr(a.shape[d]) for d in dims) if dims else sympy.Integer(1)
    grad = None
    if g_var is not None:
        centered = ops.sub(a, expand_reduced(mean, a.shape, dims))
        # 2 (a - mean) g / (count - correction) in tensor arithmetic: at count == correction it
        # is 0 / 0 = NaN as in eager, where the sympy scalar 2 / 0 would be complex infinity.
        twice = ops.mul(ops.mul(centered, expand_reduced(g_var, a.shape, dims)), 2.0)
        grad = ops.div(twice, _degrees_of_freedom(count, correction, a))
    if g_mean is not None:
        part = ops.div(expand_reduced(g_mean, a.shape, dims), as_expr(count))
        grad = part if grad is None else ops.add(grad, part)
    return grad, None, None


register_vjp("var_mean", _var_mean_vjp)


def _degrees_of_freedom(count, correction, a):
    """count - correction: a size expression for an integer correction; a tensor for a
    fractional one (`correction=0.5`), since sizes and kernel indices stay integer."""
    if isinstance(correction, int) or float(correction).is_integer():
        return as_expr(count) - int(correction)
    return ops.sub(ops.full(a.shape, count, a.dtype, a.device), float(correction))


# --------------------------------------------------------------------------- views
def _broadcast_in_dim_vjp(args, out, g):
    a, shape, broadcast_dims = args
    broadcast_dims = tuple(broadcast_dims)
    summed = [d for d in range(len(shape)) if d not in broadcast_dims]
    # an operand dim of literal size 1 stretched to a larger one also sums
    summed += [d for i, d in enumerate(broadcast_dims)
               if as_expr(a.shape[i]) == 1 and as_expr(shape[d]) != 1]
    grad = ops.sum(g, tuple(sorted(summed))) if summed else g
    if summed:
        grad = ops.reshape(grad, tuple(a.shape))
    return grad, None, None


register_vjp("broadcast_in_dim", _broadcast_in_dim_vjp)


def _reshape_vjp(args, out, g):
    return ops.reshape(g, tuple(args[0].shape)), None


register_vjp("reshape", _reshape_vjp)
register_vjp("squeeze", _reshape_vjp)


def _permute_vjp(args, out, g):
    a, dims = args
    inverse = [0] * len(dims)
    for i, d in enumerate(dims):
        inverse[d] = i
    return ops.permute(g, tuple(inverse)), None


register_vjp("permute", _permute_vjp)


def _slice_vjp(args, out, g):
    a, dim, start, stop, step = args
    if as_expr(step) == 1:
        pads = [(0, 0)] * a.ndim
        pads[dim] = (start, as_expr(a.shape[dim]) - as_expr(stop))
        return ops.pad(g, tuple(pads), 0.0), None, None, None, None
    index = ops.iota(g.shape[dim], start, step, torch.int64, g.device)
    index = ops.broadcast_in_dim(index, tuple(g.shape), (dim,))
    grad = ops.scatter_add(zeros(a.shape, a.dtype, a.device), dim, index, g)
    return grad, None, None, None, None


register_vjp("slice", _slice_vjp)


def _flip_vjp(args, out, g):
    return ops.flip(g, tuple(args[1])), None


register_vjp("flip", _flip_vjp)


def _cat_vjp(args, out, g):
    tensors, dim = args
    grads, offset = [], sympy.Integer(0)
    for t in tensors:
        end = offset + as_expr(t.shape[dim])
        grads.append(ops.slice(g, dim, offset, end, 1) if is_tensor(t) else None)
        offset = end
    return tuple(grads), None


register_vjp("cat", _cat_vjp)


def _pad_vjp(args, out, g):
    a, pads, value = args
    grad = g
    for d, (lo, hi) in enumerate(pads):
        if as_expr(lo) != 0 or as_expr(hi) != 0:
            grad = ops.slice(grad, d, lo, as_expr(lo) + as_expr(a.shape[d]), 1)
    return grad, None, None


register_vjp("pad", _pad_vjp)


# --------------------------------------------------------------------------- indexing
def _gather_vjp(args, out, g):
    """One index per row (index of size 1 along `dim`, the input's size elsewhere: nll_loss,
    cross-entropy): the pointwise `where(iota == index, g, 0)`, which fuses into its consumers;
    else a scatter_add into zeros. The forward gather already rejected out-of-range indices."""
    a, dim, index = args
    shape = tuple(a.shape)
    if as_expr(index.shape[dim]) == 1 and all(
            analyzer().equal(i, s) for d, (i, s) in enumerate(zip(index.shape, shape, strict=True))
            if d != dim):
        kept = tuple(d for d in range(len(shape)) if d != dim)
        classes = ops.broadcast_in_dim(
            ops.iota(shape[dim], 0, 1, index.dtype, a.device), shape, (dim,))
        hit = ops.eq(classes, ops.broadcast_in_dim(ops.squeeze(index, (dim,)), shape, kept))
        spread = ops.broadcast_in_dim(ops.squeeze(g, (dim,)), shape, kept)
        return ops.where(hit, spread, 0.0), None, None
    return ops.scatter_add(zeros(a.shape, a.dtype, a.device), dim, index, g), None, None


register_vjp("gather", _gather_vjp)


def _index_select_vjp(args, out, g):
    a, dim, index = args
    if a.ndim == 0:
        return g, None, None
    if index.ndim == 0:
        index = ops.reshape(index, (1,))
    index = ops.broadcast_in_dim(index, tuple(g.shape), (dim,))
    return ops.scatter_add(zeros(a.shape, a.dtype, a.device), dim, index, g), None, None


register_vjp("index_select", _index_select_vjp)


def _scatter_add_vjp(args, out, g):
    a, dim, index, src = args
    return (g if is_tensor(a) else None, None, None,
            ops.gather(g, dim, index) if is_tensor(src) else None)


register_vjp("scatter_add", _scatter_add_vjp)


def _advanced_index(x, indices):
    """x[i0, i1, ...] for equal-shape int index tensors over the leading dims of x."""
    k = len(indices)
    lead, rest = tuple(x.shape[:k]), tuple(x.shape[k:])
    linear = None
    for d, index in enumerate(indices):
        index = ops.where(ops.lt(index, 0), ops.add(index, as_expr(lead[d])), index)
        term = ops.mul(index, prod(as_expr(s) for s in lead[d + 1:]))
        linear = term if linear is None else ops.add(linear, term)
    flat = ops.reshape(linear, (prod(as_expr(s) for s in linear.shape),))
    rows = ops.reshape(x, (prod(as_expr(s) for s in lead), *rest))
    picked = ops.index_select(rows, 0, flat)
    return ops.reshape(picked, (*linear.shape, *rest))


def _index_put_vjp(args, out, g):
    a, indices, values, accumulate = args
    indices = tuple(indices)
    da = dv = None
    if is_tensor(a):
        da = g if accumulate else ops.index_put(
            g, indices, zeros(values.shape, values.dtype, values.device), False)
    if is_tensor(values):
        if any(i is None for i in indices):
            raise AutogradError("index_put: the gradient of `values` needs index tensors for "
                                "every leading dim (no None); found "
                                f"{['None' if i is None else 'tensor' for i in indices]}")
        dv = sum_to_shape(_advanced_index(g, indices), values.shape)
    return da, None, dv, None


register_vjp("index_put", _index_put_vjp)


def _sort_like_vjp(args, out, g):
    a, dim = args[0], args[2] if len(args) == 4 else args[1]
    g_values = g[0]
    grads = [None] * len(args)
    if g_values is not None:
        grads[0] = ops.scatter_add(zeros(a.shape, a.dtype, a.device), dim, out[1], g_values)
    return tuple(grads)


register_vjp("sort", _sort_like_vjp)  # (a, dim, descending)
register_vjp("topk", _sort_like_vjp)  # (a, k, dim, largest)


# --------------------------------------------------------------------------- scans
def _reverse_cumsum(x, dim):
    return ops.flip(ops.cumsum(ops.flip(x, (dim,)), dim), (dim,))


def _cumsum_vjp(args, out, g):
    return _reverse_cumsum(g, args[1]), None


register_vjp("cumsum", _cumsum_vjp)


def _cumprod_vjp(args, out, g):
    # d out_j / d a_i = out_j / a_i for j >= i: exact for inputs without zeros
    a, dim = args
    return ops.div(_reverse_cumsum(ops.mul(g, out), dim), a), None


register_vjp("cumprod", _cumprod_vjp)
