"""Sources capture adds to symbolic's: globals of other modules, closure cells of functions.

    ModuleGlobalSource("torch.nn.functional", "gelu")  prints
        __import__('sys').modules['torch.nn.functional'].__dict__['gelu']

Each prints as Python that reads the value given `L` and `G`, like every `symbolic.Source`.
"""

from __future__ import annotations

from dataclasses import dataclass

from symbolic import Source


@dataclass(frozen=True, slots=True)
class ModuleGlobalSource(Source):
    """A global of an inlined function's module (not the compiled frame's own globals `G`)."""

    module: str
    name: str

    def __str__(self) -> str:
        return f"__import__('sys').modules[{self.module!r}].__dict__[{self.name!r}]"


@dataclass(frozen=True, slots=True)
class CellSource(Source):
    """The contents of closure cell `index` of the function at `base`."""

    base: Source
    index: int

    def __str__(self) -> str:
        return f"{self.base}.__closure__[{self.index}].cell_contents"


@dataclass(frozen=True, slots=True)
class ContainsSource(Source):
    """Whether the mapping at `base` has `key` (a lookup's guard, whether the key is there)."""

    base: Source
    key: object

    def __str__(self) -> str:
        return f"({self.key!r} in {self.base})"


@dataclass(frozen=True, slots=True)
class TypeOfSource(Source):
    """The class of the value at `base` (`type(self).x`, a classmethod's `cls`)."""

    base: Source

    def __str__(self) -> str:
        return f"type({self.base})"


@dataclass(frozen=True, slots=True)
class DefaultDtypeSource(Source):
    """torch's default floating dtype: factory calls and Python-float promotion read it."""

    def __str__(self) -> str:
        return "torch.get_default_dtype()"

    def read(self, L: dict, G: dict | None = None):
        import torch

        return torch.get_default_dtype()


@dataclass(frozen=True, slots=True)
class ContiguitySource(Source):
    """Whether the tensor at `base` is contiguous in `memory_format` (a torch attribute name)."""

    base: Source
    memory_format: str = "contiguous_format"

    def __str__(self) -> str:
        if self.memory_format == "contiguous_format":
            return f"{self.base}.is_contiguous()"
        return f"{self.base}.is_contiguous(memory_format=torch.{self.memory_format})"

    def read(self, L: dict, G: dict | None = None):
        import torch

        return eval(str(self), {"L": L, "G": G or {}, "torch": torch})  # noqa: S307 - ours


@dataclass(frozen=True, slots=True)
class DenseStorageSource(Source):
    """Whether the tensor at `base` is its whole storage, in order: contiguous, storage offset 0
    and no storage past its last element (what as_strided's storage indices assume)."""

    base: Source

    def __str__(self) -> str:
        b = self.base
        return (f"({b}.is_contiguous() and {b}.storage_offset() == 0 and "
                f"{b}.untyped_storage().nbytes() == {b}.numel() * {b}.element_size())")


@dataclass(frozen=True, slots=True)
class StateSource(Source):
    """The object at `base`'s `__dict__` as nested tuples (hashable, compared by value): the
    state a call run at capture time read (capture/state_calls.py)."""

    base: Source

    def __str__(self) -> str:
        return f"__import__('capture.state_calls').state_calls.frozen({self.base}.__dict__)"
