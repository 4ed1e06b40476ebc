"""Layout facts of tensors: which inputs capture accepts, and what `is_contiguous()` answers.

    x = torch.randn(6, 10)[:, ::2]; f(x) with `if x.is_contiguous(): ...`
        -> Const(False), guard  L['x'].is_contiguous() == False

The graph treats every tensor as a value (its placeholders' metas are contiguous, and every
backend makes an input contiguous or reads it through its strides), so layout is never a
question the graph answers. What the program itself asks about an input's layout is read from
the example and guarded; about an intermediate, only `.contiguous()`'s result is known (its other
strides follow eager's stride propagation, which capture does not model: a graph break).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from capture.errors import Unsupported
from capture.sources import ContiguitySource, DenseStorageSource
from capture.variables import ConstVariable, TensorVariable, Variable
from guards import ValueGuard

# Questions about where a tensor's elements are: never answered from the graph's metas.
LAYOUT_QUERIES = frozenset("stride storage_offset data_ptr is_set_to is_non_overlapping_and_dense"
                           .split())

MEMORY_FORMATS = {
    torch.contiguous_format: "contiguous_format",
    torch.channels_last: "channels_last",
    torch.channels_last_3d: "channels_last_3d",
}


@dataclass(frozen=True, slots=True)
class InputLayout:
    """The example input's answers to `is_contiguous(memory_format=...)`, by format name."""

    contiguous: tuple[tuple[str, bool], ...]
    dense_storage: bool = False   # contiguous from storage offset 0, storage of numel elements

    @staticmethod
    def of(t: torch.Tensor) -> InputLayout:
        dense = (t.is_contiguous() and t.storage_offset() == 0
                 and t.untyped_storage().nbytes() == t.numel() * t.element_size())
        answers = []
        for memory_format, name in MEMORY_FORMATS.items():
            try:
                answers.append((name, t.is_contiguous(memory_format=memory_format)))
            except RuntimeError:  # channels_last of a tensor of another rank: eager raises
                pass
        return InputLayout(tuple(answers), dense)

    def is_contiguous(self, name: str) -> bool | None:
        return dict(self.contiguous).get(name)


def check_input_kind(t: torch.Tensor, source) -> None:
    """Inputs capture can read: plain strided tensors (or parameters) on a real device."""
    if t.layout != torch.strided or t.is_sparse or t.is_quantized:
        raise Unsupported(f"input {source} is a {t.layout} tensor")
    if type(t) not in (torch.Tensor, torch.nn.Parameter):
        raise Unsupported(f"input {source} is a tensor subclass ({type(t).__qualname__}); "
                          "its overrides run eagerly")
    if t.device.type == "meta":
        raise Unsupported(f"input {source} is a meta tensor (no data to compute on)")


def is_contiguous(state, t: TensorVariable, args: list, kwargs: dict) -> Variable:
    """`t.is_contiguous(memory_format=...)`: an input's guarded answer, else a graph break."""
    memory_format = _memory_format(args, kwargs)
    name = MEMORY_FORMATS.get(memory_format)
    if name is None:
        raise Unsupported(f"is_contiguous(memory_format={memory_format})")
    if t.layout is not None and t.source is not None:
        answer = t.layout.is_contiguous(name)
        if answer is None:
            raise Unsupported(f"is_contiguous(memory_format={memory_format}) of a "
                              f"{t.meta.ndim}-d tensor (eager raises)")
        state.guard(ValueGuard, ContiguitySource(t.source, name), answer)
        return ConstVariable(answer)
    if _made_contiguous(t) and name == "contiguous_format":
        return ConstVariable(True)
    raise layout_break("is_contiguous() of an intermediate tensor", t)


def layout_break(what: str, t: TensorVariable) -> Unsupported:
    """A graph break at a layout question. About an intermediate it keeps the whole frame
    eager: a resumed frame would get the graph's output, whose strides are the backend's (often
    a contiguous copy), not eager's. A resumed frame gets an input itself, so that may resume."""
    exc = Unsupported(f"{what} (capture does not model strides)")
    exc.resumable = t.layout is not None and t.source is not None
    return exc


def require_viewable(state, t: TensorVariable) -> None:
    """Before `view` of an input: eager may reject a view of a non-contiguous input, which the
    graph (reading inputs as values) would not, so a contiguous input is guarded to stay so and
    a non-contiguous one runs eagerly."""
    if t.layout is None or t.source is None:
        return
    contiguous = t.layout.is_contiguous("contiguous_format")
    if not contiguous:
        raise Unsupported("view() of a non-contiguous input (eager decides from its strides)")
    state.guard(ValueGuard, ContiguitySource(t.source), True)


def require_dense_storage(state, t: TensorVariable, what: str) -> None:
    """Before as_strided-like reads of `t`'s storage: an input that is its whole storage (guarded
    to stay so) has storage index == flat index; anything else is a graph break."""
    if t.layout is None or t.source is None or t.base is not None:
        raise layout_break(f"{what} of an intermediate tensor or a view (it reads eager's "
                           "storage)", t)
    if not t.layout.dense_storage:
        raise Unsupported(f"{what} of an input that is not contiguous from storage offset 0 "
                          "over its whole storage (eager reads the storage itself)")
    state.guard(ValueGuard, DenseStorageSource(t.source), True)


def _memory_format(args: list, kwargs: dict):
    var = args[0] if args else kwargs.get("memory_format")
    if var is None:
        return torch.contiguous_format
    if not isinstance(var, ConstVariable):
        raise Unsupported("is_contiguous() with a non-constant memory_format")
    return var.value


def _made_contiguous(t: TensorVariable) -> bool:
    node = t.node
    return (node.target is torch.Tensor.contiguous and len(node.args) == 1
            and node.kwargs.get("memory_format", torch.contiguous_format)
            is torch.contiguous_format)
