"""Sample calls for every decomposed torch callable: SAMPLES[target] = (dtypes, build).

`build(n, make, dtype) -> [(args, kwargs), ...]` with sizes written in terms of `n` (see
samples.py). Families (unary math, binary operators and their in-place forms) are generated.
"""

from __future__ import annotations

import operator

import torch
import torch.nn.functional as F

from prims.decompositions.arithmetic import FLOAT_UNARY, SAME_UNARY
from prims.decompositions.registry import DECOMPOSITIONS

T = torch.Tensor
F32, F64, F16, BF16 = torch.float32, torch.float64, torch.float16, torch.bfloat16
I32, I64, BOOL = torch.int32, torch.int64, torch.bool
FLOAT3 = (F32, F16, BF16)
POSITIVE = {"log", "log2", "log1p", "sqrt", "rsqrt", "reciprocal"}

SAMPLES: dict = {}


def sample(*targets, dtypes=(F32,)):
    def register(build):
        for target in targets:
            if target is not None:
                SAMPLES[target] = (dtypes, build)
        return build

    return register


def _targets(name, inplace=False):
    suffix = "_" if inplace else ""
    return [getattr(torch, name + suffix, None), getattr(T, name + suffix, None)]


# --------------------------------------------------------------------------- unary families
for _name in FLOAT_UNARY:
    _kind = "positive" if _name in POSITIVE else "unit"
    _build = (lambda kind: lambda n, make, dt: [((make((n, 3), dt, kind),), {})])(_kind)
    sample(*_targets(_name), getattr(torch.special, _name, None), dtypes=FLOAT3 + (I64,))(_build)
    sample(getattr(T, _name + "_", None), dtypes=FLOAT3)(_build)
sample(F.tanh, F.sigmoid, dtypes=FLOAT3)(lambda n, make, dt: [((make((n, 3), dt),), {})])
for _name in SAME_UNARY + ["round", "negative"]:
    _build = lambda n, make, dt: [((make((n, 3), dt),), {})]  # noqa: E731
    sample(*_targets(_name), dtypes=(F32, F16, I64))(_build)
    sample(getattr(T, _name + "_", None), dtypes=(F32, I64))(_build)
sample(operator.neg, T.__neg__, operator.abs, T.__abs__, dtypes=(F32, I64))(
    lambda n, make, dt: [((make((n, 3), dt),), {})])
sample(torch.round, T.round, dtypes=(F32,))(
    lambda n, make, dt: [((make((n, 3), dt),), {}), ((make((n, 3), dt),), {"decimals": 2})])
sample(torch.logical_not, T.logical_not, torch.isnan, T.isnan, torch.isinf, T.isinf,
       dtypes=(F32, BOOL))(lambda n, make, dt: [((make((n, 3), dt),), {})])
sample(torch.bitwise_not, T.bitwise_not, operator.invert, T.__invert__, dtypes=(I64, BOOL))(
    lambda n, make, dt: [((make((n, 3), dt),), {})])
sample(torch.square, T.square, dtypes=(F32, I64))(lambda n, make, dt: [((make((n, 3), dt),), {})])


# --------------------------------------------------------------------------- binary families
def _binary_build(positive_rhs=False, positive_lhs=False, scalar=2.5):
    def build(n, make, dt):
        a = make((n, 3), dt, "positive" if positive_lhs else "randn")
        if positive_rhs and not dt.is_floating_point:
            b = make((3,), dt, "index", high=4)
            b = b + 1 if isinstance(b, torch.Tensor) else b
        else:
            b = make((3,), dt, "positive" if positive_rhs else "randn")
        s = scalar if dt.is_floating_point else 3
        mixed = make((1, 3), F64 if dt.is_floating_point else I32,
                     "positive" if positive_rhs else "randn")
        cases = [((a, b), {}), ((a, mixed), {})]
        return cases + [((a, s), {})] if scalar is not None else cases

    return build


