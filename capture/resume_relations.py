"""Sizes a resume function's arguments share, known to the frame that broke.

    y = x * 2; n = x.size(0); print(n); return y.view(n, -1)
    parent: y: f32[s0, s1], n = s0      -> groups {(y, 0), (n, None), (x, 0)}, {(y, 1), (x, 1)}
    resume function: y.size(0), n and x.size(0) get one symbol (the guard s2 == s0 ...), not three

The parent records the groups on the ResumePoint; running it registers them for the resume
code object, and capturing that code applies them: slots equal at the example are decided
equal through the ShapeEnv (a guard, so a call where they differ recompiles: sound for any
caller). A slot is (local name, dim) for a tensor's size, (local name, None) for an int.
"""

from __future__ import annotations

import weakref

import sympy

from capture.variables import SymIntVariable, TensorVariable
from symbolic import Analyzer

_RELATIONS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def size_groups(env, named: dict) -> tuple:
    """Groups of slots of the variables `named` (name -> Variable) with one size expression."""
    by_expr: dict = {}
    for name, var in named.items():
        for slot, expr in _slots(name, var):
            expr = env.simplify(sympy.sympify(expr))
            if not expr.is_number:
                by_expr.setdefault(expr, []).append(slot)
    return tuple(tuple(slots) for slots in by_expr.values() if len(slots) > 1)


def _slots(name: str, var):
    if isinstance(var, TensorVariable):
        return [((name, d), s) for d, s in enumerate(var.meta.shape)]
    if isinstance(var, SymIntVariable):
        return [((name, None), var.expr)]
    return []


def register(code, groups: tuple) -> None:
    """The resume function of `code` may assume `groups` (called before it is compiled)."""
    if groups and code not in _RELATIONS:
        _RELATIONS[code] = groups


def apply(state, code, f_locals: dict) -> None:
    """Decide the registered groups of `code` equal in `state` where the example agrees."""
    groups = _RELATIONS.get(code)
    if not groups:
        return
    env = state.env
    for group in groups:
        exprs = [e for e in (_value(f_locals, slot) for slot in group) if e is not None]
        exprs = [e for e in exprs if not sympy.sympify(e).is_number]
        for other in exprs[1:]:
            if env.size_hint(other) == env.size_hint(exprs[0]):
                Analyzer(env).equal(exprs[0], other, guard=True)


def _value(f_locals: dict, slot):
    name, dim = slot
    var = f_locals.get(name)
    if dim is None:
        return var.expr if isinstance(var, SymIntVariable) else None
    if isinstance(var, TensorVariable) and dim < var.meta.ndim:
        return var.meta.shape[dim]
    return None


__all__ = ["apply", "register", "size_groups"]
