"""The error hierarchy's root. Each package subclasses `SymcError` once (CaptureError, ...)."""

from __future__ import annotations


class SymcError(Exception):
    """Base of every error symc raises on purpose. Catch this to catch all of symc's errors."""


class ShapeError(SymcError, RuntimeError):
    """A size condition the program needs is false for these sizes (eager would fail too).

    Raised by `ShapeEnv.expect` when the condition is disproved or the example sizes violate it.
    Fix the input sizes; the message names the condition and where it was required. A
    RuntimeError too, as eager's own failures (a bad view, a broadcast mismatch) are, so the
    user's `except RuntimeError` catches it.
    """


class ShapeAssertionError(ShapeError, AssertionError):
    """The program's own `assert` on sizes failed (eager raises AssertionError there)."""


class ShapeValueError(ShapeError, ValueError):
    """A size check eager makes in Python with a ValueError (batch norm in training needs more
    than one value per channel)."""


class SymbolicError(SymcError):
    """An expression symc cannot reason about (an unsupported sympy or z3 construct).

    This is a bug or a gap in symbolic/: report it with the expression in the message.
    """
