"""The IR's oracle: run a fused group with torch (`TorchHandler`), one vectorized step per node.

Loop variables become broadcastable `arange` tensors over [*xranges, *rranges]; `ops.load`
gathers from flat buffers, `ops.reduction` reduces over the r dims (keepdim), `ops.store`
scatters. Halves are computed in f32 and rounded on store, like the C++ and Triton backends.

    run_group_torch(group, {"arg0": x, "buf0": out}, {s0: 7})
"""

from __future__ import annotations

import math

import sympy
import torch

from inductor.ops import ALL_OPS, reduction_op
from prims import opcodes
from prims.opcodes import PrimOp as P
from prims.random import philox_hash, uniform_from_hash
from symbolic import FloorDiv

HALVES = (torch.float16, torch.bfloat16)


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    return torch.float32 if dtype in HALVES else dtype


def eval_index(expr, values: dict):
    """Evaluate a sympy index expression with tensors/ints bound to its symbols."""
    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return int(expr)
    if expr.is_Symbol:
        return values[expr]
    args = [eval_index(a, values) for a in expr.args]
    if isinstance(expr, sympy.Add):
        out = args[0]
        for a in args[1:]:
            out = out + a
        return out
    if isinstance(expr, sympy.Mul):
        out = args[0]
        for a in args[1:]:
            out = out * a
        return out
    if isinstance(expr, FloorDiv):
        return _floordiv(args[0], args[1])
    if isinstance(expr, sympy.Mod):
        return args[0] % args[1]
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and int(expr.exp) >= 0:
        return args[0] ** int(expr.exp)
    if isinstance(expr, (sympy.Min, sympy.Max)):
        fn = torch.minimum if isinstance(expr, sympy.Min) else torch.maximum
        out = args[0]
        for a in args[1:]:
            if isinstance(out, int) and isinstance(a, int):
                out = min(out, a) if isinstance(expr, sympy.Min) else max(out, a)
            else:
                out = fn(torch.as_tensor(out), torch.as_tensor(a))
        return out
    raise NotImplementedError(f"eval_index: {type(expr).__name__} in {expr}")


def _floordiv(a, b):
    if isinstance(a, int) and isinstance(b, int):
        return a // b
    return torch.div(torch.as_tensor(a), b, rounding_mode="floor")


# Every kernel op (inductor/ops.py POINTWISE_OPS) as the torch function that evaluates it.
TORCH_OPS = {
    P.ABS: torch.abs, P.NEG: torch.neg, P.EXP: torch.exp, P.EXP2: torch.exp2, P.LOG: torch.log,
    P.LOG2: torch.log2, P.LOG1P: torch.log1p, P.EXPM1: torch.expm1, P.SQRT: torch.sqrt,
    P.RSQRT: torch.rsqrt, P.SIN: torch.sin, P.COS: torch.cos, P.TAN: torch.tan,
    P.TANH: torch.tanh, P.ERF: torch.erf, P.SIGMOID: torch.sigmoid,
    P.RECIPROCAL: torch.reciprocal, P.SIGN: torch.sign, P.FLOOR: torch.floor,
    P.CEIL: torch.ceil, P.ROUND: torch.round, P.TRUNC: torch.trunc,
    P.LOGICAL_NOT: torch.logical_not, P.BITWISE_NOT: torch.bitwise_not, P.ISNAN: torch.isnan,
    P.ISINF: torch.isinf,
    P.ADD: torch.add, P.SUB: torch.sub, P.MUL: torch.mul, P.DIV: torch.true_divide,
    P.FLOOR_DIVIDE: torch.floor_divide, P.REMAINDER: torch.remainder, P.POW: torch.pow,
    P.MAXIMUM: torch.maximum, P.MINIMUM: torch.minimum, P.ATAN2: torch.atan2,
    P.BITWISE_AND: torch.bitwise_and, P.BITWISE_OR: torch.bitwise_or,
    P.BITWISE_XOR: torch.bitwise_xor, P.EQ: torch.eq, P.NE: torch.ne, P.LT: torch.lt,
    P.LE: torch.le, P.GT: torch.gt, P.GE: torch.ge, P.LOGICAL_AND: torch.logical_and,
    P.LOGICAL_OR: torch.logical_or, P.LOGICAL_XOR: torch.logical_xor,
    P.WHERE: torch.where,
}


