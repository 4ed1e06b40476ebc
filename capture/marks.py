"""User marks on input tensors: `mark_dynamic(t, dim, min=, max=)` and `mark_static(t, dim)`.

Stored on the tensor itself (attribute `_symc_marks`, living and dying with it), read by
capture when the tensor becomes a graph input. `symc.mark_dynamic` / `symc.mark_static` are
these functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from capture.errors import CaptureError


@dataclass(frozen=True, slots=True)
class DimMark:
    dynamic: bool
    min: int | None = None
    max: int | None = None


_ATTR = "_symc_marks"


def _marks(t: torch.Tensor) -> dict:
    marks = getattr(t, _ATTR, None)
    if marks is None:
        marks = {}
        setattr(t, _ATTR, marks)
    return marks


def _check(t: torch.Tensor, dim: int) -> int:
    if not isinstance(t, torch.Tensor):
        raise CaptureError(f"mark_dynamic/mark_static expect a tensor, got {type(t).__name__}")
    if not -t.dim() <= dim < t.dim():
        raise CaptureError(f"dim {dim} is out of range for a tensor of rank {t.dim()}")
    return dim % t.dim()


def mark_dynamic(t: torch.Tensor, dim: int, *, min: int | None = None, max: int | None = None):
    """Make `t.size(dim)` a symbol (even at sizes 0/1), optionally with a value range."""
    dim = _check(t, dim)
    _marks(t)[dim] = DimMark(True, min, max)
    return t


def mark_static(t: torch.Tensor, dim: int | None = None):
    """Specialise `t.size(dim)` (every dim when `dim` is None) to its value at each compile."""
    dims = range(t.dim()) if dim is None else [_check(t, dim)]
    for d in dims:
        _marks(t)[d] = DimMark(False)
    return t


def marks_of(t: torch.Tensor) -> dict[int, DimMark]:
    return getattr(t, _ATTR, None) or {}
