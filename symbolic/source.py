"""Sources: where a value is read at run time, printed as the Python expression that reads it.

    SizeSource(LocalSource("x"), 1)  prints  L['x'].size(1)

`str(source)` is valid Python given the frame's locals as `L` and globals as `G`, so the guard
checker can paste it into generated code and `explain` can show it as is.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


class Source:
    """Base of the source records; subclasses are frozen dataclasses with a `__str__`."""

    def read(self, L: dict, G: dict | None = None):
        """The value this source names, read from a frame's locals `L` and globals `G`."""
        return eval(str(self), {"L": L, "G": G or {}})  # noqa: S307 - text we generated

    def size_text(self, dim: int) -> str:
        """The text of `self.size(dim)` (a source whose sizes have a plainer name overrides it)."""
        return f"{self}.size({dim})"


@dataclass(frozen=True, slots=True)
class LocalSource(Source):
    name: str

    def __str__(self) -> str:
        return f"L[{self.name!r}]"


@dataclass(frozen=True, slots=True)
class GlobalSource(Source):
    name: str

    def __str__(self) -> str:
        return f"G[{self.name!r}]"


@dataclass(frozen=True, slots=True)
class AttrSource(Source):
    base: Source
    attr: str

    def __str__(self) -> str:
        return f"{self.base}.{self.attr}"


@dataclass(frozen=True, slots=True)
class ItemSource(Source):
    """`base[index]` for tuples, lists and dicts (index is an int or a string key)."""

    base: Source
    index: object

    def __str__(self) -> str:
        return f"{self.base}[{self.index!r}]"


@dataclass(frozen=True, slots=True)
class SizeSource(Source):
    base: Source
    dim: int

    def __str__(self) -> str:
        return self.base.size_text(self.dim)


@dataclass(frozen=True, slots=True)
class StrideSource(Source):
    base: Source
    dim: int

    def __str__(self) -> str:
        return f"{self.base}.stride({self.dim})"


@dataclass(frozen=True, slots=True)
class DefaultDeviceSource(Source):
    """`str(torch.get_default_device())`: where factory calls without a device put tensors
    (the one source that reads `torch`, which the guard checker's namespace holds)."""

    def __str__(self) -> str:
        return "str(torch.get_default_device())"

    def read(self, L: dict, G: dict | None = None):
        return str(torch.get_default_device())


@dataclass(frozen=True, slots=True)
class ConstantSource(Source):
    """A value with no run-time home (made up by the compiler); reading it is an error."""

    description: str

    def __str__(self) -> str:
        return f"<{self.description}>"