def _prod(v, dims, acc):
    out = v.to(acc)
    for d in dims:
        out = out.prod(d, keepdim=True)
    return out


def _flag(fn):
    def reduce(v, dims, acc):
        out = v != 0
        for d in dims:
            out = fn(out, d, keepdim=True)
        return out
    return reduce


def _arg(fn):
    def reduce(v, dims, acc):
        flat = v.reshape(*v.shape[:v.ndim - len(dims)], -1)
        out = fn(flat, -1)
        return out.reshape(*out.shape, *([1] * len(dims)))
    return reduce


def _welford(v, dims, acc):
    v = v.to(torch.float64) if v.dtype == torch.float64 else v.to(torch.float32)
    mean = v.mean(dims, keepdim=True)
    m2 = ((v - mean) ** 2).sum(dims, keepdim=True)
    count = torch.full_like(mean, math.prod(v.shape[d] for d in dims))
    return mean, m2, count


# Every reduction: fn(value over the full shape, the r dims, accumulator dtype), keepdim.
TORCH_REDUCTIONS = {
    P.SUM: lambda v, dims, acc: v.sum(dims, keepdim=True, dtype=acc),
    P.PROD: _prod,
    P.AMAX: lambda v, dims, acc: v.amax(dims, keepdim=True),
    P.AMIN: lambda v, dims, acc: v.amin(dims, keepdim=True),
    P.ANY: _flag(torch.any),
    P.ALL: _flag(torch.all),
    P.ARGMAX: _arg(torch.argmax),
    P.ARGMIN: _arg(torch.argmin),
    P.VAR_MEAN: _welford,
}


