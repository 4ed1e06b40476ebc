"""Python floats that stay symbolic: float arguments (graph inputs) and `math.*` of sizes.

    scale (a float argument)     -> SymFloat(f0): a 0-d float64 graph input read from L['scale']
    math.sqrt(x.size(-1))        -> SymFloat(sqrt(s1))          (no guard on s1)
    x / math.sqrt(x.size(-1))    -> x / tensor(s1, f64).sqrt().to(x.dtype)
    math.ceil(x.size(0) / 4)     -> SymInt((s0 + 3)//4)
    if scale > 1: ...            -> specialised: the guard L['scale'] == 2.5

A float meets a tensor as eager's Python scalar would: it is cast to the tensor's dtype (the
default dtype for integer and bool tensors) before the op, so the result dtype is eager's.
Where a Python number is needed (a branch, a non-tensor argument of a torch op, a return value)
the SymFloat is specialised: its size symbols get `s == value` guards and its float inputs
value guards, exactly what a constant would have had. Math with a domain (sqrt, log, division)
records a runtime assert where eager's Python would raise.
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass

import sympy
import torch

from capture.errors import Unsupported
from capture.variables import (
    ConstVariable,
    SymFloatVariable,
    SymIntVariable,
    TensorVariable,
    Variable,
    as_sym_or_int,
    sym_value,
)
from guards import TypeGuard, ValueGuard
from symbolic import Source

_ARITH = {operator.add: operator.add, operator.sub: operator.sub, operator.mul: operator.mul,
          operator.truediv: operator.truediv, operator.pow: operator.pow}


@dataclass(frozen=True, slots=True)
class FloatTensorSource(Source):
    """A float argument as the 0-d float64 tensor the graph reads it as, on `device`."""

    base: Source
    device: str = "cpu"

    def __str__(self) -> str:
        where = "" if self.device == "cpu" else f", device={self.device!r}"
        return (f"__import__('torch').tensor(float({self.base}), "
                f"dtype=__import__('torch').float64{where})")


# ---------------------------------------------------------------------------------- inputs
def float_input(state, value: float, source: Source) -> SymFloatVariable:
    """A float argument of the frame: a symbol `f<n>`; the graph reads it as a 0-d float64
    input on the device of the tensor it first meets (`_input_tensor`)."""
    state.guard(TypeGuard, source, float)
    if not math.isfinite(value):  # inf/nan: eager's arithmetic on them is special
        state.guard(ValueGuard, source, value)
        return ConstVariable(value, source)
    floats = state.float_inputs
    symbol = sympy.Symbol(f"f{len(floats)}", real=True)
    floats[symbol] = (source, value, {})
    return SymFloatVariable(symbol, float(value), source)


def _input_tensor(state, symbol, device) -> TensorVariable:
    """The graph input of float argument `symbol` on `device` (made at its first use there)."""
    from symbolic import TensorMeta

    source, _, by_device = state.float_inputs[symbol]
    device = torch.device("cpu") if device is None else torch.device(device)
    known = by_device.get(str(device))
    if known is not None:
        return known
    meta = TensorMeta.contiguous((), torch.float64, device)
    node = state._placeholder(f"{source}_float".replace("L[", "").replace("G[", ""), meta)
    tensor_source = FloatTensorSource(source, str(device))
    var = TensorVariable(node, meta, source=tensor_source, input_node=node,
                         exact_type=torch.Tensor)
    state.inputs.append(tensor_source)
    state.input_vars.append(var)
    by_device[str(device)] = var
    return var


def _float_symbols(state, expr) -> set:
    return {s for s in expr.free_symbols if s in state.float_inputs}


# ---------------------------------------------------------------------------------- specialising
def specialise_float(state, var: SymFloatVariable) -> float:
    """The example value, guarded: `s == value` for sizes, value guards for float inputs."""
    for symbol in sorted(var.expr.free_symbols, key=str):
        if symbol in state.float_inputs:
            source, value, _ = state.float_inputs[symbol]
            state.guard(ValueGuard, source, value)
        else:
            state.specialise(symbol)
    return var.hint


def number(state, var: Variable):
    """A Python number for a Const, SymInt or SymFloat (specialised with guards), else None."""
    if isinstance(var, SymFloatVariable):
        return specialise_float(state, var)
    if isinstance(var, ConstVariable) and isinstance(var.value, (int, float, bool)):
        return var.value
    if isinstance(var, SymIntVariable):
        return state.specialise(var.expr)
    return None


# ---------------------------------------------------------------------------------- arithmetic
def _as_float_parts(var: Variable):
    """(sympy expr, Python value) of a number Variable, or None."""
    if isinstance(var, SymFloatVariable):
        return var.expr, var.hint
    if isinstance(var, ConstVariable) and type(var.value) in (int, float):
        return sympy.sympify(var.value if type(var.value) is int
                             else sympy.Float(var.value)), var.value
    return None


def float_binary(state, op, a: Variable, b: Variable) -> Variable | None:
    """`a op b` where one side is a SymFloat (or an int-size `/`): a SymFloat; None if neither
    is one. Tensors are handled by `scalar_operand`."""
    if not (isinstance(a, SymFloatVariable) or isinstance(b, SymFloatVariable)):
        if op is operator.truediv and isinstance(a, SymIntVariable | ConstVariable) \
                and isinstance(b, SymIntVariable | ConstVariable):
            x, y = as_sym_or_int(a), as_sym_or_int(b)
            if x is None or y is None or not (isinstance(a, SymIntVariable)
                                              or isinstance(b, SymIntVariable)):
                return None
            a, b = _size_float(state, x), _size_float(state, y)
        else:
            return None
    a, b = _lift(state, a), _lift(state, b)
    if a is None or b is None or op not in _ARITH:
        return None  # floordiv, mod: the caller specialises through `number`
    (ea, ha), (eb, hb) = a, b
    if op is operator.pow and not (eb.is_Integer or (not _float_symbols(state, ea)
                                                     and state.env.prove(sympy.Gt(ea, 0)))):
        return ConstVariable(_python_value(state, op, ea, ha, eb, hb))  # complex, domains
    if op is operator.truediv and _float_symbols(state, eb):
        hb = specialise_float(state, SymFloatVariable(eb, hb))
        eb = sympy.Float(hb)
    try:
        hint = _ARITH[op](ha, hb)
    except (ZeroDivisionError, OverflowError, ValueError) as exc:
        raise Unsupported(f"{op.__name__}({ha!r}, {hb!r}) raises {type(exc).__name__}") \
            from None
    if isinstance(hint, complex) or not math.isfinite(hint):
        return ConstVariable(_python_value(state, op, ea, ha, eb, hb))
    if op is operator.truediv and not eb.is_number:
        state.expect(sympy.Ne(eb, 0), "float division by zero")
    return _result(_ARITH[op](ea, eb), float(hint))


def _python_value(state, op, ea, ha, eb, hb):
    for expr, hint in ((ea, ha), (eb, hb)):
        if not expr.is_number:
            specialise_float(state, SymFloatVariable(expr, hint))
    try:
        return _ARITH[op](ha, hb)
    except (ZeroDivisionError, OverflowError, ValueError) as exc:
        raise Unsupported(f"{op.__name__}({ha!r}, {hb!r}) raises {type(exc).__name__}") \
            from None


def _size_float(state, x) -> ConstVariable | SymFloatVariable:
    if isinstance(x, int):
        return ConstVariable(x)
    return SymFloatVariable(sympy.sympify(x), float(state.env.size_hint(x)))


def _lift(state, var: Variable):
    if isinstance(var, SymIntVariable):
        return var.expr, state.env.size_hint(var.expr)
    return _as_float_parts(var)


def _result(expr, hint: float) -> Variable:
    expr = sympy.sympify(expr)
    if expr.is_number:
        return ConstVariable(hint)
    return SymFloatVariable(expr, hint)


def to_float(state, var: Variable) -> Variable | None:
    """`float(var)` kept symbolic for sizes and SymFloats; None for other values."""
    if isinstance(var, SymFloatVariable):
        return var
    if isinstance(var, SymIntVariable):
        return SymFloatVariable(var.expr, float(state.env.size_hint(var.expr)))
    return None


# ---------------------------------------------------------------------------------- math
def _needs_positive(state, expr, strict: bool, name: str) -> None:
    cond = sympy.Gt(expr, 0) if strict else sympy.Ge(expr, 0)
    state.expect(cond, f"math.{name}: math domain error")


def math_call(state, fn, args: list, kwargs: dict | None = None) -> Variable | None:
    """math.sqrt/log/exp/log2/ceil/floor/trunc/prod of sizes and SymFloats; None: not symbolic."""
    kwargs = kwargs or {}
    if fn is math.prod and set(kwargs) <= {"start"}:
        return _prod(state, args, kwargs.get("start"))
    if kwargs:
        return None
    if len(args) != 1:
        return None
    (arg,) = args
    if isinstance(arg, SymIntVariable) and fn in (math.ceil, math.floor, math.trunc):
        return arg
    lifted = _lift(state, arg) if isinstance(arg, SymIntVariable | SymFloatVariable) else None
    if lifted is None:
        return None
    expr, hint = lifted
    if fn in (math.floor, math.ceil, math.trunc):
        return _rounded(state, fn, arg, expr, hint)
    rule = _MATH.get(fn)
    if rule is None:
        return None
    if _float_symbols(state, expr) and fn is not math.exp:
        return None  # a domain on a float input: specialised by the caller (eager raises)
    try:
        value = fn(hint)
    except (ValueError, OverflowError) as exc:
        raise Unsupported(f"math.{fn.__name__}({hint!r}) raises {type(exc).__name__}") from None
    sym_fn, domain = rule
    if domain == "positive":
        _needs_positive(state, expr, True, fn.__name__)
    elif domain == "nonnegative":
        _needs_positive(state, expr, False, fn.__name__)
    elif domain == "exp" and not _float_symbols(state, expr):
        state.expect(sympy.Lt(expr, 709), "math.exp: math range error")
    elif domain == "exp":
        return None
    return _result(sym_fn(expr), float(value))


_MATH = {
    math.sqrt: (sympy.sqrt, "nonnegative"),
    math.log: (sympy.log, "positive"),
    math.log2: (lambda e: sympy.log(e) / sympy.log(2), "positive"),
    math.exp: (sympy.exp, "exp"),
}


def _rounded(state, fn, arg, expr, hint) -> Variable | None:
    """floor/ceil/trunc of a ratio of sizes as FloorDiv; anything else is specialised."""
    from symbolic import FloorDiv

    if _float_symbols(state, expr):
        return None
    num, den = sympy.fraction(sympy.together(expr))
    if not (num.is_integer and den.is_integer) or state.env.prove(sympy.Gt(den, 0)) is not True:
        return None
    if fn is math.trunc and state.env.prove(sympy.Ge(num, 0)) is not True:
        return None
    if fn is math.ceil:
        return sym_value(FloorDiv(num + den - 1, den))
    return sym_value(FloorDiv(num, den))


def _prod(state, args, start: Variable | None) -> Variable | None:
    """math.prod(sizes, start=size) as one size expression."""
    from capture.variables import ListVariable, TupleVariable

    if len(args) != 1 or not isinstance(args[0], ListVariable | TupleVariable):
        return None
    items = args[0].items if start is None else [start, *args[0].items]
    exprs = [as_sym_or_int(i) for i in items]
    if any(e is None for e in exprs) or all(isinstance(e, int) for e in exprs):
        return None
    out = sympy.Integer(1)
    for e in exprs:
        out = out * e
    return sym_value(out)


# ---------------------------------------------------------------------------------- tensors
def scalar_operand(state, var: SymFloatVariable, other: TensorVariable) -> Variable:
    """The SymFloat as a 0-d tensor of the dtype eager casts a Python float to next to `other`
    (its own floating dtype; the default dtype for integer and bool tensors)."""
    dtype = other.meta.dtype
    if dtype.is_complex:
        return ConstVariable(specialise_float(state, var))
    if not dtype.is_floating_point:
        dtype = torch.get_default_dtype()
    try:
        tensor = _build(state, var.expr, other.meta.device)
    except Unsupported:
        return ConstVariable(specialise_float(state, var))
    if not isinstance(tensor, TensorVariable):
        return ConstVariable(var.hint)
    return state.call(torch.Tensor.to, [tensor], {"dtype": ConstVariable(dtype)})


def _build(state, expr, device):
    """A 0-d float64 tensor computing `expr` (or a Python float for a number)."""
    if expr.is_number:
        return float(expr)
    if expr in state.float_inputs:
        return _input_tensor(state, expr, device)
    if expr.is_integer and not _float_symbols(state, expr):
        extra = {} if device is None else {"device": ConstVariable(device)}
        return state.call(torch.tensor, [sym_value(expr)],
                          {"dtype": ConstVariable(torch.float64), **extra})
    if isinstance(expr, sympy.Add | sympy.Mul):
        op = operator.add if isinstance(expr, sympy.Add) else operator.mul
        parts = [_build(state, a, device) for a in expr.args]
        return _fold(state, op, parts)
    if isinstance(expr, sympy.Pow):
        base, exp = expr.args
        b = _build(state, base, device)
        if exp == sympy.Rational(1, 2):
            return _unary(state, torch.sqrt, b)
        if exp == sympy.Rational(-1, 2):
            return _unary(state, torch.rsqrt, b)
        if exp == -1:
            return _apply(state, operator.truediv, 1.0, b)
        return _apply(state, operator.pow, b, _build(state, exp, device))
    if isinstance(expr, sympy.log):
        return _unary(state, torch.log, _build(state, expr.args[0], device))
    if isinstance(expr, sympy.exp):
        return _unary(state, torch.exp, _build(state, expr.args[0], device))
    raise Unsupported(f"no tensor form for the float expression {expr}")


def _fold(state, op, parts):
    tensors = [p for p in parts if isinstance(p, TensorVariable)]
    numbers = [p for p in parts if not isinstance(p, TensorVariable)]
    out = tensors[0]
    for p in tensors[1:] + numbers:
        out = _apply(state, op, out, p)
    return out


def _apply(state, op, a, b):
    wrap = lambda v: v if isinstance(v, TensorVariable) else ConstVariable(v)  # noqa: E731
    return state.call(op, [wrap(a), wrap(b)], {})


def _unary(state, fn, a):
    return state.call(fn, [a], {})




def tensor_literal(state, args: list, kwargs: dict) -> Variable | None:
    """torch.tensor/as_tensor of data holding SymFloats: built in the graph from the sizes and
    float inputs (eager's dtype: the default dtype unless `dtype=`); None when none is there."""
    from capture.variables import ListVariable, TupleVariable

    if len(args) != 1 or not _has_symfloat(args[0]) or set(kwargs) - {"dtype", "device"}:
        return None
    dtype = kwargs.get("dtype", ConstVariable(None))
    device = kwargs.get("device", ConstVariable(None))
    if not isinstance(dtype, ConstVariable) or not isinstance(device, ConstVariable):
        return None
    if device.value is None:  # eager's factory default; the entry holds only under it
        from symbolic import DefaultDeviceSource

        device = torch.get_default_device()
        state.guard(ValueGuard, DefaultDeviceSource(), str(device))
    else:
        device = torch.device(device.value)

    def build(var):
        if isinstance(var, ListVariable | TupleVariable):
            parts = ListVariable([build(v) for v in var.items])
            return state.call(torch.stack, [parts], {})
        if isinstance(var, SymFloatVariable):
            built = _build(state, var.expr, device)
            if isinstance(built, TensorVariable):
                return built
            var = ConstVariable(built)
        if isinstance(var, SymIntVariable) or isinstance(var, ConstVariable) and type(
                var.value) in (int, float, bool):
            return state.call(torch.tensor, [var], {"dtype": ConstVariable(torch.float64),
                                                    "device": ConstVariable(device)})
        raise Unsupported(f"torch.tensor of a {type(var).__name__} next to symbolic floats")

    out = build(args[0])
    target = dtype.value if dtype.value is not None else torch.get_default_dtype()
    return state.call(torch.Tensor.to, [out], {"dtype": ConstVariable(target)})


def _has_symfloat(var) -> bool:
    from capture.variables import ListVariable, TupleVariable

    if isinstance(var, SymFloatVariable):
        return True
    if isinstance(var, ListVariable | TupleVariable):
        return any(_has_symfloat(v) for v in var.items)
    return False


__all__ = ["FloatTensorSource", "float_binary", "float_input", "math_call", "number",
           "scalar_operand", "specialise_float", "tensor_literal", "to_float"]
