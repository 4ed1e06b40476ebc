"""Size decisions for meta functions and decompositions, in one place.

Sizes are ints (real tensors) or sympy expressions (TensorMetas, TracedTensors). Every question
about them goes to the `Analyzer` (symbolic/analyzer.py) the running tracer was given with the
compilation's ShapeEnv (`MetaTracer(env)`, `GraphTracer(graph, env)`): `guard_true` records a
guard, `require` a runtime assert (a condition eager would fail on anyway), `known_true` and
`analyzer().equal` record nothing. Without a tracer the sizes are ints (real tensors) and an
Analyzer over an empty ShapeEnv answers; a condition over symbols the env does not know is an
error, never a silent specialisation.

    with tracing(MetaTracer(env)): require(sympy.Eq(s0, s1), "add: shapes differ")  # assert
"""

from __future__ import annotations

import sympy

from prims.core import PrimError, current_tracer
from symbolic import Analyzer, FloorDiv, ShapeEnv, ShapeError


def as_expr(value):
    """An int or sympy expression as a sympy expression; bools become sympy booleans."""
    if isinstance(value, sympy.Basic):
        return value
    if isinstance(value, bool):
        return sympy.true if value else sympy.false
    return sympy.Integer(value) if isinstance(value, int) else sympy.sympify(value)


def is_symbolic(value) -> bool:
    return isinstance(value, sympy.Basic) and not value.is_number


# Real tensors (no tracer) have int sizes: an empty ShapeEnv answers. It never records: a
# condition without symbols is decided by `prove`, and one with symbols it does not know is an
# error before anything is recorded (`unknown_symbols`).
_INT_SIZES = Analyzer(ShapeEnv())


def analyzer() -> Analyzer:
    """The Analyzer of the running tracer (its `an`, built from the ShapeEnv it was given), or
    with no tracer (real tensors, int sizes) an Analyzer over an empty ShapeEnv."""
    tracer = current_tracer()
    return tracer.an if tracer is not None else _INT_SIZES


def unknown_symbols(an: Analyzer, expr) -> set:
    """Free symbols of `expr` that the analyzer's env did not create (it has no hint for them)."""
    free = expr.free_symbols if isinstance(expr, sympy.Basic) else set()
    return {s for s in free if s not in an.env.symbols}


def known_true(cond) -> bool:
    """True only if `cond` holds for every size (proved); records nothing."""
    return analyzer().prove(as_expr(cond) if not isinstance(cond, bool) else cond) is True


def known_false(cond) -> bool:
    return analyzer().prove(as_expr(cond) if not isinstance(cond, bool) else cond) is False


def guard_true(cond, what: str = "size condition") -> bool:
    """Decide `cond`; if only the example sizes decide it, the env records a guard."""
    an = analyzer()
    if isinstance(cond, bool):
        return cond
    decided = an.prove(as_expr(cond))
    if decided is not None:
        return decided
    unknown = unknown_symbols(an, as_expr(cond))
    if unknown:
        raise PrimError(f"{what}: deciding {cond} needs the ShapeEnv of its symbols, found "
                        f"none that knows {sorted(map(str, unknown))}")
    return an.evaluate(as_expr(cond))


def require(cond, message: str, error: type | None = None) -> None:
    """Require a size condition eager would fail without: a runtime assert, never a guard.
    `error` (a ShapeError subclass) is what a failing call raises, as eager's type would."""
    if isinstance(cond, bool):
        if not cond:
            raise PrimError(message)
        return
    cond = as_expr(cond)
    if cond is sympy.true:
        return
    an = analyzer()
    if cond is sympy.false or unknown_symbols(an, cond):
        raise PrimError(f"{message}: expected {cond}")
    try:
        an.expect(cond, message, **({} if error is None else {"error": error}))
    except ShapeError as failure:
        raise PrimError(str(failure)) from failure


def simplify(expr):
    return analyzer().simplify(expr) if isinstance(expr, sympy.Basic) else expr


def require_same_size(a, b, message: str) -> None:
    if not analyzer().equal(a, b):
        require(sympy.Eq(as_expr(a), as_expr(b)), message)


def require_same_shape(a_shape, b_shape, what: str) -> None:
    if len(a_shape) != len(b_shape):
        raise PrimError(f"{what}: expected shapes of equal rank, found {tuple(a_shape)} "
                        f"and {tuple(b_shape)}")
    for i, (x, y) in enumerate(zip(a_shape, b_shape)):
        require_same_size(x, y, f"{what}: dim {i} of {tuple(a_shape)} vs {tuple(b_shape)}")