BINARY = {
    # name: (extra functional targets, in-place operator targets, build)
    "add": ((operator.add, T.__add__, T.__radd__), (operator.iadd, T.__iadd__),
            _binary_build()),
    "sub": ((operator.sub, T.__sub__, torch.subtract, T.subtract, T.__rsub__, torch.rsub),
            (operator.isub, T.__isub__), _binary_build()),
    "mul": ((operator.mul, T.__mul__, torch.multiply, T.multiply, T.__rmul__),
            (operator.imul, T.__imul__), _binary_build()),
    "div": ((operator.truediv, T.__truediv__, torch.true_divide, T.true_divide, torch.divide,
             T.divide, T.__rtruediv__), (operator.itruediv, T.__itruediv__),
            _binary_build(positive_rhs=True, positive_lhs=True)),
    "floor_divide": ((operator.floordiv, T.__floordiv__, T.__rfloordiv__),
                     (operator.ifloordiv, T.__ifloordiv__),
                     _binary_build(positive_rhs=True, positive_lhs=True)),
    "remainder": ((operator.mod, T.__mod__, T.__rmod__), (operator.imod, T.__imod__),
                  _binary_build(positive_rhs=True, positive_lhs=True)),
    "pow": ((operator.pow, T.__pow__, T.__rpow__), (operator.ipow, T.__ipow__),
            _binary_build(positive_rhs=True, positive_lhs=True, scalar=2)),
    "maximum": ((), (), _binary_build(scalar=None)),
    "minimum": ((), (), _binary_build(scalar=None)),
    "atan2": ((), (), _binary_build(scalar=None)),
    "eq": ((operator.eq, T.__eq__), (), _binary_build(scalar=0.0)),
    "ne": ((operator.ne, T.__ne__), (), _binary_build(scalar=0.0)),
    "lt": ((operator.lt, T.__lt__), (), _binary_build(scalar=0.0)),
    "le": ((operator.le, T.__le__), (), _binary_build(scalar=0.0)),
    "gt": ((operator.gt, T.__gt__), (), _binary_build(scalar=0.0)),
    "ge": ((operator.ge, T.__ge__), (), _binary_build(scalar=0.0)),
    "logical_and": ((), (), _binary_build(scalar=None)),
    "logical_or": ((), (), _binary_build(scalar=None)),
    "logical_xor": ((), (), _binary_build(scalar=None)),
}
for _name, (_extra, _inplace_ops, _build) in BINARY.items():
    _dtypes = (F32, F16, I64) if _name not in ("atan2",) else (F32, F16)
    sample(*_targets(_name), *_extra, dtypes=_dtypes)(_build)
    sample(getattr(T, _name + "_", None), *_inplace_ops, dtypes=(F32, F64))(_build)
for _name, _op, _dunder, _iop, _idunder in (
    ("bitwise_and", operator.and_, T.__and__, operator.iand, T.__iand__),
    ("bitwise_or", operator.or_, T.__or__, operator.ior, T.__ior__),
    ("bitwise_xor", operator.xor, T.__xor__, operator.ixor, T.__ixor__),
):
    _build = lambda n, make, dt: [((make((n, 3), dt), make((3,), dt)), {})]  # noqa: E731
    sample(*_targets(_name), _op, _dunder, dtypes=(I64, BOOL))(_build)
    sample(getattr(T, _name + "_"), _iop, _idunder, dtypes=(I64, BOOL))(_build)


@sample(torch.clamp, T.clamp, torch.clip, T.clip, T.clamp_, dtypes=(F32, F16))
def _clamp(n, make, dt):
    a = make((n, 3), dt)
    return [((a,), {"min": -0.5}), ((a, -0.5, 0.5), {}), ((a,), {"max": 0.25})]


@sample(torch.clamp_min, T.clamp_min, torch.clamp_max, T.clamp_max)
def _clamp_one(n, make, dt):
    return [((make((n, 3), dt), 0.1), {})]


@sample(torch.where, dtypes=(F32, I64))
def _where(n, make, dt):
    return [((make((n, 1), dt, "bool"), make((n, 3), dt), make((3,), dt)), {}),
            ((make((n, 3), dt, "bool"), make((n, 3), dt), 0), {})]


@sample(T.where, dtypes=(F32, I64))
def _tensor_where(n, make, dt):
    return [((make((n, 3), dt), make((n, 1), dt, "bool"), make((3,), dt)), {}),
            ((make((n, 3), dt), make((n, 3), dt, "bool"), 0), {})]


@sample(torch.lerp, T.lerp, dtypes=(F32,))
def _lerp(n, make, dt):
    return [((make((n, 3), dt), make((n, 3), dt), 0.3), {})]


def missing_samples() -> list:
    """Decomposed callables with neither samples here nor an OpInfo entry of op_db whose
    function they are (tests/opinfo/ runs those against eager, forward and backward)."""
    from torch.testing._internal.common_methods_invocations import op_db

    opinfo = set()
    for o in op_db:
        for fn in (o.op, getattr(o, "method_variant", None), getattr(o, "inplace_variant", None)):
            try:
                opinfo.add(fn)
            except TypeError:  # unhashable
                pass
    return [t for t in DECOMPOSITIONS
            if t not in SAMPLES and t not in opinfo and t not in GENERATOR_STATE_CALLS]


# Decompositions that return no tensor: they switch the graph's random stream
# (prims/generators.py); tests/symc/test_rng_state.py runs them in compiled programs.
GENERATOR_STATE_CALLS = frozenset({torch.random.get_rng_state, torch.random.set_rng_state,
                                   torch.random.manual_seed, torch.cuda.get_rng_state,
                                   torch.cuda.set_rng_state})


from tests.prims import decomposition_samples_extra  # noqa: E402,F401  (registers its rows)
from tests.prims import decomposition_samples_random  # noqa: E402,F401  (registers its rows)
