"""Sample inputs shared by the prims tests: one builder per prim/torch op, any size `n`.

A builder is `build(n, make) -> (args, kwargs)`. `n` is an int (real run) or a sympy symbol with
that int as hint (symbolic run); `make(shape, dtype, kind)` returns a real tensor or a TensorMeta
with that shape. Shape arguments are written in terms of `n`, so a symbolic run exercises
symbolic sizes everywhere.
"""

from __future__ import annotations

import sympy
import torch

from symbolic import LocalSource, ShapeEnv, TensorMeta

SIZES = (1, 2, 7, 33)
FLOATS = (torch.float32, torch.float64, torch.float16, torch.bfloat16)


class RealMaker:
    """Makes real tensors; `kind` picks values: randn, positive, index (with `high`), bool."""

    def __init__(self, seed: int = 0):
        self.gen = torch.Generator().manual_seed(seed)

    def __call__(self, shape, dtype=torch.float32, kind="randn", high=None):
        shape = tuple(int(s) for s in shape)
        if kind == "index":
            return torch.randint(0, max(int(high), 1), shape, generator=self.gen, dtype=dtype)
        if dtype == torch.bool or kind == "bool":
            return torch.rand(shape, generator=self.gen) > 0.5
        if not dtype.is_floating_point:
            low = 1 if kind == "positive" else -9
            return torch.randint(low, 10, shape, generator=self.gen).to(dtype)
        values = torch.randn(shape, generator=self.gen, dtype=torch.float64)
        if kind == "positive":
            values = values.abs() + 0.5
        elif kind == "unit":
            values = values.tanh() * 0.9
        return values.to(dtype)


class MetaMaker:
    """Makes TensorMetas with the given (symbolic) shapes."""

    def __call__(self, shape, dtype=torch.float32, kind="randn", high=None):
        if kind == "bool":
            dtype = torch.bool
        return TensorMeta.contiguous(tuple(shape), dtype)


def symbolic_size(env: ShapeEnv, n: int):
    """A symbol with hint n (sizes 1 stay the constant 1, as ShapeEnv specialises them)."""
    return env.create_symbol(n, LocalSource(f"n{n}"))


def substitute(meta, env: ShapeEnv):
    """A meta's shape with every symbol replaced by its hint, as a tuple of ints."""
    return tuple(int(sympy.sympify(env.simplify(s).xreplace(env.hints))) for s in meta.shape)


def flat(value):
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in flat(v)]
    return [value]


def close(got, want, dtype) -> bool:
    tol = {torch.float16: 2e-2, torch.bfloat16: 8e-2, torch.float32: 1e-4}.get(dtype, 1e-6)
    if got.dtype == torch.bool or not got.dtype.is_floating_point:
        return torch.equal(got, want)
    return torch.allclose(got.double(), want.double(), rtol=tol, atol=tol, equal_nan=True)


__all__ = ["FLOATS", "SIZES", "MetaMaker", "RealMaker", "close", "flat", "substitute",
           "symbolic_size", "sympy"]
