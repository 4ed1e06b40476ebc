"""Shape and layout torch ops: view/reshape (with symbolic -1), permute, transpose, expand,
squeeze/unsqueeze, flatten, split/chunk/narrow, cat/stack, flip, contiguous/clone.

    x.view(-1, 8) on f32[s0, s1, 4]  ->  reshape(x, ((s0*s1)//2, 8)), runtime assert 2 | s0*s1
"""

from __future__ import annotations

import sympy
import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import (
    broadcast_to,
    convert,
    is_tensor,
    ndim_of,
    numel_of,
    parse_size,
    reshape,
    shape_of,
    unsqueeze,
    wrap_dim,
)
from prims.decompositions.registry import register_decomposition
from prims.promotion import result_type
from prims.sizes import (
    analyzer,
    broadcast_shapes,
    as_expr,
    floordiv,
    guard_true,
    is_one,
    known_true,
    prod,
    require,
    simplify,
    sym_min,
    unknown_symbols,
)

T = torch.Tensor


def exact_div(numel, known):
    """numel / known as an integer expression, asserting divisibility when it is not obvious."""
    if isinstance(numel, int) and isinstance(known, int):
        if known == 0 or numel % known:
            raise PrimError(f"reshape: expected {numel} elements to divide by {known}")
        return numel // known
    # `together` first: `fraction` alone reads s1/8 + Mod(7*s1, 8)/8 as having denominator 1,
    # and that rational size reached the kernels' index printers.
    numerator, denominator = sympy.fraction(sympy.together(
        sympy.cancel(as_expr(numel) / as_expr(known))))
    if denominator == 1:
        return simplify(numerator)
    require(sympy.Eq(sympy.Mod(numerator, denominator), 0),
            f"reshape: {numel} elements do not split into rows of {known}")
    return floordiv(numerator, denominator)


def infer_size(shape, numel) -> tuple:
    """Replace a single -1 in `shape` by numel / (product of the others)."""
    shape = tuple(shape)
    holes = [i for i, s in enumerate(shape) if isinstance(s, int) and s == -1]
    if len(holes) > 1:
        raise PrimError(f"reshape: expected at most one -1, found {shape}")
    if not holes:
        return shape
    known = prod(s for s in shape if not (isinstance(s, int) and s == -1))
    i = holes[0]
    return (*shape[:i], exact_div(numel, known), *shape[i + 1:])


@register_decomposition(torch.reshape, T.reshape, T.view)
def view(a, *shape):
    if len(shape) == 1 and isinstance(shape[0], torch.dtype):
        raise PrimError("view(dtype): expected a shape, found a dtype (bit casts are not prims)")
    return reshape(a, infer_size(parse_size(shape), numel_of(a)))


@register_decomposition(T.view_as, T.reshape_as)
def view_as(a, other):
    return reshape(a, shape_of(other))


@register_decomposition(torch.permute, T.permute)
def permute(a, *dims):
    dims = tuple(wrap_dim(d, ndim_of(a)) for d in parse_size(dims))
    if dims == tuple(range(ndim_of(a))):
        return a
    return ops.permute(a, dims)


@register_decomposition(torch.transpose, T.transpose, torch.swapaxes, T.swapaxes)
def transpose(a, dim0, dim1):
    n = ndim_of(a)
    if n == 0:
        return a
    dims = list(range(n))
    d0, d1 = wrap_dim(dim0, n), wrap_dim(dim1, n)
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return permute(a, *dims)


@register_decomposition(torch.t, T.t)
def t(a):
    if ndim_of(a) > 2:
        raise PrimError(f"t: expected at most 2 dims, found {ndim_of(a)}")
    return transpose(a, 0, 1) if ndim_of(a) == 2 else a


@register_decomposition(torch.adjoint)
def adjoint(a):
    return transpose(a, -2, -1)


@register_decomposition(T.contiguous, torch.clone, T.clone, T.requires_grad_)
def identity(a, *args, **kwargs):
    return a


@register_decomposition(T.detach, torch.detach)
def detach(a):
    return ops.stop_gradient(a)


