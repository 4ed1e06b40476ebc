"""Strided views: slices and reshapes of a value, as (size, stride, offset) over its memory.

    qkv f32[s0, s1, 48]              (any value: contiguous once realized)
    slice(qkv, 2, 16, 32)            -> StridedView(qkv, (s0, s1, 16), (48*s1, 48, 1), 16)
    reshape(that, (s0, s1, 2, 8))    -> StridedView(qkv, (s0, s1, 2, 8), (48*s1, 48, 8, 1), 16)

An extern that reads strided operands (attention) is handed `buf.as_strided(...)` of the realized
base instead of a copy of the view (`GraphLowering.strided_view`). A reshape that no strides
express (merging dims that are not contiguous to each other) has no view; nor does anything
whose equalities the Analyzer cannot prove: the value is then copied, as before.
"""

from __future__ import annotations

import sympy

from inductor.ir import StridedView, Value, as_expr, buffer_value, contiguous_strides, product
from symbolic import Analyzer


def view_of(a: Value) -> StridedView | None:
    """`a` as a strided view of itself or of the contiguous buffer it reshapes; None for a
    permuted value (its elements are not in row-major order)."""
    if a.strided is not None:
        return a.strided
    if a.permuted is not None:
        return None
    if a.reshaped is not None:
        buf, _ = a.reshaped
        base = buffer_value(buf)
    elif a.buffer is not None:
        layout = a.buffer.layout
        if layout.offset != 0 or tuple(layout.stride) != contiguous_strides(layout.size):
            return None
        base = a
    else:
        base = a
    return StridedView(base, tuple(a.size), contiguous_strides(a.size))


def sliced(view: StridedView, dim: int, start, step, size) -> StridedView:
    """`view[..., start::step, ...]` along `dim`, `size` elements long."""
    stride = list(view.stride)
    offset = sympy.expand(view.offset + as_expr(start) * stride[dim])
    stride[dim] = sympy.expand(stride[dim] * as_expr(step))
    new_size = list(view.size)
    new_size[dim] = as_expr(size)
    return StridedView(view.base, tuple(new_size), tuple(stride), offset)


def reshaped(view: StridedView, new_size, an: Analyzer) -> StridedView | None:
    """`view.view(new_size)` when strides express it (torch's rule for `Tensor.view`), else
    None."""
    stride = _view_strides(view.size, view.stride, tuple(as_expr(s) for s in new_size), an)
    if stride is None:
        return None
    return StridedView(view.base, tuple(as_expr(s) for s in new_size), stride, view.offset)


def _view_strides(size, stride, new_size, an: Analyzer) -> tuple | None:
    """Strides for `new_size` over the memory of a (size, stride) view, or None. The dims are
    matched in chunks of equal element count; the old dims of a chunk must be contiguous to
    each other, and the chunk's new dims split its innermost stride. Equal means equal as
    expressions (after the env's replacements): every reshape is asked, so no z3 query here;
    one it cannot see keeps its copy."""
    def same(a, b):
        return sympy.expand(an.simplify(as_expr(a)) - an.simplify(as_expr(b))) == 0

    size = [as_expr(s) for s in size]
    out, i, j = [], 0, 0
    while j < len(new_size):
        found = None
        for b in range(j + 1, len(new_size) + 1):
            for a in range(i + 1, len(size) + 1):
                if same(product(size[i:a]), product(new_size[j:b])):
                    found = (a, b)
                    break
            if found is not None:
                break
        if found is None:
            if all(same(s, 1) for s in new_size[j:]) and all(same(s, 1) for s in size[i:]):
                return (*out, *(sympy.Integer(1),) * (len(new_size) - j))
            return None
        a, b = found
        if not all(same(stride[k], stride[k + 1] * size[k + 1]) or same(size[k], 1)
                   for k in range(i, a - 1)):
            return None
        inner = [sympy.sympify(stride[a - 1])]
        for s in reversed(new_size[j + 1:b]):
            inner.append(sympy.expand(inner[-1] * s))
        out.extend(reversed(inner))
        i, j = a, b
    if not all(same(s, 1) for s in size[i:]):
        return None
    return tuple(out)


def is_aligned(size, stride, offset, itemsize: int, an: Analyzer) -> bool:
    """Whether attention kernels read this view as is: the last dim contiguous, every other
    stride and the offset whole 16-byte steps (flash attention's vector loads)."""
    if not stride or not an.equal(stride[-1], 1):
        return False
    step = max(1, 16 // itemsize)
    return all(an.prove(sympy.Eq(sympy.Mod(as_expr(e), step), 0)) is True
               for e in (*stride[:-1], offset))


def covers(views, base: Value, an: Analyzer) -> bool:
    """Whether `views` of `base` read at least as many elements as it has, so writing it once
    costs no more than writing each view (q, k, v of one projection)."""
    total = sum((product(v.size) for v in views), sympy.Integer(0))
    return an.prove(sympy.Ge(total, product(base.size))) is True
