"""TensorMeta: what every stage knows about a tensor without its data.

    TensorMeta.contiguous((s0, 768), torch.float32)  prints  f32[s0, 768]

Shape and stride are tuples of sympy expressions (ints become sympy.Integer). A contiguous
stride is derived from the shape when none is given. `meta_of(node)` is the one accessor for the
meta an fx node carries; `verify(graph)` checks every node has one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy
import torch

from symbolic.errors import SymbolicError
from symbolic.functions import sym_int

DTYPE_ABBREVIATIONS = {
    torch.float64: "f64",
    torch.float32: "f32",
    torch.float16: "f16",
    torch.bfloat16: "bf16",
    torch.int64: "i64",
    torch.int32: "i32",
    torch.int16: "i16",
    torch.int8: "i8",
    torch.uint8: "u8",
    torch.bool: "b8",
    torch.complex64: "c64",
}


def contiguous_strides(shape: tuple[sympy.Expr, ...]) -> tuple[sympy.Expr, ...]:
    strides = []
    running = sympy.Integer(1)
    for size in reversed(shape):
        strides.append(running)
        running = running * (size if not size.is_Integer else max(size, 1))
    return tuple(reversed(strides))


@dataclass(frozen=True, slots=True)
class TensorMeta:
    """A tensor's symbolic shape, strides, dtype, device and requires_grad flag."""

    shape: tuple
    dtype: torch.dtype
    device: torch.device = field(default_factory=lambda: torch.device("cpu"))
    stride: tuple | None = None
    requires_grad: bool = False

    def __post_init__(self):
        shape = tuple(sym_int(s) for s in self.shape)
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "device", torch.device(self.device))
        if self.stride is None:
            object.__setattr__(self, "stride", contiguous_strides(shape))
        else:
            object.__setattr__(self, "stride", tuple(sym_int(s) for s in self.stride))
        if len(self.stride) != len(shape):
            raise SymbolicError(f"stride {self.stride} does not match rank of shape {shape}")

    @classmethod
    def contiguous(cls, shape, dtype, device="cpu", requires_grad=False) -> TensorMeta:
        return cls(tuple(shape), dtype, torch.device(device), None, requires_grad)

    @classmethod
    def from_tensor(cls, t: torch.Tensor, shape=None, stride=None) -> TensorMeta:
        """Meta of a real tensor, optionally with symbolic `shape`/`stride` replacing its own."""
        return cls(
            tuple(shape if shape is not None else t.shape),
            t.dtype,
            t.device,
            tuple(stride if stride is not None else t.stride()),
            t.requires_grad,
        )

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dim(self) -> int:
        return len(self.shape)

    def size(self, dim: int | None = None):
        return self.shape if dim is None else self.shape[dim]

    def numel(self) -> sympy.Expr:
        return sympy.Mul(*self.shape) if self.shape else sympy.Integer(1)

    @property
    def is_contiguous(self) -> bool:
        return all(
            a == b or size == 1
            for a, b, size in zip(
                self.stride, contiguous_strides(self.shape), self.shape, strict=True
            )
        )

    @property
    def free_symbols(self) -> frozenset:
        out = set()
        for expr in (*self.shape, *self.stride):
            out |= expr.free_symbols
        return frozenset(out)

    def with_dtype(self, dtype: torch.dtype) -> TensorMeta:
        return TensorMeta(self.shape, dtype, self.device, self.stride, self.requires_grad)

    def __str__(self) -> str:
        name = DTYPE_ABBREVIATIONS.get(self.dtype, str(self.dtype).replace("torch.", ""))
        return f"{name}[{', '.join(str(s) for s in self.shape)}]"

    def __repr__(self) -> str:
        return f"TensorMeta({self})"


def meta_of(node):
    """The TensorMeta (or tuple of them, or sympy scalar) an fx node carries in meta['val']."""
    try:
        return node.meta["val"]
    except KeyError:
        raise SymbolicError(f"fx node {node.format_node()} has no meta['val']") from None


def verify(graph) -> None:
    """Check every non-output node of an fx graph carries meta with sympy shapes; raise if not."""
    for node in graph.nodes:
        if node.op == "output":
            continue
        value = meta_of(node)
        for meta in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(meta, TensorMeta):
                if not all(isinstance(s, sympy.Expr) for s in meta.shape):
                    raise SymbolicError(f"{node.name}: shape {meta.shape} is not all sympy")
            elif meta is not None and not isinstance(meta, (sympy.Basic, int, float, bool)):
                raise SymbolicError(f"{node.name}: meta['val'] is a {type(meta).__name__}")
