"""Tensors from Python data: torch.tensor / torch.as_tensor of numbers, bools, symbolic sizes
and (nested) lists or tuples of them, as `full`s (a list: one `full` per element, concatenated).

    torch.tensor(0.0, dtype=f16)       -> full((), 0.0, f16, cpu)
    torch.tensor([s0, 2])              -> reshape(cat(full((1,), s0, i64), full((1,), 2, i64)))
    torch.tensor([[1, 1], [1, 1]])     -> full((2, 2), 1, i64, cpu)   (one value: one full)

The dtype is eager's: all bools -> bool, else all integers -> int64, else the default dtype.
A tensor among the data is not decomposed (eager copies it with a warning; a PrimError says so).
"""

from __future__ import annotations

import sympy
import torch

from prims import ops
from prims.core import PrimError
from prims.decompositions.common import is_tensor, reshape
from prims.decompositions.registry import register_decomposition
from prims.devices import default_device
from prims.sizes import is_symbolic

MAX_ELEMENTS = 256   # a longer list of numbers is a graph-sized constant: build it outside


def _kind(value, what: str) -> str:
    """'bool', 'int' or 'float' of one datum, else a PrimError naming what was found."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, sympy.Basic) and value.is_integer:
        return "int"
    if is_tensor(value):
        raise PrimError(f"{what}: expected Python numbers or sizes, found a tensor (eager "
                        f"copies it; use x.clone().detach() or torch.stack)")
    raise PrimError(f"{what}: expected Python bools, ints, floats or sizes, found "
                    f"{type(value).__name__} {value!r}")


def _flatten(data, what: str) -> tuple[tuple, list]:
    """(shape, row-major data) of a scalar or a rectangular nest of lists / tuples."""
    if not isinstance(data, (list, tuple)):
        _kind(data, what)
        return (), [data]
    if not data:
        return (0,), []
    parts = [_flatten(item, what) for item in data]
    inner = parts[0][0]
    if any(shape != inner for shape, _ in parts):
        raise PrimError(f"{what}: expected a rectangular nest of sequences, found rows of "
                        f"shapes {[shape for shape, _ in parts]}")
    return (len(data), *inner), [value for _, flat in parts for value in flat]


def _inferred_dtype(flat) -> torch.dtype:
    kinds = {_kind(value, "torch.tensor") for value in flat}
    if "float" in kinds or not kinds:
        return torch.get_default_dtype()
    return torch.bool if kinds == {"bool"} else torch.int64


def _cast(value, dtype: torch.dtype, what: str):
    """The datum as the fill value of a `dtype` full (eager's conversion: floats truncate)."""
    if is_symbolic(value):
        if dtype == torch.bool:
            raise PrimError(f"{what}: a symbolic size as a bool tensor is not supported")
        return value
    if isinstance(value, sympy.Basic):
        value = int(value)
    if dtype == torch.bool:
        return bool(value)
    if dtype.is_floating_point or dtype.is_complex:
        return float(value)
    return int(value)


def _from_data(data, dtype, device, requires_grad, what: str):
    if requires_grad:
        raise PrimError(f"{what}: requires_grad=True makes a new leaf inside the compiled "
                        f"region; create it outside and pass it in")
    shape, flat = _flatten(data, what)
    if len(flat) > MAX_ELEMENTS:
        raise PrimError(f"{what}: expected at most {MAX_ELEMENTS} elements, found {len(flat)}; "
                        f"build the tensor outside the compiled function and pass it in")
    dtype = dtype or _inferred_dtype(flat)
    device = default_device() if device is None else torch.device(device)
    values = [_cast(value, dtype, what) for value in flat]
    if not values:
        return ops.full(shape, 0, dtype, device)
    if not shape or (not any(is_symbolic(v) for v in values) and len(set(values)) == 1):
        return ops.full(shape, values[0], dtype, device)
    pieces = tuple(ops.full((1,), value, dtype, device) for value in values)
    flat_tensor = pieces[0] if len(pieces) == 1 else ops.cat(pieces, 0)
    return reshape(flat_tensor, shape)


@register_decomposition(torch.tensor)
def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    return _from_data(data, dtype, device, requires_grad, "torch.tensor")


@register_decomposition(torch.as_tensor)
def as_tensor(data, dtype=None, device=None):
    return _from_data(data, dtype, device, False, "torch.as_tensor")
