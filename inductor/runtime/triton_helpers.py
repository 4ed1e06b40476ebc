"""@triton.jit helper functions that generated kernels call: floor division, RNG, Welford, argmax.

Generated kernel modules start with `from inductor.runtime.triton_helpers import *`. Every helper
uses only `tl.*` builtins (no libdevice), so the same code runs compiled and under
TRITON_INTERPRET=1. `philox_uniform` reproduces `prims.random.philox_hash` bit for bit.
"""

from __future__ import annotations

import triton
import triton.language as tl

__all__ = [
    "floordiv_py", "mod_py", "fmix32", "philox_uniform", "welford_combine", "welford_reduce",
    "argmax_combine", "argmin_combine", "argmax_index", "argmin_index",
    "maximum_propagate_nan", "minimum_propagate_nan", "max_reduce", "min_reduce",
    "_prod_combine",
]


@triton.jit
def floordiv_py(a, b):
    """Python's floor division for ints of any sign (Triton's `//` truncates on hardware)."""
    qa = tl.abs(a) // tl.abs(b)
    up = (tl.abs(a) + tl.abs(b) - 1) // tl.abs(b)
    return tl.where((a < 0) == (b < 0), qa, -up)


@triton.jit
def mod_py(a, b):
    """Python's modulo (sign of the divisor)."""
    return a - b * floordiv_py(a, b)


@triton.jit
def fmix32(h):
    """MurmurHash3's 32-bit finaliser on uint32 values (wrapping multiplies)."""
    h = h ^ (h >> 16)
    h = h * 0x85EBCA6B
    h = h ^ (h >> 13)
    h = h * 0xC2B2AE35
    return h ^ (h >> 16)


@triton.jit
def philox_uniform(seed, counter, MANTISSA: tl.constexpr):
    """Uniform [0, 1) f32 from int64 seed and counter; see prims/random.py for the formula."""
    seed = seed.to(tl.int64)
    counter = counter.to(tl.int64)
    seed_lo = (seed & 0xFFFFFFFF).to(tl.uint32)
    seed_hi = ((seed >> 32) & 0xFFFFFFFF).to(tl.uint32)
    count_lo = (counter & 0xFFFFFFFF).to(tl.uint32)
    count_hi = ((counter >> 32) & 0xFFFFFFFF).to(tl.uint32)
    key = fmix32(seed_lo ^ 0x9E3779B9 ^ ((seed_hi ^ count_hi) * 0x85EBCA77))
    h = fmix32(key ^ count_lo)
    h = fmix32(h ^ (key * 0x27D4EB2F))
    top = (h >> (32 - MANTISSA)).to(tl.int32)
    return top.to(tl.float32) * (1.0 / (1 << MANTISSA))


@triton.jit
def maximum_propagate_nan(a, b):
    """max(a, b) that returns NaN when either is NaN (torch.maximum semantics)."""
    return tl.where((a != a) | (a > b), a, b)


@triton.jit
def minimum_propagate_nan(a, b):
    return tl.where((a != a) | (a < b), a, b)


@triton.jit
def max_reduce(x, AXIS: tl.constexpr):
    """Max along AXIS that returns NaN when the slice has one (torch.amax semantics)."""
    has_nan = tl.max((x != x).to(tl.int8), AXIS)
    return tl.where(has_nan > 0, float("nan"), tl.max(x, AXIS))


@triton.jit
def min_reduce(x, AXIS: tl.constexpr):
    has_nan = tl.max((x != x).to(tl.int8), AXIS)
    return tl.where(has_nan > 0, float("nan"), tl.min(x, AXIS))


@triton.jit
def welford_combine(mean_a, m2_a, n_a, mean_b, m2_b, n_b):
    """Chan et al.'s parallel combination of two (mean, M2, count) Welford states."""
    n = n_a + n_b
    delta = mean_b - mean_a
    frac = tl.where(n == 0, 0.0, n_b / tl.where(n == 0, 1.0, n))
    return mean_a + delta * frac, m2_a + m2_b + delta * delta * n_a * frac, n


@triton.jit
def welford_reduce(mean, m2, n, AXIS: tl.constexpr):
    return tl.reduce((mean, m2, n), AXIS, welford_combine)


@triton.jit
def argmax_combine(value_a, index_a, value_b, index_b):
    """Keep the larger value; ties and NaNs keep the first index (torch.argmax semantics)."""
    a_nan = value_a != value_a
    b_nan = value_b != value_b
    take_a = (value_a > value_b) | ((value_a == value_b) & (index_a < index_b))
    take_a = take_a | (a_nan & ~b_nan) | (a_nan & b_nan & (index_a < index_b))
    take_a = take_a & ~(b_nan & ~a_nan)
    return tl.where(take_a, value_a, value_b), tl.where(take_a, index_a, index_b)


@triton.jit
def argmin_combine(value_a, index_a, value_b, index_b):
    a_nan = value_a != value_a
    b_nan = value_b != value_b
    take_a = (value_a < value_b) | ((value_a == value_b) & (index_a < index_b))
    take_a = take_a | (a_nan & ~b_nan) | (a_nan & b_nan & (index_a < index_b))
    take_a = take_a & ~(b_nan & ~a_nan)
    return tl.where(take_a, value_a, value_b), tl.where(take_a, index_a, index_b)


@triton.jit
def argmax_index(value, index, AXIS: tl.constexpr):
    """Smallest `index` whose `value` is the (NaN-first) max along AXIS: torch.argmax ties.

    Two builtin reductions instead of a custom combine: fast, and the lanes of a looped
    accumulator may hold their candidates in any order of index.
    """
    best = tl.expand_dims(max_reduce(value, AXIS), AXIS)
    hit = (value == best) | ((value != value) & (best != best))
    return tl.min(tl.where(hit, index, 2147483647), AXIS)


@triton.jit
def argmin_index(value, index, AXIS: tl.constexpr):
    best = tl.expand_dims(min_reduce(value, AXIS), AXIS)
    hit = (value == best) | ((value != value) & (best != best))
    return tl.min(tl.where(hit, index, 2147483647), AXIS)


@triton.jit
def _prod_combine(a, b):
    return a * b
