"""The decomposition table: torch callable -> function of prims with torch's signature.

    @register_decomposition(torch.add, torch.Tensor.add, operator.add)
    def add(a, b, *, alpha=1): ...

Keys are torch functions, unbound `torch.Tensor.<name>` methods, `operator.*` functions and
`torch.nn.functional.*` functions. A decomposition calls only prims and helpers, never Tensor
methods, so it runs unchanged on real tensors, TensorMetas and TracedTensors.
"""

from __future__ import annotations

from collections.abc import Callable

from prims.core import PrimError

DECOMPOSITIONS: dict[Callable, Callable] = {}


def register_decomposition(*targets: Callable):
    """Register the decorated function as the decomposition of every one of `targets`.

    None targets (a torch callable missing from this torch version) are skipped.
    """

    def register(fn: Callable) -> Callable:
        for target in filter(None, targets):
            if DECOMPOSITIONS.get(target, fn) is not fn:
                raise PrimError(f"decomposition for {target_name(target)} registered twice")
            DECOMPOSITIONS[target] = fn
        return fn

    return register


def has_decomposition(target: Callable) -> bool:
    try:
        return target in DECOMPOSITIONS
    except TypeError:  # unhashable targets have none
        return False


def target_name(target) -> str:
    """`torch.add`, `torch.Tensor.add`, `operator.add`, `torch.nn.functional.gelu`, ..."""
    name = getattr(target, "__name__", repr(target))
    qualname = getattr(target, "__qualname__", name)
    module = getattr(target, "__module__", None) or ""
    if qualname.startswith("TensorBase.") or qualname.startswith("Tensor."):
        return f"torch.Tensor.{name}"
    if module.startswith("torch.nn.functional") or module == "torch.nn.functional":
        return f"torch.nn.functional.{name}"
    if module in ("_operator", "operator"):
        return f"operator.{name}"
    if module.startswith("torch._C._nn"):
        return f"torch.nn.functional.{name}"
    if module.startswith("torch"):
        return f"torch.{name}"
    objclass = getattr(target, "__objclass__", None)
    if objclass is not None and objclass.__name__ in ("TensorBase", "Tensor"):
        return f"torch.Tensor.{name}"
    return f"{module}.{name}" if module else name


def decomposition_for(target: Callable) -> Callable:
    """The decomposition of `target`, or a PrimError saying where to add one."""
    if has_decomposition(target):
        return DECOMPOSITIONS[target]
    raise PrimError(f"no decomposition for {target_name(target)}; add one to "
                    f"prims/decompositions/<module>.py")
