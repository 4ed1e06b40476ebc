"""The guard records: each a fact a compiled entry assumed, with its source and user line.

    TensorMatchGuard(L['x'], f32, cpu, ndim=2, ...)  renders  L['x'].dtype == torch.float32, ...
    ValueGuard(L['self'].training, True)              renders  L['self'].training == True

Every record renders readably (`str`) and as a Python boolean expression (`check_code()`) over
the frame's locals `L` and globals `G`; the checker pastes those into one generated function.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy
import torch

from guards.render import render_expr
from symbolic import ShapeEnv, ShapeGuard, Source, SymcError


class GuardError(SymcError):
    """A guard set is inconsistent (unsatisfiable) or a guard cannot be checked at run time.

    Unsatisfiable guards are a compiler bug: report the printed guard set.
    """


@dataclass(frozen=True, slots=True)
class TensorMatchGuard:
    """Tensor identity of properties: dtype, device, rank, requires_grad and the static sizes."""

    source: Source
    dtype: torch.dtype
    device: torch.device
    ndim: int
    requires_grad: bool
    static_sizes: tuple[tuple[int, int], ...] = ()  # (dim, size) pairs that are not symbolic
    where: str | None = None
    type_: type = torch.Tensor  # exact: torch.Tensor or nn.Parameter (subclasses break)

    def __str__(self) -> str:
        parts = [
            f"{self.source}.dtype == {self.dtype}",
            f"device.type == {self.device.type!r}",
            f"dim() == {self.ndim}",
            f"requires_grad == {self.requires_grad}",
        ]
        parts += [f"size({d}) == {n}" for d, n in self.static_sizes]
        if self.type_ is not torch.Tensor:  # a plain Tensor's exact type goes without saying
            parts.append(f"type is {tensor_type_name(self.type_)}")
        return ", ".join(parts)

    def check_code(self) -> str:
        s = str(self.source)
        parts = [
            f"type({s}) is {tensor_type_name(self.type_)}",
            f"{s}.dtype == {self.dtype}",
            f"{s}.device.type == {self.device.type!r}",
            f"{s}.dim() == {self.ndim}",
            f"{s}.requires_grad == {self.requires_grad}",
        ]
        parts += [f"{s}.size({d}) == {n}" for d, n in self.static_sizes]
        return " and ".join(parts)


def tensor_type_name(tensor_type: type) -> str:
    return "torch.nn.Parameter" if tensor_type is torch.nn.Parameter else "torch.Tensor"


@dataclass(frozen=True, slots=True)
class ValueGuard:
    """A Python constant the program read (int, float, bool, str, None, enum member)."""

    source: Source
    value: object
    where: str | None = None

    def __str__(self) -> str:
        return f"{self.source} == {self.value!r}"

    def check_code(self) -> str:
        if self.value is None or isinstance(self.value, bool):
            return f"{self.source} is {self.value!r}"
        type_name = type(self.value).__name__
        return f"type({self.source}) is {type_name} and {self.source} == {self.value!r}"


@dataclass(frozen=True, slots=True)
class IdentityGuard:
    """An object the program relied on being the very same (module, function, class)."""

    source: Source
    object_id: int
    description: str = ""
    where: str | None = None

    def __str__(self) -> str:
        return f"{self.source} is {self.description or hex(self.object_id)}"

    def check_code(self) -> str:
        return f"id({self.source}) == {self.object_id}"


@dataclass(frozen=True, slots=True)
class TypeGuard:
    source: Source
    type_: type
    where: str | None = None

    def __str__(self) -> str:
        return f"type({self.source}) is {self.type_.__qualname__}"

    def check_code(self) -> str:
        return f"type({self.source}).__qualname__ == {self.type_.__qualname__!r}"


@dataclass(frozen=True, slots=True)
class LengthGuard:
    source: Source
    length: int
    where: str | None = None

    def __str__(self) -> str:
        return f"len({self.source}) == {self.length}"

    def check_code(self) -> str:
        return f"len({self.source}) == {self.length}"


@dataclass(frozen=True, slots=True)
class DictKeysGuard:
    source: Source
    keys: tuple
    where: str | None = None

    def __str__(self) -> str:
        return f"{self.source}.keys() == {list(self.keys)!r}"

    def check_code(self) -> str:
        return f"tuple({self.source}.keys()) == {self.keys!r}"


Guard = (
    TensorMatchGuard
    | ValueGuard
    | IdentityGuard
    | TypeGuard
    | LengthGuard
    | DictKeysGuard
    | ShapeGuard
)


@dataclass
class GuardSet:
    """The guards of one compiled entry: non-shape guards plus the ShapeEnv's shape guards.

    Shape guards are `sympy` relations over the env's symbols; each symbol's value is read at run
    time from `env.source_of(symbol)`. A set without shape guards has an empty ShapeEnv.
    """

    guards: list = field(default_factory=list)
    env: ShapeEnv = field(default_factory=ShapeEnv)

    def add(self, guard) -> None:
        if guard not in self.guards:
            self.guards.append(guard)

    @property
    def shape_guards(self) -> list[ShapeGuard]:
        """The env's shape guards, then any ShapeGuard added directly; duplicates dropped."""
        found = list(self.env.guards)
        found += [g for g in self.guards if isinstance(g, ShapeGuard)]
        unique: dict = {}
        for guard in found:
            unique.setdefault(guard.expr, guard)
        return list(unique.values())

    @property
    def other_guards(self) -> list:
        """Every guard that is not a shape guard (tensor match, values, identity, ...)."""
        return [g for g in self.guards if not isinstance(g, ShapeGuard)]

    def __str__(self) -> str:
        lines = [str(g) for g in self.other_guards]
        lines += [render_expr(g.expr) for g in self.shape_guards]
        return "\n".join(lines)
