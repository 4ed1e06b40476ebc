"""The ops handler that prints Triton: each `ops.<name>(...)` call appends lines to a kernel body.

    ops.add(ops.load("x", x0), ops.constant(1.0, torch.float32))
    ->  tmp0 = tl.load(x_ptr + (x0), xmask, other=0.0).to(tl.float32)
        tmp1 = tmp0 + 1.0

Values are `TV(name, dtype)`: a Triton variable and the torch dtype it stands for. Half floats
are computed in f32 (loaded with an upcast, stored with a downcast). Identical lines are shared
(common-subexpression elimination keyed by the printed right-hand side). Loads, stores and
reductions are delegated to the kernel writer (`inductor/codegen/triton.py`), which owns masks,
indices and loops; everything else is pointwise math printed here. Math without a `tl.*` builtin
goes through `inductor/runtime/triton_math.py` so it also runs under TRITON_INTERPRET=1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy
import torch

from inductor.codegen.common import float_ratio
from inductor.codegen.triton_printer import compute_dtype, triton_dtype
from prims import opcodes
from prims.opcodes import PrimOp as P


@dataclass(frozen=True, slots=True)
class TV:
    """A Triton value: variable (or literal) text and the torch dtype it represents."""

    name: str
    dtype: torch.dtype
    const: object = None  # the Python value when this is a literal constant

    def __str__(self) -> str:
        return self.name


def _is_float(dtype: torch.dtype) -> bool:
    return dtype.is_floating_point


def _literal(value, dtype: torch.dtype) -> str:
    if dtype == torch.bool:
        return "1" if value else "0"
    if _is_float(dtype):
        value = float(value)
        if math.isnan(value):
            return 'float("nan")'
        if math.isinf(value):
            return 'float("inf")' if value > 0 else 'float("-inf")'
        return repr(value)
    return str(int(value))


# Triton types a Python int as int32: `u8 + 3` is int32 (a loop-carried uint8 accumulator then
# changes type) and `u8 // 3` mixes signedness (a compile error). Literals of these dtypes are
# printed as typed scalars so the arithmetic stays in the tensor's dtype, as torch's does.
NARROW_INTS = frozenset({torch.uint8, torch.int8, torch.int16})


def typed_literal(value, dtype: torch.dtype) -> str:
    """`_literal`, as a scalar of `dtype` where a bare Python int would be typed int32 (wrapped
    into the dtype's range first, as torch wraps `u8 + 300`)."""
    if dtype not in NARROW_INTS:
        return _literal(value, dtype)
    info = torch.iinfo(dtype)
    wrapped = (int(value) - info.min) % (info.max - info.min + 1) + info.min
    return f"tl.full([], {wrapped}, {triton_dtype(dtype)})"


class TritonOps:
    """Pointwise ops printed as Triton; memory ops forwarded to `writer` (see module doc)."""

    def __init__(self, writer):
        self.writer = writer

    # -- emission ------------------------------------------------------------------------
    def _emit(self, rhs: str, dtype: torch.dtype) -> TV:
        return TV(self.writer.emit(rhs), dtype)

    def _value(self, x, like: torch.dtype | None = None) -> TV:
        """Python scalars become typed literals (like the other operand when given)."""
        if isinstance(x, TV):
            return x
        if isinstance(x, bool):
            return TV(_literal(x, torch.bool), torch.bool, x)
        if isinstance(x, int):
            dtype = like if like is not None else torch.int64
            return TV(typed_literal(x, dtype), dtype, x)
        if isinstance(x, float):
            dtype = like if like is not None and _is_float(like) else torch.float32
            return TV(_literal(x, dtype), dtype, x)
        if isinstance(x, sympy.Basic):
            return self.index_expr(x, like or torch.int64)
        raise TypeError(f"Triton ops: unexpected operand {x!r}")

    # -- memory (the writer knows masks and pointers) --------------------------------------
    def load(self, name: str, index) -> TV:
        return self.writer.load(name, sympy.sympify(index))

    def store(self, name: str, index, value, mode=None) -> None:
        self.writer.store(name, sympy.sympify(index), self._value(value), mode)

    def masked(self, mask, body, other):
        """`body()` with its loads and error reports masked by `mask` (see inductor/ops.py)."""
        mask = self._value(mask)
        self.writer.masks.append(str(mask))
        try:
            value = body()
        finally:
            self.writer.masks.pop()
        return self.where(mask, value, other)

    def indirect_indexing(self, value, size, check: bool = True) -> sympy.Symbol:
        return self.writer.indirect_indexing(self._value(value), size)

    def reduction(self, dtype, src_dtype, reduction_type: str, value):
        return self.writer.reduction(dtype, src_dtype, reduction_type, value)

    def index_expr(self, expr, dtype: torch.dtype = torch.int64) -> TV:
        ratio = float_ratio(expr, dtype)
        if ratio is not None:  # e.g. 1/s1 (a mean's scale): float division of two integers
            return self.div(self.index_expr(ratio[0], dtype), self.index_expr(ratio[1], dtype))
        text = self.writer.print_index(sympy.sympify(expr))
        if sympy.sympify(expr).is_Integer:
            return TV(typed_literal(int(expr), dtype), dtype, int(expr))
        return self._emit(f"({text}).to({triton_dtype(compute_dtype(dtype))})", dtype)

    def constant(self, value, dtype: torch.dtype) -> TV:
        return TV(typed_literal(value, dtype), dtype, value)

    def philox_rand(self, seed_name: str, offset, dtype: torch.dtype = torch.float32) -> TV:
        """uniform [0, 1) for the element at linear counter `offset` (a sympy expression)."""
        return self.writer.philox_rand(seed_name, sympy.sympify(offset), dtype)

    # -- conversions -----------------------------------------------------------------------
    def to_dtype(self, x, dtype: torch.dtype, src_dtype=None) -> TV:
        x = self._value(x)
        if x.const is not None:
            return self.constant(x.const, dtype)
        if x.dtype == dtype:
            return x
        target = triton_dtype(compute_dtype(dtype))
        if dtype == torch.bool:
            return self._emit(f"({x} != 0)", dtype)
        if dtype in (torch.float16, torch.bfloat16):  # round to the half type, compute in f32
            return self._emit(f"{x}.to({triton_dtype(dtype)}).to(tl.float32)", dtype)
        return self._emit(f"{x}.to({target})", dtype)

    # -- pointwise math --------------------------------------------------------------------
    def _unary(self, op: P, x) -> TV:
        x = self._value(x)
        if op in opcodes.FLOAT_UNARY and not _is_float(x.dtype):
            x = self.to_dtype(x, torch.float32)
        if op in opcodes.ROUNDING and not _is_float(x.dtype):
            return x
        if op == P.ABS and x.dtype == torch.bool:
            return x
        return self._emit(TRITON_OPS[op].format(x), x.dtype)

    def _binary(self, op: P, a, b) -> TV:
        a, b = self._pair(a, b)
        dtype = a.dtype
        if op in (P.MAXIMUM, P.MINIMUM) and not _is_float(dtype):
            fn = "tl.maximum" if op == P.MAXIMUM else "tl.minimum"
            return self._emit(f"{fn}({a}, {b})", dtype)
        if op == P.ATAN2:
            a, b = self.to_dtype(a, torch.float32), self.to_dtype(b, torch.float32)
            dtype = torch.float32
        return self._emit(TRITON_OPS[op].format(a, b), dtype)

    def _pair(self, a, b) -> tuple[TV, TV]:
        if isinstance(a, TV) and not isinstance(b, TV):
            return a, self._value(b, a.dtype)
        if isinstance(b, TV) and not isinstance(a, TV):
            return self._value(a, b.dtype), b
        return self._value(a), self._value(b)

    def div(self, a, b) -> TV:
        a, b = self._pair(a, b)
        if not _is_float(a.dtype):
            a = self.to_dtype(a, torch.float32)
        if not _is_float(b.dtype):
            b = self.to_dtype(b, a.dtype)
        return self._emit(f"{a} / {b}", a.dtype)

    def floor_divide(self, a, b) -> TV:
        a, b = self._pair(a, b)
        if _is_float(a.dtype):
            return self._emit(f"tl.floor({a} / {b})", a.dtype)
        return self._emit(f"floordiv_py({a}, {self._nonzero(a, b)})", a.dtype)

    def _nonzero(self, a: TV, b: TV) -> str:
        """The integer divisor `b` with zeros replaced by 1, after flagging them (eager raises
        ZeroDivisionError; a zero divisor must not trap or give garbage silently)."""
        if b.const is not None and int(b.const) != 0:
            return str(b)
        # a constant zero divisor fails in every lane: `ok` must still be a tile (a mask)
        ok = self.writer.emit(f"{b} != 0" if b.const is None else "xmask == 0")
        self.writer.flag_error(ok, 2, f"{a} {b}")
        return self.writer.emit(f"tl.where({ok}, {b}, 1)")

    def remainder(self, a, b) -> TV:
        a, b = self._pair(a, b)
        if _is_float(a.dtype):
            return self._emit(f"{a} - {b} * tl.floor({a} / {b})", a.dtype)
        return self._emit(f"mod_py({a}, {self._nonzero(a, b)})", a.dtype)

    def pow(self, a, b) -> TV:
        a, b = self._pair(a, b)
        if b.const is not None and float(b.const) == int(b.const) and 0 <= int(b.const) <= 4:
            n = int(b.const)
            if n == 0:
                return self.constant(1, a.dtype)
            return self._emit(" * ".join([str(a)] * n), a.dtype)
        if not _is_float(a.dtype) and not _is_float(b.dtype):
            raise NotImplementedError("Triton codegen: integer pow with a tensor exponent")
        if b.const == 0.5:
            return self._emit(f"tl.sqrt({a})", a.dtype)
        if b.const == -1:
            return self._emit(f"1.0 / {a}", a.dtype)
        a = self.to_dtype(a, torch.float32) if not _is_float(a.dtype) else a
        b = self.to_dtype(b, a.dtype) if b.dtype != a.dtype else b
        return self._emit(f"pow_({a}, {b})", a.dtype)

    def where(self, cond, a, b) -> TV:
        a, b = self._pair(a, b)
        cond = self._value(cond)
        return self._emit(f"tl.where({cond}, {a}, {b})", a.dtype if isinstance(a, TV) else b.dtype)

    def sign(self, x) -> TV:
        x = self._value(x)
        one, zero = typed_literal(1, x.dtype), typed_literal(0, x.dtype)
        return self._emit(
            f"tl.where({x} > {zero}, {one}, {zero}) - tl.where({x} < {zero}, {one}, {zero})",
            x.dtype)

    def isnan(self, x) -> TV:
        x = self._value(x)
        return self._emit(f"{x} != {x}", torch.bool) if _is_float(x.dtype) else self.constant(
            False, torch.bool)

    def isinf(self, x) -> TV:
        x = self._value(x)
        if not _is_float(x.dtype):
            return self.constant(False, torch.bool)
        return self._emit(f"tl.abs({x}) == float(\"inf\")", torch.bool)

    def logical_not(self, x) -> TV:
        x = self._value(x)
        return self._emit(f"{x} == 0", torch.bool)

    def __getattr__(self, name: str):
        rule = TRITON_OPS.get(name)
        if not isinstance(rule, str):  # a method is found before __getattr__ is asked
            raise AttributeError(f"Triton codegen has no op {name!r}; add it to TRITON_OPS in "
                                 "inductor/codegen/triton_ops.py")
        op = P(name)
        if op in opcodes.UNARY:
            return lambda x: self._unary(op, x)
        if op in opcodes.COMPARISONS:
            return lambda a, b: self._compare(rule, a, b)
        if op in opcodes.LOGICAL:
            return lambda a, b: self._logical(rule, a, b)
        return lambda a, b: self._binary(op, a, b)

    def _compare(self, fmt: str, a, b) -> TV:
        a, b = self._pair(a, b)
        return self._emit(fmt.format(a, b), torch.bool)

    def _logical(self, fmt: str, a, b) -> TV:
        a, b = self._pair(a, b)
        a = a if a.dtype == torch.bool else self._emit(f"{a} != 0", torch.bool)
        b = b if b.dtype == torch.bool else self._emit(f"{b} != 0", torch.bool)
        return self._emit(fmt.format(a, b), torch.bool)


# Every kernel op (inductor/ops.py POINTWISE_OPS) in Triton: a format of the operands (unary
# math, binary, comparison and logical ops, by family), or the TritonOps method that prints it.
TRITON_OPS: dict[P, str | object] = {
    P.ABS: "tl.abs({0})",
    P.NEG: "-{0}",
    P.EXP: "tl.exp({0})",
    P.EXP2: "tl.exp2({0})",
    P.LOG: "tl.log({0})",
    P.LOG2: "tl.log2({0})",
    P.LOG1P: "log1p_({0})",
    P.EXPM1: "expm1_({0})",
    P.SQRT: "tl.sqrt({0})",
    P.RSQRT: "tl.math.rsqrt({0})",
    P.SIN: "tl.sin({0})",
    P.COS: "tl.cos({0})",
    P.TAN: "tan_({0})",
    P.TANH: "tanh_({0})",
    P.ERF: "tl.math.erf({0})",
    P.SIGMOID: "sigmoid_({0})",
    P.RECIPROCAL: "(1.0 / {0})",
    P.FLOOR: "tl.floor({0})",
    P.CEIL: "tl.ceil({0})",
    P.ROUND: "round_({0})",
    P.TRUNC: "trunc_({0})",
    P.BITWISE_NOT: "~{0}",
    P.SIGN: TritonOps.sign,
    P.ISNAN: TritonOps.isnan,
    P.ISINF: TritonOps.isinf,
    P.LOGICAL_NOT: TritonOps.logical_not,
    P.ADD: "{0} + {1}",
    P.SUB: "{0} - {1}",
    P.MUL: "{0} * {1}",
    P.MAXIMUM: "maximum_propagate_nan({0}, {1})",
    P.MINIMUM: "minimum_propagate_nan({0}, {1})",
    P.ATAN2: "atan2_({0}, {1})",
    P.BITWISE_AND: "{0} & {1}",
    P.BITWISE_OR: "{0} | {1}",
    P.BITWISE_XOR: "{0} ^ {1}",
    P.DIV: TritonOps.div,
    P.FLOOR_DIVIDE: TritonOps.floor_divide,
    P.REMAINDER: TritonOps.remainder,
    P.POW: TritonOps.pow,
    P.EQ: "{0} == {1}",
    P.NE: "{0} != {1}",
    P.LT: "{0} < {1}",
    P.LE: "{0} <= {1}",
    P.GT: "{0} > {1}",
    P.GE: "{0} >= {1}",
    P.LOGICAL_AND: "{0} & {1}",
    P.LOGICAL_OR: "{0} | {1}",
    P.LOGICAL_XOR: "{0} ^ {1}",
    P.WHERE: TritonOps.where,
}
