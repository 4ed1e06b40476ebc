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
