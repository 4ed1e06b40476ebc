"""Matrix products: mm, bmm, matmul (with batch broadcasting), addmm, baddbmm, linear, einsum.

Everything lands on the `mm` and `bmm` externs, with reshapes/permutes around them.

    matmul(f32[s0, s1, 64], f32[64, 32]) -> reshape(mm(reshape(x, (s0*s1, 64)), w), (s0, s1, 32))
"""

from __future__ import annotations

import operator

import torch
import torch.nn.functional as F

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import (
    broadcast_to,
    convert,
    ndim_of,
    pointwise,
    reshape,
    shape_of,
    unsqueeze,
)
from prims.decompositions.registry import register_decomposition
from prims.decompositions.shapes import permute, transpose
from prims.promotion import result_type
from prims.sizes import broadcast_shapes, prod

T = torch.Tensor


def _one_dtype(name, a, b):
    if a.dtype != b.dtype:
        raise PrimError(f"{name}: expected operands of one dtype, found {a.dtype} and {b.dtype}")


@register_decomposition(torch.outer, T.outer, torch.ger, T.ger)
def outer(a, b):
    if ndim_of(a) != 1 or ndim_of(b) != 1:
        raise PrimError(f"outer: expected 1-d vectors, found {ndim_of(a)}-d and {ndim_of(b)}-d")
    return pointwise(ops.mul, unsqueeze(a, 1), unsqueeze(b, 0))


@register_decomposition(torch.mm, T.mm)
def mm(a, b):
    _one_dtype("mm", a, b)
    return ops.mm(a, b)


@register_decomposition(torch.bmm, T.bmm)
def bmm(a, b):
    _one_dtype("bmm", a, b)
    return ops.bmm(a, b)


@register_decomposition(torch.matmul, T.matmul, T.__matmul__, operator.matmul)
def matmul(a, b):
    _one_dtype("matmul", a, b)
    na, nb = ndim_of(a), ndim_of(b)
    if na == 0 or nb == 0:
        raise PrimError("matmul: expected operands of at least 1 dim, found a 0-dim tensor")
    if na == 1 and nb == 1:
        return ops.sum(ops.mul(a, b), (0,))
    if na == 1:
        return _drop(matmul(unsqueeze(a, 0), b), -2)
    if nb == 1:
        return _drop(matmul(a, unsqueeze(b, 1)), -1)
    if nb == 2:
        *batch, m, k = shape_of(a)
        out = ops.mm(reshape(a, (prod(batch) * m, k)) if batch else a, b)
        return reshape(out, (*batch, m, shape_of(b)[1])) if batch else out
    batch = broadcast_shapes(shape_of(a)[:-2], shape_of(b)[:-2])
    a3 = reshape(broadcast_to(a, (*batch, *shape_of(a)[-2:])), (prod(batch), *shape_of(a)[-2:]))
    b3 = reshape(broadcast_to(b, (*batch, *shape_of(b)[-2:])), (prod(batch), *shape_of(b)[-2:]))
    out = ops.bmm(a3, b3)
    return reshape(out, (*batch, shape_of(a)[-2], shape_of(b)[-1]))


@register_decomposition(T.__rmatmul__)
def rmatmul(a, b):
    return matmul(b, a)


def _drop(a, dim):
    d = dim % ndim_of(a)
    return ops.squeeze(a, (d,))


@register_decomposition(torch.addmm, T.addmm)
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    out = ops.mm(mat1, mat2)
    if alpha != 1:
        out = ops.mul(out, alpha)
    if beta == 0:
        return out
    scaled = input if beta == 1 else pointwise(ops.mul, input, beta)
    return pointwise(ops.add, out, scaled)


@register_decomposition(torch.baddbmm, T.baddbmm)
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    out = ops.bmm(batch1, batch2)
    if alpha != 1:
        out = ops.mul(out, alpha)
    if beta == 0:
        return out
    scaled = input if beta == 1 else pointwise(ops.mul, input, beta)
    return pointwise(ops.add, out, scaled)


@register_decomposition(F.linear)
def linear(input, weight, bias=None):
    out = matmul(input, transpose(weight, 0, 1) if ndim_of(weight) == 2 else weight)
    return out if bias is None else pointwise(ops.add, out, bias)


# --------------------------------------------------------------------------- einsum
def _parse(equation, count):
    equation = equation.replace(" ", "")
    if "..." in equation:
        raise PrimError("einsum: expected explicit subscripts, found '...'")
    lhs, arrow, rhs = equation.partition("->")
    inputs = lhs.split(",")
    if len(inputs) != count:
        raise PrimError(f"einsum: expected {len(inputs)} operands, found {count}")
    if not arrow:
        letters = "".join(inputs)
        rhs = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    for term in inputs:
        if len(set(term)) != len(term):
            raise PrimError(f"einsum: repeated subscript in {term!r} (diagonals) unsupported")
    return inputs, rhs


def _sum_out(x, term, keep):
    """Sum away letters of `term` not in `keep`."""
    dims = tuple(i for i, c in enumerate(term) if c not in keep)
    if not dims:
        return x, term
    return ops.sum(x, dims), "".join(c for c in term if c in keep)


def _contract(a, ta, b, tb, out_letters):
    """Contract two operands into the letters `out_letters` needs (batch, left, right)."""
    sizes = dict(zip(ta, shape_of(a))) | dict(zip(tb, shape_of(b)))
    batch = [c for c in ta if c in tb and c in out_letters]
    summed = [c for c in ta if c in tb and c not in out_letters]
    left = [c for c in ta if c not in tb]
    right = [c for c in tb if c not in ta]

    def size(letters):
        return prod(sizes[c] for c in letters)

    a3 = reshape(permute(a, *[ta.index(c) for c in batch + left + summed]),
                 (size(batch), size(left), size(summed)))
    b3 = reshape(permute(b, *[tb.index(c) for c in batch + summed + right]),
                 (size(batch), size(summed), size(right)))
    out = reshape(ops.bmm(a3, b3), tuple(sizes[c] for c in batch + left + right))
    return out, "".join(batch + left + right)


@register_decomposition(torch.einsum)
def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    terms, rhs = _parse(equation, len(operands))
    dtype = result_type(*operands)
    values = [convert(x, dtype) for x in operands]
    for i, (x, term) in enumerate(zip(values, terms)):
        others = set(rhs).union(*(set(t) for j, t in enumerate(terms) if j != i))
        values[i], terms[i] = _sum_out(x, term, others)
    acc, acc_term = values[0], terms[0]
    for i in range(1, len(values)):
        later = set(rhs).union(*(set(t) for t in terms[i + 1:]))
        acc, acc_term = _contract(acc, acc_term, values[i], terms[i], later)
    acc, acc_term = _sum_out(acc, acc_term, set(rhs))
    if set(acc_term) != set(rhs):
        raise PrimError(f"einsum: output subscripts {rhs!r} not found in the inputs")
    return permute(acc, *[acc_term.index(c) for c in rhs]) if acc_term != rhs else acc
