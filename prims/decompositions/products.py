"""Products built on linalg.py's matmul: dot, vdot, inner, mv, addmv, addr, addbmm, vecdot,
cross, kron, tensordot, cdist, multi_dot, matrix_power, chain_matmul.

No new prims: each is a matmul (the mm/bmm externs) or a broadcast multiply and a sum, so the
VJPs are those of mm, bmm, mul and sum.

    torch.addmv(b f32[s0], A f32[s0, s1], x f32[s1]) -> add(b, squeeze(mm(A, x[:, None])))
"""

from __future__ import annotations

import sympy
import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import (
    broadcast_tensors,
    ndim_of,
    pointwise,
    reshape,
    restore_dims,
    shape_of,
    wrap_dim,
)
from prims.decompositions.linalg import matmul
from prims.decompositions.norms import vector_norm
from prims.decompositions.registry import register_decomposition
from prims.decompositions.shapes import guard_int, permute
from prims.promotion import opmath
from prims.sizes import as_expr, floordiv, guard_true, is_one, prod

T = torch.Tensor


def _scaled_add(out, input, beta, alpha):
    if alpha != 1:
        out = pointwise(ops.mul, out, alpha)
    if beta == 0:
        return out
    return pointwise(ops.add, out, input if beta == 1 else pointwise(ops.mul, input, beta))


def _require_ndim(name, a, n):
    if ndim_of(a) != n:
        raise PrimError(f"{name}: expected a {n}-D tensor, found {ndim_of(a)}-D")


@register_decomposition(torch.dot, T.dot, torch.vdot, T.vdot)
def dot(a, b):
    _require_ndim("dot", a, 1)
    _require_ndim("dot", b, 1)
    return matmul(a, b)


@register_decomposition(torch.inner, T.inner)
def inner(a, b):
    if ndim_of(a) == 0 or ndim_of(b) == 0:
        return pointwise(ops.mul, a, b)
    return tensordot(a, b, ([ndim_of(a) - 1], [ndim_of(b) - 1]))


@register_decomposition(torch.mv, T.mv)
def mv(a, v):
    _require_ndim("mv", a, 2)
    _require_ndim("mv", v, 1)
    return matmul(a, v)


@register_decomposition(torch.addmv, T.addmv)
def addmv(input, mat, vec, *, beta=1, alpha=1):
    return _scaled_add(mv(mat, vec), input, beta, alpha)


@register_decomposition(torch.addr, T.addr)
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    _require_ndim("addr", vec1, 1)
    _require_ndim("addr", vec2, 1)
    out = pointwise(ops.mul, reshape(vec1, (shape_of(vec1)[0], 1)),
                    reshape(vec2, (1, shape_of(vec2)[0])))
    if input.dtype == torch.bool:
        raise PrimError("addr: bool tensors are not supported")
    return _scaled_add(out, input, beta, alpha)


@register_decomposition(torch.addbmm, T.addbmm)
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    _require_ndim("addbmm", batch1, 3)
    _require_ndim("addbmm", batch2, 3)
    out = ops.sum(matmul(batch1, batch2), (0,))
    return _scaled_add(out, input, beta, alpha)


@register_decomposition(torch.linalg.vecdot)
def vecdot(x, y, *, dim=-1):
    a, b = broadcast_tensors(x, y)
    return ops.sum(pointwise(ops.mul, a, b), (wrap_dim(dim, ndim_of(a)),))


@register_decomposition(torch.linalg.cross)
def linalg_cross(a, b, *, dim=-1):
    a, b = broadcast_tensors(a, b)
    d = wrap_dim(dim, ndim_of(a))
    if guard_int(shape_of(a)[d]) != 3:
        raise PrimError(f"cross: expected size 3 at dim {dim}, found {shape_of(a)[d]}")

    def part(x, i):
        return ops.squeeze(ops.slice(x, d, i, i + 1, 1), (d,))

    a0, a1, a2 = (part(a, i) for i in range(3))
    b0, b1, b2 = (part(b, i) for i in range(3))
    comps = [ops.sub(ops.mul(a1, b2), ops.mul(a2, b1)), ops.sub(ops.mul(a2, b0), ops.mul(a0, b2)),
             ops.sub(ops.mul(a0, b1), ops.mul(a1, b0))]
    from prims.decompositions.shapes import stack

    return stack(comps, d)


