"""Which torch calls return a `torch.return_types.*` named tuple instead of a plain tuple, and
which return a Python scalar computed from tensors (`torch.allclose` -> bool).

Decompositions return plain tuples; capture wraps a multi-output call's result in the structseq
type eager would give, so `.values` / `.indices` and the returned type match eager.

    structseq_type(torch.max) -> torch.return_types.max     (its fields: values, indices)
    structseq_type(torch.var_mean) -> None                  (eager returns a plain tuple)
    python_scalar_type(torch.equal) -> bool     (its decomposition gives a 0-d bool tensor)
"""

from __future__ import annotations

import torch


def structseq_type(target) -> type | None:
    """The `torch.return_types` class a torch function or Tensor method's tuple result has."""
    name = getattr(target, "__name__", None)
    if not isinstance(name, str) or not _is_torch_callable(target):
        return None
    cls = getattr(torch.return_types, name, None)
    if isinstance(cls, type) and issubclass(cls, tuple) and hasattr(cls, "n_fields"):
        return cls
    return None


# Calls whose decomposition gives a 0-d tensor standing for the Python scalar eager returns:
# capture reads it (`bool(t)`) after the graph ran.
PYTHON_SCALAR_RESULTS: dict = {
    torch.allclose: bool, torch.Tensor.allclose: bool,
    torch.equal: bool, torch.Tensor.equal: bool,
}


def python_scalar_type(target) -> type | None:
    """The Python type (bool) of a call whose eager result is a scalar read from tensors."""
    try:
        return PYTHON_SCALAR_RESULTS.get(target)
    except TypeError:  # unhashable
        return None


def field_names(cls: type) -> tuple[str, ...]:
    """The named fields of a structseq type, in order."""
    return tuple(cls.__match_args__)


def _is_torch_callable(target) -> bool:
    if getattr(torch.Tensor, getattr(target, "__name__", ""), None) is target:
        return True
    module = getattr(target, "__module__", None) or ""
    return module == "torch" or module.startswith("torch.") or (
        getattr(torch, target.__name__, None) is target)


__all__ = ["PYTHON_SCALAR_RESULTS", "field_names", "python_scalar_type", "structseq_type"]