class TorchHandler:
    """Evaluates ops on torch tensors (see the module docstring)."""

    def __init__(self, buffers: dict, dtypes: dict, symbols: dict, rdims: tuple, full_shape):
        self.buffers = buffers  # name -> flat tensor (storage)
        self.dtypes = dtypes
        self.values = dict(symbols)
        self.rdims = rdims
        self.full_shape = tuple(full_shape)
        self.n_indirect = 0
        self.masked_depth = 0
        self.masks: list = []  # of the enclosing ops.masked bodies: their stores keep to them

    def _t(self, x, like=None):
        if isinstance(x, torch.Tensor):
            return x
        dtype = like.dtype if isinstance(like, torch.Tensor) else None
        return torch.tensor(x, dtype=dtype)

    def load(self, name, index):
        flat = self.buffers[name]
        idx = eval_index(index, self.values)
        if self.masked_depth:  # positions outside the mask may be out of bounds: read 0 there
            if flat.numel() == 0:
                return torch.zeros((), dtype=compute_dtype(flat.dtype))
            idx = torch.as_tensor(idx).clamp(0, flat.numel() - 1)
        out = flat[idx] if isinstance(idx, int) else flat[torch.as_tensor(idx)]
        return out.to(compute_dtype(out.dtype))

    def masked(self, mask, body, other):
        self.masked_depth += 1
        self.masks.append(self._t(mask).to(torch.bool))
        try:
            value = body()
        finally:
            self.masked_depth -= 1
            self.masks.pop()
        return self.where(mask, value, other)

    def store(self, name, index, value, mode=None):
        flat = self.buffers[name]
        idx = torch.as_tensor(eval_index(index, self.values))
        value = self._t(value).to(flat.dtype)
        shape = torch.broadcast_shapes(idx.shape, value.shape, *(m.shape for m in self.masks))
        idx, value = idx.expand(shape), value.expand(shape)
        if self.masks:  # only where every enclosing mask holds (out of bounds elsewhere)
            keep = self.masks[0].expand(shape)
            for m in self.masks[1:]:
                keep = keep & m.expand(shape)
            idx, value = idx[keep], value[keep]
        flat[idx] = value

    def constant(self, value, dtype):
        return torch.tensor(value, dtype=compute_dtype(dtype))

    def index_expr(self, expr, dtype=torch.int64):
        return torch.as_tensor(eval_index(expr, self.values)).to(compute_dtype(dtype))

    def to_dtype(self, x, dtype, src_dtype=None):
        x = self._t(x)
        if dtype in HALVES:
            return x.to(dtype).to(torch.float32)
        return x.to(dtype)

    def where(self, cond, a, b):
        a, b = self._t(a, b), self._t(b, a)
        return TORCH_OPS[P.WHERE](self._t(cond), a, b)

    def philox_rand(self, seed_name, offset, dtype=torch.float32):
        counter = torch.as_tensor(eval_index(offset, self.values)).to(torch.int64)
        u = uniform_from_hash(philox_hash(self.buffers[seed_name][0], counter), dtype)
        return u.to(compute_dtype(dtype))

    def indirect_indexing(self, value, size):
        sym = sympy.Symbol(f"indirect{self.n_indirect}", integer=True)
        self.n_indirect += 1
        size_v = eval_index(size, self.values)
        value = self._t(value).to(torch.int64)
        bad = (value < 0) | (value >= size_v)
        if bad.any() and not self.masked_depth:
            raise IndexError(f"index out of range in a gather: expected indices in "
                             f"[0, {size_v}), found {value[bad].flatten()[0].item()}")
        self.values[sym] = torch.where(bad, 0, value)
        return sym

    def reduction(self, dtype, src_dtype, reduction_type, value):
        v = self._t(value).expand(self.full_shape)
        return TORCH_REDUCTIONS[reduction_op(reduction_type)](v, self.rdims, compute_dtype(dtype))

    def __getattr__(self, name):
        fn = TORCH_OPS.get(name)
        if fn is None:
            if name in ALL_OPS:
                raise NotImplementedError(f"TorchHandler: op {name!r}")
            raise AttributeError(name)
        if name in opcodes.UNARY:
            def unary(x):
                x = self._t(x)
                if name in opcodes.FLOAT_UNARY and not x.is_floating_point():
                    x = x.to(torch.float32)
                return fn(x)
            return unary
        return lambda a, b: fn(self._t(a, b), self._t(b, a))


def run_group_torch(group, tensors: dict, symbols: dict) -> None:
    """Run every node of `group` on `tensors` (name -> tensor, written in place)."""
    xs = [_int(s, symbols) for s in group.xranges]
    rs = [_int(s, symbols) for s in group.rranges]
    full = xs + rs
    n = len(full)
    variables = []
    for pos, size in enumerate(full):
        shape = [1] * n
        shape[pos] = size
        variables.append(torch.arange(size, dtype=torch.int64).view(shape))
    xvars = [sympy.Symbol(f"xt{i}", integer=True, nonnegative=True) for i in range(len(xs))]
    rvars = [sympy.Symbol(f"rt{i}", integer=True, nonnegative=True) for i in range(len(rs))]
    values = dict(symbols)
    values.update(zip(xvars + rvars, variables))
    flat = {name: t.view(-1) if t.is_contiguous() else t.reshape(-1)
            for name, t in tensors.items()}
    handler = TorchHandler(flat, group.buffers, values, tuple(range(len(xs), n)), full)
    for node in group.nodes:
        node.body(handler, tuple(xvars), tuple(rvars))


def _int(expr, symbols) -> int:
    value = sympy.sympify(expr).xreplace(symbols)
    return int(value)