@register_decomposition(T.expand)
def expand(a, *sizes):
    sizes = parse_size(sizes)
    offset = len(sizes) - ndim_of(a)
    if offset < 0:
        raise PrimError(f"expand: expected at least {ndim_of(a)} sizes, found {sizes}")
    shape = tuple(shape_of(a)[i - offset] if isinstance(s, int) and s == -1 else s
                  for i, s in enumerate(sizes))
    return broadcast_to(a, shape)


@register_decomposition(T.expand_as)
def expand_as(a, other):
    return broadcast_to(a, shape_of(other))


@register_decomposition(torch.broadcast_to, T.broadcast_to)
def broadcast_to_(a, shape):
    return expand(a, *shape)


@register_decomposition(torch.unsqueeze, T.unsqueeze)
def unsqueeze_(a, dim):
    return unsqueeze(a, dim)


@register_decomposition(torch.squeeze, T.squeeze)
def squeeze(a, dim=None):
    n = ndim_of(a)
    if dim is None:
        dims = tuple(i for i, s in enumerate(shape_of(a)) if is_one(s))
    else:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(sorted({wrap_dim(d, n) for d in dims})) if n else ()
        dims = tuple(d for d in dims if is_one(shape_of(a)[d]))
    return ops.squeeze(a, dims) if dims else a


@register_decomposition(torch.flatten, T.flatten)
def flatten(a, start_dim=0, end_dim=-1):
    n = ndim_of(a)
    if n == 0:
        return reshape(a, (1,))
    start, end = wrap_dim(start_dim, n), wrap_dim(end_dim, n)
    if start > end:
        raise PrimError(f"flatten: expected start_dim <= end_dim, found {start_dim}, {end_dim}")
    shape = shape_of(a)
    return reshape(a, (*shape[:start], prod(shape[start:end + 1]), *shape[end + 1:]))


@register_decomposition(torch.unflatten, T.unflatten)
def unflatten(a, dim, sizes):
    shape = shape_of(a)
    d = wrap_dim(dim, len(shape))
    sizes = infer_size(tuple(sizes), shape[d])
    return reshape(a, (*shape[:d], *sizes, *shape[d + 1:]))


def clamp_index(value, size):
    """A start/stop bound in [0, size] with Python's slice semantics, proving what it can.

    A bound whose sign is unknown is decided with a guard (the semantics differ by sign); the
    clamps become sympy Min/Max unless the env proves them unnecessary.
    """
    if value is None:
        return None
    if isinstance(value, int) and isinstance(size, int):
        return min(max(value + size if value < 0 else value, 0), size)
    expr, size = as_expr(value), as_expr(size)
    if isinstance(value, int):
        negative = value < 0
    else:
        negative = not known_true(sympy.Ge(expr, 0)) and not guard_true(sympy.Ge(expr, 0),
                                                                         "slice")
    if negative:
        expr = expr + size
        if not known_true(sympy.Ge(expr, 0)):
            expr = sympy.Max(expr, 0)
    if known_true(sympy.Le(expr, size)):
        return simplify(expr)
    return sympy.Min(expr, size)


def slice_dim(a, dim, start=None, stop=None, step=1):
    """a[start:stop:step] along `dim` with Python's clamping (symbolic bounds stay symbolic)."""
    if step is None:
        step = 1
    if isinstance(step, int) and step <= 0:
        raise PrimError(f"slice: expected a positive step, found {step}")
    size = shape_of(a)[dim]
    start = clamp_index(start, size)
    stop = clamp_index(stop, size)
    start = 0 if start is None else start
    stop = size if stop is None else stop
    if not known_true(sympy.Le(as_expr(start), as_expr(stop))):
        start = sym_min(start, stop)
    an = analyzer()
    if an.equal(start, 0) and an.equal(stop, size) and step == 1:
        return a
    return ops.slice(a, dim, start, stop, step)


@register_decomposition(torch.broadcast_shapes)
def broadcast_shapes_of(*shapes):
    """The broadcast of shapes given as ints or sequences of ints (sizes, not tensors): a
    torch.Size when every size is a constant, else a tuple of sizes."""
    for shape in shapes:
        if not isinstance(shape, (int, sympy.Expr, tuple, list, torch.Size)):
            raise PrimError(f"broadcast_shapes: expected ints or sequences of ints, found {shape}")
    shapes = [(s,) if isinstance(s, (int, sympy.Expr)) else tuple(s) for s in shapes]
    out = tuple(simplify(as_expr(s)) for s in broadcast_shapes(*shapes))
    if all(s.is_Integer for s in out):
        return torch.Size(int(s) for s in out)
    return out


