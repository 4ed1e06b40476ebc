"""C++ printing of loop ops: each op becomes one `auto tmpN = <expr>;` line, typed.

Values are `CV(name, dtype)` where dtype is the logical torch dtype; halves are computed as
float and rounded only by `to_dtype` and stores. Index expressions print with int64 arithmetic
(`CppIndexPrinter`). FloorDiv/Mod print as C's `/` and `%` only where the Analyzer's
`native_division` proves both agree with Python's floor semantics (the Triton printer asks the
same proof); elsewhere as the prelude's `symc_floordiv`/`symc_mod`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import sympy
import torch

from inductor.codegen.common import float_ratio
from inductor.codegen.division import exact_quotient
from prims import opcodes
from prims.opcodes import PrimOp as P
from symbolic import Analyzer, FloorDiv

HALVES = (torch.float16, torch.bfloat16)
COMPUTE_CTYPE = {torch.float32: "float", torch.float16: "float", torch.bfloat16: "float",
                 torch.float64: "double", torch.int64: "int64_t", torch.int32: "int32_t",
                 torch.int16: "int16_t", torch.int8: "int8_t", torch.uint8: "uint8_t",
                 torch.bool: "bool"}
STORAGE_CTYPE = {**COMPUTE_CTYPE, torch.float16: "_Float16", torch.bfloat16: "uint16_t"}


def is_float(dtype) -> bool:
    return dtype.is_floating_point


@dataclass(frozen=True)
class CV:
    name: str
    dtype: torch.dtype

    def __str__(self) -> str:
        return self.name


def literal(value, dtype: torch.dtype) -> str:
    if dtype == torch.bool:
        return "true" if value else "false"
    if is_float(dtype):
        value = float(value)
        ctype = COMPUTE_CTYPE[dtype]
        if math.isnan(value):
            return f"(({ctype})NAN)"
        if math.isinf(value):
            return f"(({ctype}){'-' if value < 0 else ''}INFINITY)"
        return f"(({ctype}){value.hex()})"
    return f"(({COMPUTE_CTYPE[dtype]}){int(value)}LL)"


class CppIndexPrinter:
    """sympy index -> C++ int64 expression; the Analyzer `an` decides divisions."""

    def __init__(self, an: Analyzer | None = None):
        self.an = an if an is not None else Analyzer()

    def __call__(self, expr) -> str:
        return self.p(sympy.sympify(expr))

    def p(self, e) -> str:
        quotient = exact_quotient(e)
        if quotient is not None:
            return f"(({self.p(quotient[0])}) / {self.p(quotient[1])})"
        if e.is_Integer:
            return f"{int(e)}LL" if abs(int(e)) > 2**31 - 1 else str(int(e))
        if e.is_Symbol:
            return e.name
        if isinstance(e, sympy.Add):
            return "(" + " + ".join(self.p(a) for a in e.args) + ")"
        if isinstance(e, sympy.Mul):
            return "(" + " * ".join(self.p(a) for a in e.args) + ")"
        if isinstance(e, sympy.Pow) and e.exp.is_Integer and int(e.exp) > 0:
            return "(" + " * ".join([self.p(e.base)] * int(e.exp)) + ")"
        if isinstance(e, (FloorDiv, sympy.Mod)):
            a, b = e.args
            if self.an.native_division(a, b):
                return f"({self.p(a)} {'/' if isinstance(e, FloorDiv) else '%'} {self.p(b)})"
            fn = "symc_floordiv" if isinstance(e, FloorDiv) else "symc_mod"
            return f"{fn}<int64_t>({self.p(a)}, {self.p(b)})"
        if isinstance(e, (sympy.Min, sympy.Max)):
            fn = "std::min" if isinstance(e, sympy.Min) else "std::max"
            out = self.p(e.args[0])
            for a in e.args[1:]:
                out = f"{fn}<int64_t>({out}, {self.p(a)})"
            return out
        raise NotImplementedError(f"C++ index printer: {type(e).__name__} in {e}")


class CppOps:
    """The ops handler for C++ (memory ops go to `writer`, see inductor/codegen/cpp.py)."""

    def __init__(self, writer):
        self.w = writer

    def _emit(self, text: str, dtype: torch.dtype) -> CV:
        return self.w.emit(text, dtype)

    def _v(self, x, like=None) -> CV:
        if isinstance(x, CV):
            return x
        if isinstance(x, bool):
            return CV(literal(x, torch.bool), torch.bool)
        if isinstance(x, int):
            dtype = like if like is not None else torch.int64
            return CV(literal(x, dtype), dtype)
        if isinstance(x, float):
            dtype = like if like is not None and is_float(like) else torch.float32
            return CV(literal(x, dtype), dtype)
        if isinstance(x, sympy.Basic):
            return self.index_expr(x, like or torch.int64)
        raise TypeError(f"C++ ops: unexpected operand {x!r}")

    def _pair(self, a, b):
        if isinstance(a, CV):
            return a, self._v(b, a.dtype)
        b = self._v(b)
        return self._v(a, b.dtype), b

    def _float(self, x: CV) -> CV:
        return x if is_float(x.dtype) else self.to_dtype(x, torch.float32)

    # -- memory and constants ---------------------------------------------------------------
    def load(self, name, index):
        return self.w.load(name, sympy.sympify(index))

    def store(self, name, index, value, mode=None):
        self.w.store(name, sympy.sympify(index), self._v(value), mode)

    def reduction(self, dtype, src_dtype, reduction_type, value):
        return self.w.reduction(dtype, src_dtype, reduction_type, self._v(value, src_dtype))

    def indirect_indexing(self, value, size):
        return self.w.indirect_indexing(self._v(value), sympy.sympify(size))

    def masked(self, mask, body, other):
        return self.w.masked(self._v(mask), body, other)

    def philox_rand(self, seed_name, offset, dtype=torch.float32):
        return self.w.philox_rand(seed_name, sympy.sympify(offset), dtype)

    def constant(self, value, dtype):
        return CV(literal(value, dtype), dtype)

    def index_expr(self, expr, dtype=torch.int64):
        ratio = float_ratio(expr, dtype)
        if ratio is not None:  # e.g. 1/s1 (a mean's scale): float division of two integers
            return self.div(self.index_expr(ratio[0], dtype), self.index_expr(ratio[1], dtype))
        text = self.w.index(sympy.sympify(expr))
        return self._emit(f"static_cast<{COMPUTE_CTYPE[dtype]}>({text})", dtype)

    def to_dtype(self, x, dtype, src_dtype=None):
        x = self._v(x)
        if x.dtype == dtype:
            return x
        if dtype == torch.bool:
            return self._emit(f"({x} != 0)", dtype)
        if dtype == torch.float16:
            return self._emit(f"static_cast<float>(static_cast<_Float16>({x}))", dtype)
        if dtype == torch.bfloat16:
            return self._emit(f"symc_round_bf16(static_cast<float>({x}))", dtype)
        return self._emit(f"static_cast<{COMPUTE_CTYPE[dtype]}>({x})", dtype)

    def where(self, cond, a, b):
        a, b = self._pair(a, b)
        return self._emit(f"({self._v(cond)} ? {a} : {b})", a.dtype)

    # -- math -------------------------------------------------------------------------------
    def div(self, a, b):
        a, b = self._pair(a, b)
        a, b = self._float(a), self._float(b)
        if self.w.r_defined is not None and a.dtype == b.dtype == torch.float32 and \
                b.name.isidentifier() and self.w._loop_invariant(b.name):
            # a float row statistic inside an r loop: one division per row, a multiply per
            # element (within an ulp of the quotient; eager's softmax scales the same way);
            # a divisor below 2^-126 (1 / b may overflow) divides (gcc unswitches the loop)
            recip = self._emit(f"(1 / {b})", b.dtype)
            tiny = self._emit(f"(std::fabs({b}) < 0x1p-126f)", torch.bool)
            return self._emit(f"({tiny} ? {a} / {b} : {a} * {recip})", a.dtype)
        return self._emit(f"({a} / {b})", a.dtype)

    def floor_divide(self, a, b):
        a, b = self._pair(a, b)
        if is_float(a.dtype):
            return self._emit(f"std::floor({a} / {b})", a.dtype)
        self.w.uses_error_flag = True
        return self._emit(f"symc_int_floordiv<{COMPUTE_CTYPE[a.dtype]}>({a}, "
                          f"{self._divisor(b)})", a.dtype)

    def _divisor(self, b: CV) -> str:
        """Inside ops.masked, masked-off lanes divide by 1 (their loads read 0): only lanes
        the result selects may report a division by zero."""
        if not self.w.masks:
            return str(b)
        return f"(({' && '.join(f'({m})' for m in self.w.masks)}) ? {b} : " \
               f"static_cast<{COMPUTE_CTYPE[b.dtype]}>(1))"

    def remainder(self, a, b):
        a, b = self._pair(a, b)
        if is_float(a.dtype):
            return self._emit(f"symc_mod({a}, {b})", a.dtype)
        self.w.uses_error_flag = True
        return self._emit(f"symc_int_mod<{COMPUTE_CTYPE[a.dtype]}>({a}, {self._divisor(b)})",
                          a.dtype)

    def pow(self, a, b):
        a, b = self._pair(a, b)
        if is_float(a.dtype):
            return self._emit(f"std::pow({a}, {b})", a.dtype)
        return self._emit(f"symc_ipow({a}, {b})", a.dtype)

    def maximum(self, a, b):
        a, b = self._pair(a, b)
        return self._emit(f"symc_max({a}, {b})", a.dtype)

    def minimum(self, a, b):
        a, b = self._pair(a, b)
        return self._emit(f"symc_min({a}, {b})", a.dtype)

    def atan2(self, a, b):
        a, b = self._pair(a, b)
        return self._emit(f"std::atan2({a}, {b})", a.dtype)

    def abs(self, x):
        x = self._v(x)
        if x.dtype == torch.bool:
            return x
        return self._emit(f"({x} < 0 ? -{x} : {x})", x.dtype)

    def neg(self, x):
        x = self._v(x)
        return self._emit(f"(-{x})", x.dtype)

    def sign(self, x):
        x = self._v(x)
        ct = COMPUTE_CTYPE[x.dtype]
        if x.dtype == torch.bool:
            return x
        return self._emit(f"static_cast<{ct}>(({x} > 0) - ({x} < 0))", x.dtype)

    def logical_not(self, x):
        return self._emit(f"(!({self._v(x)} != 0))", torch.bool)

    def bitwise_not(self, x):
        x = self._v(x)
        return self._emit(f"(!{x})" if x.dtype == torch.bool else f"(~{x})", x.dtype)

    def isnan(self, x):
        x = self._v(x)
        return self._emit(f"({x} != {x})", torch.bool)

    def isinf(self, x):
        x = self._v(x)
        if not is_float(x.dtype):
            return CV("false", torch.bool)
        return self._emit(f"std::isinf({x})", torch.bool)

    def __getattr__(self, name):
        rule = CPP_OPS.get(name)
        if not isinstance(rule, str):  # a method is found before __getattr__ is asked
            raise AttributeError(f"C++ codegen has no op {name!r}; add it to CPP_OPS in "
                                 "inductor/codegen/cpp_ops.py")
        op = P(name)
        if op in opcodes.FLOAT_UNARY:
            def unary(x):
                x = self._float(self._v(x))
                return self._emit(rule.format(x), x.dtype)
            return unary
        if op in opcodes.ROUNDING:
            def rounding(x):
                x = self._v(x)
                return self._emit(rule.format(x), x.dtype) if is_float(x.dtype) else x
            return rounding
        if op in opcodes.COMPARISONS:
            def compare(a, b):
                a, b = self._pair(a, b)
                return self._emit(rule.format(a, b), torch.bool)
            return compare
        if op in opcodes.LOGICAL:
            def logical(a, b):
                a, b = self._pair(a, b)
                return self._emit(rule.format(f"({a} != 0)", f"({b} != 0)"), torch.bool)
            return logical

        def binary(a, b):
            a, b = self._pair(a, b)
            return self._emit(rule.format(a, b), a.dtype)
        return binary


# Every kernel op (inductor/ops.py POINTWISE_OPS) in C++: a format of the operands (float unary
# math, rounding, binary, comparison and logical ops, by family), or the CppOps method.
# symc_exp/log/tanh/erf/sigmoid: the prelude's inline math (runtime/cpp_math.h), vectorizable
# for float (<= 2 ulp), libm for double; std::sqrt vectorizes (-fno-math-errno); the other
# std:: calls are libm's, which keep their loop scalar.
CPP_OPS: dict[P, str | object] = {
    P.EXP: "symc_exp({})", P.EXP2: "std::exp2({})", P.LOG: "symc_log({})",
    P.LOG2: "std::log2({})", P.LOG1P: "std::log1p({})", P.EXPM1: "std::expm1({})",
    P.SQRT: "std::sqrt({})", P.RSQRT: "(1 / std::sqrt({}))", P.SIN: "std::sin({})",
    P.COS: "std::cos({})", P.TAN: "std::tan({})", P.TANH: "symc_tanh({})", P.ERF: "symc_erf({})",
    P.SIGMOID: "symc_sigmoid({})", P.RECIPROCAL: "(1 / {})",
    P.FLOOR: "std::floor({})", P.CEIL: "std::ceil({})", P.ROUND: "std::nearbyint({})",
    P.TRUNC: "std::trunc({})",
    P.ABS: CppOps.abs, P.NEG: CppOps.neg, P.SIGN: CppOps.sign, P.LOGICAL_NOT: CppOps.logical_not,
    P.BITWISE_NOT: CppOps.bitwise_not, P.ISNAN: CppOps.isnan, P.ISINF: CppOps.isinf,
    P.ADD: "({} + {})", P.SUB: "({} - {})", P.MUL: "({} * {})",
    P.BITWISE_AND: "({} & {})", P.BITWISE_OR: "({} | {})", P.BITWISE_XOR: "({} ^ {})",
    P.DIV: CppOps.div, P.FLOOR_DIVIDE: CppOps.floor_divide, P.REMAINDER: CppOps.remainder,
    P.POW: CppOps.pow, P.MAXIMUM: CppOps.maximum, P.MINIMUM: CppOps.minimum,
    P.ATAN2: CppOps.atan2,
    P.EQ: "({} == {})", P.NE: "({} != {})", P.LT: "({} < {})", P.LE: "({} <= {})",
    P.GT: "({} > {})", P.GE: "({} >= {})",
    P.LOGICAL_AND: "({} && {})", P.LOGICAL_OR: "({} || {})", P.LOGICAL_XOR: "({} != {})",
    P.WHERE: CppOps.where,
}