def is_one(size) -> bool:
    """Whether a size is 1, deciding (with a guard) when it is symbolic."""
    if not isinstance(size, sympy.Basic):
        return size == 1
    size = simplify(size)
    if size.is_number:
        return size == 1
    return guard_true(sympy.Eq(size, 1), "broadcast")


def _literal_one(size) -> bool:
    return not isinstance(size, sympy.Basic) and size == 1 or size == sympy.Integer(1)


def _equal_symbolic_sizes(an: Analyzer, a, b) -> bool:
    """Two non-constant sizes equal at the example: decided as `a == b` with a guard."""
    if not isinstance(a, sympy.Basic) or not isinstance(b, sympy.Basic):
        return False
    if unknown_symbols(an, a) or unknown_symbols(an, b):
        return False
    a, b = an.simplify(a), an.simplify(b)
    if a.is_number or b.is_number or an.env.size_hint(a) != an.env.size_hint(b):
        return False
    return an.equal(a, b, guard=True)


def broadcast_shapes(*shapes) -> tuple:
    """torch's broadcasting of `shapes`, the one place it is decided.

    Equal sizes pass; a size 1 stretches. Two different symbolic sizes that are equal at the
    example record the guard `a == b` (which also covers a == b == 1, so no `!= 1` guard and no
    recompile when a length of 1 arrives later); otherwise the guard decides which one is 1 and
    a runtime assert checks that the others match.
    """
    ndim = max((len(s) for s in shapes), default=0)
    an = analyzer()
    out = []
    for i in range(ndim):
        sizes = [s[len(s) - ndim + i] for s in shapes if len(s) - ndim + i >= 0]
        result = sizes[0]
        for size in sizes[1:]:
            if an.equal(result, size):
                continue
            if _equal_symbolic_sizes(an, result, size) or _literal_one(size):
                continue
            if _literal_one(result):  # 1 stretches to any size, 1 included: nothing to decide
                result = size
                continue
            if is_one(size):
                continue
            if is_one(result):
                result = size
                continue
            require(sympy.Eq(as_expr(result), as_expr(size)),
                    f"broadcast: sizes {result} and {size} of shapes {shapes} do not match")
        out.append(result)
    return tuple(out)


def normalize_dim(dim: int, ndim: int, what: str = "dim") -> int:
    """A dim in [-ndim, ndim) as a non-negative int (0-dim tensors accept 0 and -1)."""
    if not isinstance(dim, int):
        raise PrimError(f"{what}: expected an int dim, found {dim!r}")
    bound = max(ndim, 1)
    if not -bound <= dim < bound:
        raise PrimError(f"{what}: expected dim in [{-bound}, {bound}), found {dim}")
    return dim % bound


def check_dims(dims, ndim: int, what: str) -> tuple[int, ...]:
    """Prim dims: distinct ints in [0, ndim) (decompositions normalise negative dims)."""
    dims = tuple(dims)
    for d in dims:
        if not isinstance(d, int) or not 0 <= d < max(ndim, 1) or (ndim == 0 and d != 0):
            raise PrimError(f"{what}: expected dims in [0, {ndim}), found {dims}")
    if len(set(dims)) != len(dims):
        raise PrimError(f"{what}: expected distinct dims, found {dims}")
    return dims


def prod(sizes):
    out = 1
    for s in sizes:
        out = out * s
    return out


def floordiv(a, b):
    """a // b for ints or sympy expressions."""
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    return FloorDiv(as_expr(a), as_expr(b))


def sym_min(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    return sympy.Min(as_expr(a), as_expr(b))


def sym_max(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    return sympy.Max(as_expr(a), as_expr(b))


def concrete(value):
    """A sympy number as a Python int/float/bool; anything else unchanged (for refs)."""
    if isinstance(value, sympy.Basic):
        if value in (sympy.true, sympy.false):
            return bool(value)
        if not value.is_number:
            raise PrimError(f"expected a concrete value, found the symbolic {value}")
        return int(value) if value.is_Integer else float(value)
    return value


def scale_arg(scale):
    """An attention `scale` as the torch kernels' `scale=` takes it: a float, or None."""
    return None if scale is None else float(concrete(scale))