@register_decomposition(torch.ops.aten.slice.Tensor, torch.ops.aten.slice)
def aten_slice(a, dim=0, start=None, end=None, step=1):
    """aten.slice(a, dim, start, end, step): `a[start:end:step]` along `dim`."""
    return slice_dim(a, wrap_dim(dim, ndim_of(a)), start, end, step)


@register_decomposition(torch.narrow, T.narrow)
def narrow(a, dim, start, length):
    d = wrap_dim(dim, ndim_of(a))
    size = shape_of(a)[d]
    if is_tensor(start):
        return _narrow_at_tensor(a, d, start, length)
    if isinstance(start, int) and start < 0:
        start = as_expr(size) + start if not isinstance(size, int) else size + start
    stop = start + length
    require(sympy.Le(as_expr(stop), as_expr(size)),
            f"narrow: expected start + length <= {size}, found {start} + {length}")
    return ops.slice(a, d, start, stop, 1)


def _narrow_at_tensor(a, d, start, length):
    """narrow at a 0-d integer tensor `start` (eager reads its value): the rows start + k for
    k < length, picked by index_select, whose bounds check raises where eager's would."""
    if ndim_of(start) != 0 or start.dtype.is_floating_point or start.dtype == torch.bool:
        raise PrimError(f"narrow: expected a 0-d integer tensor start, found {start}")
    size = shape_of(a)[d]
    start = convert(start, torch.int64)
    start = ops.where(ops.lt(start, 0), ops.add(start, size), start)
    rows = ops.iota(length, 0, 1, torch.int64, a.device)
    return ops.index_select(a, d, ops.add(rows, broadcast_to(start, (length,))))


def guard_int(expr) -> int:
    """An output count that depends on a size: specialise it (with a guard)."""
    if isinstance(expr, int):
        return expr
    expr = simplify(as_expr(expr))
    if expr.is_Integer:
        return int(expr)
    an = analyzer()
    if unknown_symbols(an, expr):
        raise PrimError(f"split: the number of pieces {expr} needs the ShapeEnv of its symbols")
    return an.evaluate_int(expr)


@register_decomposition(torch.split, T.split)
def split(a, split_size_or_sections, dim=0):
    d = wrap_dim(dim, ndim_of(a))
    size = shape_of(a)[d]
    if isinstance(split_size_or_sections, (list, tuple)):
        sections = tuple(split_size_or_sections)
        require(sympy.Eq(as_expr(sum(sections, sympy.Integer(0))), as_expr(size)),
                f"split: sections {sections} do not add up to {size}")
        out, start = [], 0
        for length in sections:
            out.append(ops.slice(a, d, start, start + length, 1))
            start = start + length
        return tuple(out)
    piece = split_size_or_sections
    count = guard_int(floordiv(as_expr(size) + piece - 1, piece)) if piece != 0 else 1
    if count <= 1:
        return (a,)
    out = []
    for i in range(count):
        stop = size if i == count - 1 else (i + 1) * piece
        out.append(ops.slice(a, d, i * piece, stop, 1))
    return tuple(out)


