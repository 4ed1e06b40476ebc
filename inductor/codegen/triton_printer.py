"""Sympy index expressions -> Triton source text, and the dtype names Triton kernels use.

    print_index(FloorDiv(x0, s1) * 768 + Mod(x0, s1), an)  ->  "768*(x0 // s1) + (x0 % s1)"

Symbols print as their names (kernel arguments `s0, s1`, loop variables `x0, r0`); static sizes
stay literals. `//` and `%` are Triton's C-style integer ops, equal to Python's floor semantics
only for non-negative operands: when the Analyzer cannot prove that (`native_division`, the
proof the C++ printer asks too), the printer calls the floor-correct helpers of
`inductor.runtime.triton_helpers`. Min/Max print as tl.minimum/maximum.
"""

from __future__ import annotations

import sympy
import torch

from inductor.codegen.division import exact_quotient
from symbolic import Analyzer, FloorDiv
from symbolic.ranges import ValueRange, bounds

TRITON_DTYPES = {
    torch.float64: "tl.float64",
    torch.float32: "tl.float32",
    torch.float16: "tl.float16",
    torch.bfloat16: "tl.bfloat16",
    torch.int64: "tl.int64",
    torch.int32: "tl.int32",
    torch.int16: "tl.int16",
    torch.int8: "tl.int8",
    torch.uint8: "tl.uint8",
    torch.bool: "tl.int1",
}

# Types Triton's JIT signature strings use (for ahead-of-time compiles in tests and tools).
SIGNATURE_TYPES = {
    torch.float64: "fp64",
    torch.float32: "fp32",
    torch.float16: "fp16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.uint8: "u8",
    torch.bool: "i1",
}