@register_decomposition(torch.cross, T.cross)
def cross(a, b, dim=None):
    if dim is None:
        a2, _ = broadcast_tensors(a, b)
        dim = next((i for i, s in enumerate(shape_of(a2)) if guard_int(s) == 3), None)
        if dim is None:
            raise PrimError("cross: no dimension of size 3")
    return linalg_cross(a, b, dim=dim)


def _contractible(a, b, da, db):
    """Operands whose dims `da`, `db` have one size: eager's broadcast of a size 1 there sums
    the other operand over its dim first (keeping it as a size-1 dim)."""
    sa, sb = shape_of(a)[da], shape_of(b)[db]
    if guard_true(sympy.Eq(as_expr(sa), as_expr(sb)), "tensordot"):
        return a, b
    if is_one(sa):
        return a, restore_dims(ops.sum(b, (db,)), shape_of(b), (db,))
    if is_one(sb):
        return restore_dims(ops.sum(a, (da,)), shape_of(a), (da,)), b
    raise PrimError(f"tensordot: expected contracted sizes to match (or one to be 1), found "
                    f"{sa} and {sb}")


@register_decomposition(torch.tensordot)
def tensordot(a, b, dims=2, out=None):
    if isinstance(dims, int):
        dims_a = list(range(ndim_of(a) - dims, ndim_of(a)))
        dims_b = list(range(dims))
    else:
        dims_a, dims_b = ([d] if isinstance(d, int) else list(d) for d in dims)
    dims_a = [wrap_dim(d, ndim_of(a)) for d in dims_a]
    dims_b = [wrap_dim(d, ndim_of(b)) for d in dims_b]
    free_a = [d for d in range(ndim_of(a)) if d not in dims_a]
    free_b = [d for d in range(ndim_of(b)) if d not in dims_b]
    sa, sb = shape_of(a), shape_of(b)
    for da, db in zip(dims_a, dims_b, strict=True):
        a, b = _contractible(a, b, da, db)
    sa, sb = shape_of(a), shape_of(b)
    k = prod(sa[d] for d in dims_a)
    a2 = reshape(permute(a, *free_a, *dims_a), (prod(sa[d] for d in free_a), k))
    b2 = reshape(permute(b, *dims_b, *free_b), (k, prod(sb[d] for d in free_b)))
    out = matmul(a2, b2)
    return reshape(out, (*(sa[d] for d in free_a), *(sb[d] for d in free_b)))


@register_decomposition(torch.kron, T.kron)
def kron(a, b):
    n = max(ndim_of(a), ndim_of(b))
    a = reshape(a, (1,) * (n - ndim_of(a)) + tuple(shape_of(a)))
    b = reshape(b, (1,) * (n - ndim_of(b)) + tuple(shape_of(b)))
    inter_a = reshape(a, tuple(x for s in shape_of(a) for x in (s, 1)))
    inter_b = reshape(b, tuple(x for s in shape_of(b) for x in (1, s)))
    out = pointwise(ops.mul, inter_a, inter_b)
    return reshape(out, tuple(as_expr(x) * as_expr(y) for x, y in zip(shape_of(a),
                                                                       shape_of(b))))


