"""Loop dims of a fused group (inductor/codegen/common.py's KernelGroup), merged where possible.

    coalesce_dims((s0, s1, 768), (xo0, xo1, xo2), (x0, x1, x2), [768*s1*xo0 + 768*xo1 + xo2])
    -> ranges (768*s0*s1,), and the index rewrites to `x0`

A group's node bodies index with loop variables over `xranges`/`rranges`. `coalesce_dims` merges adjacent loop dims
that every index uses linearly with matching strides, so a contiguous [s0, 768] pointwise
kernel indexes with one `xindex` and no divisions (Triton can then vectorise its loads).
"""

from __future__ import annotations

from dataclasses import dataclass

import sympy
import torch

from inductor.codegen.common import GroupNode, KernelGroup

__all__ = ["Coalescing", "GroupNode", "KernelGroup", "coalesce_dims", "dtype_of", "loop_vars"]


def loop_vars(prefix: str, n: int) -> tuple[sympy.Symbol, ...]:
    return tuple(sympy.Symbol(f"{prefix}{i}", integer=True, nonnegative=True) for i in range(n))


def _linear_coeff(expr: sympy.Expr, var: sympy.Symbol, all_vars) -> sympy.Expr | None:
    """The coefficient of `var` if `expr` is linear in it with a loop-var-free coefficient."""
    expanded = sympy.expand(expr)
    if var not in expanded.free_symbols:
        return sympy.Integer(0)
    coeff = expanded.coeff(var, 1)
    rest = sympy.expand(expanded - coeff * var)
    if var in rest.free_symbols or (coeff.free_symbols & set(all_vars)):
        return None
    return coeff


@dataclass(frozen=True)
class Coalescing:
    """Dims of the original ranges merged into groups, and the new ranges and variables."""

    old_vars: tuple
    new_vars: tuple
    groups: tuple  # tuple of tuples of original dim positions, outermost first
    ranges: tuple  # merged sizes
    sizes: tuple  # original sizes

    def rewrite(self, expr: sympy.Expr) -> sympy.Expr:
        """An index over the old vars as an index over the merged vars (exact)."""
        expr = sympy.sympify(expr).xreplace(
            {v: sympy.Integer(0) for v, size in zip(self.old_vars, self.sizes) if size == 1})
        mapping = {}
        linear_part = sympy.Integer(0)
        for gi, group in enumerate(self.groups):
            new = self.new_vars[gi]
            if len(group) == 0:
                continue
            if len(group) == 1:
                mapping[self.old_vars[group[0]]] = new
                continue
            inner = self.old_vars[group[-1]]
            coeff = _linear_coeff(expr, inner, self.old_vars)
            if coeff is not None and _collapses(expr, group, self, coeff):
                for i in group:
                    mapping[self.old_vars[i]] = sympy.Integer(0)
                linear_part += coeff * new
            else:
                mapping.update(_split_var(group, new, self))
        return sympy.expand(expr.xreplace(mapping) + linear_part)


def _collapses(expr, group, co: Coalescing, coeff) -> bool:
    """True when coeff(v_i) == coeff * prod(sizes inside i) for every dim i of the group."""
    sizes = [co.sizes[i] for i in group]
    inner = sympy.Integer(1)
    for pos in range(len(group) - 1, -1, -1):
        c = _linear_coeff(expr, co.old_vars[group[pos]], co.old_vars)
        if c is None or sympy.expand(c - coeff * inner) != 0:
            return False
        inner = inner * sizes[pos]
    return True


def _split_var(group, new, co: Coalescing) -> dict:
    """General fallback: each old var as FloorDiv/Mod of the merged var."""
    from symbolic import FloorDiv

    out = {}
    inner = sympy.Integer(1)
    for pos in range(len(group) - 1, -1, -1):
        size = co.sizes[group[pos]]
        quotient = new if inner == 1 else FloorDiv(new, inner)
        out[co.old_vars[group[pos]]] = quotient if pos == 0 else sympy.Mod(quotient, size)
        inner = inner * size
    return out


def coalesce_dims(ranges: tuple, old_vars: tuple, new_vars: tuple, exprs: list) -> Coalescing:
    """Merge dims i, i+1 when every expr is linear in both and coeff_i == coeff_{i+1} * size_{i+1}.

    Size-1 dims merge with anything. The merged ranges are products of the originals.
    """
    sizes = [sympy.sympify(s) for s in ranges]
    units = {v: sympy.Integer(0) for v, size in zip(old_vars, sizes) if size == 1}
    exprs = [sympy.sympify(e).xreplace(units) for e in exprs]
    groups = [[i] for i in range(len(sizes)) if sizes[i] != 1] or [[]]
    g = 0
    while g < len(groups) - 1:
        outer, inner = groups[g][-1], groups[g + 1][0]
        size_inner = sympy.Mul(*[sizes[i] for i in groups[g + 1]])
        if all(_can_merge(e, old_vars[outer], old_vars[inner], size_inner, old_vars)
               for e in exprs):
            groups[g] = groups[g] + groups[g + 1]
            del groups[g + 1]
        else:
            g += 1
    merged = tuple(sympy.Mul(*[sizes[i] for i in grp]) for grp in groups)
    return Coalescing(tuple(old_vars), tuple(new_vars[: len(groups)]),
                      tuple(tuple(grp) for grp in groups), merged, tuple(sizes))


def _can_merge(expr, outer, inner, size_inner, all_vars) -> bool:
    c_outer = _linear_coeff(expr, outer, all_vars)
    c_inner = _linear_coeff(expr, inner, all_vars)
    if c_outer is None or c_inner is None:
        return False
    return sympy.expand(c_outer - c_inner * size_inner) == 0


def dtype_of(group: KernelGroup, name: str) -> torch.dtype:
    try:
        return group.buffers[name]
    except KeyError:
        raise KeyError(f"kernel {group.name}: buffer {name!r} has no dtype in group.buffers") \
            from None
