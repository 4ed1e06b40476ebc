"""Math functions Triton lacks as `tl.*` builtins, each in a compiled and an interpreter form.

Generated kernels call `tanh_(x)`, `log1p_(x)`, `expm1_(x)`, `pow_(a, b)`, ... On a GPU these
are libdevice calls (accurate, fast). Under TRITON_INTERPRET=1 libdevice is unavailable, so the
same names are bound to formulas over builtins (tl.exp, tl.log, tl.floor, ...): Kahan's tricks
for expm1/log1p keep full relative precision near 0. Inputs are f32 or f64.
"""

from __future__ import annotations

import os

import triton
import triton.language as tl

INTERPRETING = os.environ.get("TRITON_INTERPRET", "0") == "1"

__all__ = ["tanh_", "log1p_", "expm1_", "pow_", "tan_", "atan2_", "round_", "trunc_",
           "sigmoid_", "INTERPRETING"]


@triton.jit
def sigmoid_(x):
    return 1.0 / (1.0 + tl.exp(-x))


@triton.jit
def trunc_(x):
    return tl.where(x >= 0, tl.floor(x), tl.ceil(x))


@triton.jit
def round_(x):
    """Round half to even (torch.round)."""
    f = tl.floor(x)
    d = x - f
    f_is_even = (f - 2.0 * tl.floor(f * 0.5)) == 0
    up = (d > 0.5) | ((d == 0.5) & ~f_is_even)
    return tl.where(up, f + 1.0, f)


@triton.jit
def tan_(x):
    return tl.sin(x) / tl.cos(x)


@triton.jit
def _expm1_formula(x):
    # Kahan: (u - 1) * x / log(u) cancels the rounding error of u = exp(x).
    u = tl.exp(x)
    um1 = u - 1.0
    safe = tl.where((u == 1.0) | (um1 == -1.0), 2.0, u)
    kahan = (safe - 1.0) * x / tl.log(safe)
    r = tl.where(u == 1.0, x, tl.where(um1 == -1.0, -1.0, kahan))
    return tl.where(x > 80.0, u - 1.0, r)


@triton.jit
def _log1p_formula(x):
    # Kahan: log(u) * x / (u - 1) with u = 1 + x.
    u = 1.0 + x
    safe = tl.where(u == 1.0, 2.0, u)
    r = tl.log(safe) * x / (safe - 1.0)
    return tl.where(u == 1.0, x, tl.where(x == float("inf"), x, r))


@triton.jit
def _tanh_formula(x):
    ax = tl.abs(x)
    e = _expm1_formula(-2.0 * ax)
    r = -e / (2.0 + e)
    return tl.where(x < 0, -r, r)


@triton.jit
def _pow_formula(a, b):
    ab = tl.abs(a)
    mag = tl.exp2(b * tl.log2(ab))
    b_int = tl.floor(b) == b
    b_odd = b_int & ((b - 2.0 * tl.floor(b * 0.5)) == 1.0)
    neg = tl.where(b_odd, -mag, mag)
    r = tl.where(a < 0, tl.where(b_int, neg, float("nan")), mag)
    return tl.where(b == 0.0, 1.0, r)


@triton.jit
def _atan_formula(x):
    # Range reduction to |t| <= tan(pi/12), then an odd polynomial (Cephes atanf coefficients).
    ax = tl.abs(x)
    big = ax > 2.414213562373095
    mid = (ax > 0.4142135623730950) & ~big
    t = tl.where(big, -1.0 / tl.where(big, ax, 1.0), tl.where(mid, (ax - 1.0) / (ax + 1.0), ax))
    base = tl.where(big, 1.5707963267948966, tl.where(mid, 0.7853981633974483, 0.0))
    z = t * t
    p = (((8.05374449538e-2 * z - 1.38776856032e-1) * z + 1.99777106478e-1) * z
         - 3.33329491539e-1) * z * t + t
    r = base + p
    return tl.where(x < 0, -r, r)


@triton.jit
def _atan2_formula(y, x):
    safe_x = tl.where(x == 0.0, 1.0, x)
    a = _atan_formula(y / safe_x)
    pi = 3.141592653589793
    r = tl.where(x > 0, a, tl.where(y >= 0, a + pi, a - pi))
    at_zero = tl.where(y > 0, pi / 2, tl.where(y < 0, -pi / 2, 0.0))
    return tl.where(x == 0.0, at_zero, r)


if INTERPRETING:
    expm1_ = _expm1_formula
    log1p_ = _log1p_formula
    tanh_ = _tanh_formula
    pow_ = _pow_formula
    atan2_ = _atan2_formula
else:
    from triton.language.extra import libdevice

    @triton.jit
    def expm1_(x):
        return libdevice.expm1(x)

    @triton.jit
    def log1p_(x):
        return libdevice.log1p(x)

    @triton.jit
    def tanh_(x):
        return libdevice.tanh(x)

    @triton.jit
    def pow_(a, b):
        return libdevice.pow(a, b)

    @triton.jit
    def atan2_(y, x):
        return libdevice.atan2(y, x)