def triton_dtype(dtype: torch.dtype) -> str:
    """`torch.float16` -> `"tl.float16"`; an unsupported dtype names itself in the error."""
    try:
        return TRITON_DTYPES[dtype]
    except KeyError:
        raise NotImplementedError(f"Triton codegen: no Triton dtype for {dtype}") from None


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """Half floats are computed in f32 (loads upcast, stores downcast), like eager's CUDA math."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def loop_var_ranges(numels: dict[sympy.Symbol, sympy.Expr], ranges: dict) -> dict:
    """Ranges of loop variables `{x0: xnumel}` -> `{x0: [0, hi(xnumel) - 1]}` added to `ranges`."""
    out = dict(ranges)
    for var, numel in numels.items():
        hi = bounds(sympy.sympify(numel), ranges).hi
        out[var] = ValueRange(0, hi - 1)
    return out


class TritonExprPrinter:
    """Prints integer sympy expressions as Triton expressions (see the module docstring)."""

    def __init__(self, an: Analyzer | None = None):
        self.an = an if an is not None else Analyzer()
        self.ranges = self.an.ranges  # the kernel adds its runtime indices' ranges here

    def __call__(self, expr) -> str:
        return self.print(sympy.sympify(expr))

    def print(self, expr) -> str:
        if isinstance(expr, (bool, sympy.logic.boolalg.BooleanAtom)):
            return "True" if bool(expr) else "False"
        if expr.is_Integer:
            return str(int(expr))
        if expr.is_Rational:
            return f"({int(expr.p)} / {int(expr.q)})"
        if expr.is_Float:
            return repr(float(expr))
        if isinstance(expr, sympy.Symbol):
            return expr.name
        quotient = exact_quotient(expr)
        if quotient is not None:
            return f"(({self.print(quotient[0])}) // {self.print(quotient[1])})"
        method = getattr(self, f"_print_{type(expr).__name__}", None)
        if method is None:
            raise NotImplementedError(f"Triton codegen: cannot print {type(expr).__name__}: {expr}")
        return method(expr)

    def _paren(self, expr) -> str:
        text = self.print(expr)
        if expr.is_Atom or isinstance(expr, (FloorDiv, sympy.Mod, sympy.Min, sympy.Max)):
            return text
        return f"({text})"

    def _print_Add(self, expr) -> str:
        terms = sorted(expr.args, key=sympy.default_sort_key)
        text = self.print(terms[0])
        for term in terms[1:]:
            coeff, rest = term.as_coeff_Mul()
            if coeff.is_Number and coeff < 0:
                text += f" - {self._paren(-term)}"
            else:
                text += f" + {self.print(term)}"
        return text

    def _print_Mul(self, expr) -> str:
        coeff, rest = expr.as_coeff_Mul()
        if coeff == -1:
            return f"-{self._paren(rest)}"
        factors = sorted(sympy.Mul.make_args(expr), key=sympy.default_sort_key)
        if any(f.is_Rational and not f.is_Integer for f in factors):
            raise NotImplementedError(f"Triton codegen: non-integer index expression {expr}")
        return "*".join(self._paren(f) for f in factors)

    def _print_Pow(self, expr) -> str:
        base, exp = expr.args
        if exp.is_Integer and int(exp) > 0:
            return "*".join([self._paren(base)] * int(exp))
        raise NotImplementedError(f"Triton codegen: cannot print power {expr}")

    def _print_FloorDiv(self, expr) -> str:
        a, b = expr.args
        if self.an.native_division(a, b):
            return f"({self._paren(a)} // {self._paren(b)})"
        return f"floordiv_py({self.print(a)}, {self.print(b)})"

    def _print_Mod(self, expr) -> str:
        a, b = expr.args
        if self.an.native_division(a, b):
            return f"({self._paren(a)} % {self._paren(b)})"
        return f"mod_py({self.print(a)}, {self.print(b)})"

    def _print_Min(self, expr) -> str:
        return self._fold("tl.minimum", expr.args)

    def _print_Max(self, expr) -> str:
        return self._fold("tl.maximum", expr.args)

    def _fold(self, fn: str, args) -> str:
        args = sorted(args, key=sympy.default_sort_key)
        text = self.print(args[0])
        for arg in args[1:]:
            text = f"{fn}({text}, {self.print(arg)})"
        return text

    def _relation(self, expr, op: str) -> str:
        return f"({self.print(expr.lhs)} {op} {self.print(expr.rhs)})"

    def _print_StrictLessThan(self, expr) -> str:
        return self._relation(expr, "<")

    def _print_LessThan(self, expr) -> str:
        return self._relation(expr, "<=")

    def _print_StrictGreaterThan(self, expr) -> str:
        return self._relation(expr, ">")

    def _print_GreaterThan(self, expr) -> str:
        return self._relation(expr, ">=")

    def _print_Equality(self, expr) -> str:
        return self._relation(expr, "==")

    def _print_Unequality(self, expr) -> str:
        return self._relation(expr, "!=")

    def _print_And(self, expr) -> str:
        return " & ".join(f"({self.print(a)})" for a in sorted(expr.args, key=sympy.default_sort_key))

    def _print_Or(self, expr) -> str:
        return " | ".join(f"({self.print(a)})" for a in sorted(expr.args, key=sympy.default_sort_key))

    def _print_Not(self, expr) -> str:
        return f"~({self.print(expr.args[0])})"


def print_index(expr, an: Analyzer | None = None) -> str:
    """One-shot form of `TritonExprPrinter(an)(expr)`."""
    return TritonExprPrinter(an)(expr)


def python_evaluator(expr, symbols) -> callable:
    """A fast `f(*symbol_values) -> int` for an integer size expression (used at every launch)."""
    expr = sympy.sympify(expr)
    names = [s.name for s in symbols]
    source = f"lambda {', '.join(names)}: int({_python_text(expr)})"
    return eval(source, {"min": min, "max": max})  # noqa: S307 - our own generated text


def _python_text(expr) -> str:
    quotient = exact_quotient(expr)
    if quotient is not None:  # exact: floor division is the quotient
        return f"(({_python_text(quotient[0])}) // {int(quotient[1])})"
    if expr.is_Integer:
        return str(int(expr))
    if isinstance(expr, sympy.Symbol):
        return expr.name
    if isinstance(expr, FloorDiv):
        return f"(({_python_text(expr.args[0])}) // ({_python_text(expr.args[1])}))"
    if isinstance(expr, sympy.Mod):
        return f"(({_python_text(expr.args[0])}) % ({_python_text(expr.args[1])}))"
    if isinstance(expr, sympy.Add):
        return "(" + " + ".join(_python_text(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Mul):
        return "(" + " * ".join(_python_text(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Pow) and expr.exp.is_Integer and expr.exp > 0:
        return f"(({_python_text(expr.base)}) ** {int(expr.exp)})"
    if isinstance(expr, sympy.Min):
        return "min(" + ", ".join(_python_text(a) for a in expr.args) + ")"
    if isinstance(expr, sympy.Max):
        return "max(" + ", ".join(_python_text(a) for a in expr.args) + ")"
    raise NotImplementedError(f"cannot evaluate size expression {expr} in Python")