@register_decomposition(torch.chunk, T.chunk)
def chunk(a, chunks, dim=0):
    d = wrap_dim(dim, ndim_of(a))
    size = shape_of(a)[d]
    if known_true(sympy.Eq(as_expr(size), 0)):  # eager: `chunks` empty pieces, not one
        return tuple(ops.slice(a, d, 0, 0, 1) for _ in range(chunks))
    return split(a, floordiv(as_expr(size) + chunks - 1, chunks) if not isinstance(size, int)
                 else -(-size // chunks), dim)


@register_decomposition(torch.unbind, T.unbind)
def unbind(a, dim=0):
    d = wrap_dim(dim, ndim_of(a))
    count = guard_int(shape_of(a)[d])
    return tuple(ops.squeeze(ops.slice(a, d, i, i + 1, 1), (d,)) for i in range(count))


@register_decomposition(torch.cat, torch.concat, torch.concatenate)
def cat(tensors, dim=0):
    tensors = [t for t in tensors if not (ndim_of(t) == 1 and known_true(
        sympy.Eq(as_expr(shape_of(t)[0]), 0)))] or list(tensors)[:1]
    dtype = result_type(*tensors)
    tensors = [convert(t, dtype) for t in tensors]
    if len(tensors) == 1:
        return tensors[0]
    return ops.cat(tuple(tensors), wrap_dim(dim, ndim_of(tensors[0])))


@register_decomposition(torch.stack)
def stack(tensors, dim=0):
    tensors = list(tensors)
    d = wrap_dim(dim, ndim_of(tensors[0]) + 1)
    return cat([unsqueeze(t, d) for t in tensors], d)


@register_decomposition(torch.flip, T.flip)
def flip(a, dims):
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    return ops.flip(a, tuple(sorted({wrap_dim(d, ndim_of(a)) for d in dims})))


@register_decomposition(torch.roll, T.roll)
def roll(a, shifts, dims=None):
    if dims is None:
        return reshape(roll(reshape(a, (numel_of(a),)), shifts, 0), shape_of(a))
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    dims = (dims,) if isinstance(dims, int) else tuple(dims)
    out = a
    for shift, dim in zip(shifts, dims):
        d = wrap_dim(dim, ndim_of(a))
        size = as_expr(shape_of(out)[d])
        if known_true(sympy.Eq(size, 0)):  # nothing to move (and no modulo by zero)
            continue
        k = simplify(sympy.Mod(as_expr(shift), size))
        if known_true(sympy.Eq(k, 0)):
            continue
        cut = simplify(size - k)
        out = ops.cat((ops.slice(out, d, cut, size, 1), ops.slice(out, d, 0, cut, 1)), d)
    return out


@register_decomposition(T.repeat)
def repeat(a, *repeats):
    """Tile `a`: each dim d of size n becomes r*n; new leading dims come from extra repeats."""
    repeats = parse_size(repeats)
    offset = len(repeats) - ndim_of(a)
    if offset < 0:
        raise PrimError(f"repeat: expected at least {ndim_of(a)} repeats, found {repeats}")
    shape = (1,) * offset + tuple(shape_of(a))
    a = reshape(a, shape)
    # [r0, n0, r1, n1, ...] broadcast, then merged pairwise into [r0*n0, r1*n1, ...]
    interleaved = reshape(a, tuple(x for n in shape for x in (1, n)))
    tiled = broadcast_to(interleaved, tuple(x for r, n in zip(repeats, shape) for x in (r, n)))
    return reshape(tiled, tuple(r * n for r, n in zip(repeats, shape)))


@register_decomposition(torch.tile, T.tile)
def tile(a, dims):
    dims = tuple(dims)
    return repeat(a, *((1,) * (ndim_of(a) - len(dims)) + dims))


@register_decomposition(torch.repeat_interleave, T.repeat_interleave)
def repeat_interleave(a, repeats, dim=None, *, output_size=None):
    """Each element repeated `repeats` times along `dim` (an int count; per-element counts
    make a data-dependent size and are not decomposed)."""
    if not isinstance(repeats, int | sympy.Expr) or isinstance(repeats, bool):
        raise PrimError("repeat_interleave: only an integer repeat count is supported, not a "
                        "tensor of per-element counts (its output size depends on the data)")
    if dim is None:
        a, dim = reshape(a, (numel_of(a),)), 0
    shape = shape_of(a)
    d = wrap_dim(dim, len(shape))
    spread = unsqueeze(a, d + 1)
    spread = broadcast_to(spread, (*shape[:d + 1], repeats, *shape[d + 1:]))
    return reshape(spread, (*shape[:d], shape[d] * repeats, *shape[d + 1:]))


@register_decomposition(torch.diff, T.diff)
def diff(a, n=1, dim=-1, prepend=None, append=None):
    """n-th forward difference along `dim`; booleans differ by xor (torch's rule)."""
    d = wrap_dim(dim, ndim_of(a))
    parts = [t for t in (prepend, a, append) if t is not None]
    x = cat(parts, d) if len(parts) > 1 else a
    for _ in range(n):
        later, earlier = slice_dim(x, d, 1, None), slice_dim(x, d, None, -1)
        x = ops.logical_xor(later, earlier) if x.dtype == torch.bool else ops.sub(later, earlier)
    return x