@register_decomposition(torch.cdist)
def cdist(x1, x2, p=2.0, compute_mode=None):
    if ndim_of(x1) < 2 or ndim_of(x2) < 2:
        raise PrimError("cdist: expected inputs of at least 2 dims")
    x = ops.broadcast_in_dim(x1, (*shape_of(x1)[:-1], shape_of(x2)[-2], shape_of(x1)[-1]),
                             (*range(ndim_of(x1) - 1), ndim_of(x1)))
    y = reshape(x2, (*shape_of(x2)[:-2], 1, *shape_of(x2)[-2:]))
    x, y = broadcast_tensors(x, y)
    diff = ops.sub(x, y)
    dtype = diff.dtype
    return ops.convert_element_type(vector_norm(ops.convert_element_type(diff, opmath(dtype)), p,
                                                (ndim_of(diff) - 1,)), dtype)


@register_decomposition(torch.linalg.multi_dot)
def multi_dot(tensors, *, out=None):
    tensors = list(tensors)
    if len(tensors) < 2:
        raise PrimError("multi_dot: expected at least 2 tensors")
    result = tensors[0]
    for t in tensors[1:]:
        result = matmul(result, t)
    return result


@register_decomposition(torch.chain_matmul)
def chain_matmul(*matrices, out=None):
    return multi_dot(matrices) if len(matrices) > 1 else matrices[0]


@register_decomposition(torch.linalg.matrix_power, torch.matrix_power, T.matrix_power)
def matrix_power(a, n):
    if not isinstance(n, int) or n < 0:
        raise PrimError(f"matrix_power: negative powers need an inverse (no prim), found {n}")
    size = shape_of(a)[-1]
    if n == 0:
        r = ops.broadcast_in_dim(ops.iota(size, 0, 1, torch.int64, a.device), (size, size), (0,))
        c = ops.broadcast_in_dim(ops.iota(size, 0, 1, torch.int64, a.device), (size, size), (1,))
        eye = ops.convert_element_type(ops.eq(r, c), a.dtype)
        eye = ops.broadcast_in_dim(eye, shape_of(a), (ndim_of(a) - 2, ndim_of(a) - 1))
        # `a` stays in the autograd graph with a zero gradient, as in eager
        keep = ops.broadcast_in_dim(ops.full((), True, torch.bool, a.device), shape_of(a), ())
        return ops.where(keep, eye, a)
    result, base = None, a
    while n:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if n:
            base = matmul(base, base)
    return result


@register_decomposition(torch.pdist, torch.nn.functional.pdist)
def pdist(input, p=2):
    """Distances of the pairs i < j of rows, in row-major pair order: every (i, j) distance
    written by index_put to its pair's slot (pairs j <= i to one extra slot, dropped)."""
    if ndim_of(input) != 2:
        raise PrimError(f"pdist: expected a 2-D input, found {ndim_of(input)}-D")
    n, m = shape_of(input)
    x = ops.convert_element_type(input, opmath(input.dtype))
    pairs = (n, n, m)
    diff = ops.sub(ops.broadcast_in_dim(x, pairs, (0, 2)), ops.broadcast_in_dim(x, pairs, (1, 2)))
    dist = reshape(vector_norm(diff, p, (2,)), (as_expr(n) * as_expr(n),))
    i = ops.broadcast_in_dim(ops.iota(n, 0, 1, torch.int64, x.device), (n, n), (0,))
    j = ops.broadcast_in_dim(ops.iota(n, 0, 1, torch.int64, x.device), (n, n), (1,))
    count = floordiv(as_expr(n) * (as_expr(n) - 1), 2)
    # slot of (i, j), j > i: i*n - i*(i+1)/2 + j - i - 1
    slot = ops.sub(ops.add(ops.sub(ops.mul(i, as_expr(n)),
                                   ops.floor_divide(ops.mul(i, ops.add(i, 1)), 2)), j),
                   ops.add(i, 1))
    slot = ops.where(ops.gt(j, i), slot, count)
    out = ops.full((count + 1,), 0.0, x.dtype, x.device)
    out = ops.index_put(out, (reshape(slot, (as_expr(n) * as_expr(n),)),), dist, False)
    return ops.convert_element_type(ops.slice(out, 0, 0, count, 1), input.dtype)
