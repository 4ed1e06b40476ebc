"""Inputs for one fuzz case: the example call rebuilt at new sizes, with fresh random values.

    call = ExampleCall.of(compiled_function, args, kwargs)
    dims = dims_by_source(entry.capture.env, {s0: 17})      # {"L['x']": {0: 17}}
    call.shapes(dims)            ->  {"L['x']": (17, 64)}
    args, kwargs = call.rebuild(dims, generator)

A tensor keeps its dtype, device, rank and requires_grad; each dim read into a symbol takes the
assigned size, the others keep the example's. Floats are drawn from a normal distribution (uniform
[0, 1) when the example has no negative value); integer and bool tensors draw from the example's
own elements, so token ids, masks and ignore_index labels stay valid.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass

import torch

from symbolic import ItemSource, LocalSource, SizeSource, Source


def dims_by_source(env, values: dict) -> dict[str, dict[int, int]]:
    """{tensor source text: {dim: size}} for every symbol in `values` read from a tensor size."""
    dims: dict[str, dict[int, int]] = {}
    for symbol, info in env.symbols.items():
        if symbol in values and isinstance(info.source, SizeSource):
            dims.setdefault(str(info.source.base), {})[info.source.dim] = int(values[symbol])
    return dims


@dataclass(frozen=True)
class ExampleCall:
    """The example arguments bound to the frame's parameter names (`self` first for a module)."""

    signature: inspect.Signature
    arguments: dict            # parameter name -> example value
    has_self: bool

    @classmethod
    def of(cls, function, args: tuple, kwargs: dict) -> ExampleCall:
        """`function` is a symc CompiledFunction; its `self_obj` (a module) binds to `self`."""
        has_self = function.self_obj is not None
        full = (function.self_obj, *args) if has_self else tuple(args)
        bound = function.signature.bind(*full, **kwargs)
        return cls(function.signature, dict(bound.arguments), has_self)

    def tensors(self) -> list[tuple[str, torch.Tensor]]:
        """(source text, example tensor) for every tensor among the arguments (not `self`)."""
        found: list[tuple[str, torch.Tensor]] = []
        for name, value in self._user_arguments().items():
            _walk(value, LocalSource(name), lambda src, t: found.append((str(src), t)))
        return found

    def shapes(self, dims: dict[str, dict[int, int]]) -> dict[str, tuple[int, ...]]:
        """The shape each argument tensor would have at these sizes (nothing allocated)."""
        return {src: _shape(t, dims.get(src, {})) for src, t in self.tensors()}

    def rebuild(self, dims: dict[str, dict[int, int]], generator: torch.Generator):
        """(args, kwargs) at these sizes: fresh tensors, other values as in the example."""
        arguments = {}
        for name, value in self.arguments.items():
            if self.has_self and name == "self":
                arguments[name] = value
            else:
                arguments[name] = _rebuild(value, LocalSource(name), dims, generator)
        bound = inspect.BoundArguments(self.signature, arguments)
        args = bound.args[1:] if self.has_self else bound.args
        return tuple(args), dict(bound.kwargs)

    def _user_arguments(self) -> dict:
        return {k: v for k, v in self.arguments.items() if not (self.has_self and k == "self")}


def _walk(value, source: Source, visit) -> None:
    if isinstance(value, torch.Tensor):
        visit(source, value)
    elif isinstance(value, tuple | list):
        for i, item in enumerate(value):
            _walk(item, ItemSource(source, i), visit)
    elif isinstance(value, dict):
        for key, item in value.items():
            _walk(item, ItemSource(source, key), visit)


def _rebuild(value, source: Source, dims: dict, generator: torch.Generator):
    if isinstance(value, torch.Tensor):
        return fresh_tensor(value, _shape(value, dims.get(str(source), {})), generator)
    if isinstance(value, tuple | list):
        items = [_rebuild(v, ItemSource(source, i), dims, generator) for i, v in enumerate(value)]
        return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)
    if isinstance(value, dict):
        return {k: _rebuild(v, ItemSource(source, k), dims, generator) for k, v in value.items()}
    return value


def _shape(example: torch.Tensor, dims: dict[int, int]) -> tuple[int, ...]:
    return tuple(dims.get(d, size) for d, size in enumerate(example.shape))


def fresh_tensor(example: torch.Tensor, shape: tuple, generator: torch.Generator) -> torch.Tensor:
    """Random values shaped `shape`, like `example` in dtype, device and requires_grad."""
    if example.dtype.is_floating_point or example.dtype.is_complex:
        nonnegative = example.numel() > 0 and bool((example.detach() >= 0).all())
        draw = torch.rand if nonnegative else torch.randn
        values = draw(shape, generator=generator, dtype=torch.float64 if example.dtype ==
                      torch.float64 else torch.float32).to(example.dtype)
    else:
        flat = example.detach().reshape(-1).cpu()
        if flat.numel() == 0:
            values = torch.zeros(shape, dtype=example.dtype)
        else:
            values = flat[torch.randint(0, flat.numel(), shape, generator=generator)]
    values = values.to(example.device)
    return values.requires_grad_(example.requires_grad)


def clone_call(args: tuple, kwargs: dict):
    """A copy of the call's tensors (leaves again, same requires_grad), so two runs never share."""

    def copy(value):
        if isinstance(value, torch.Tensor):
            return value.detach().clone().requires_grad_(value.requires_grad)
        if isinstance(value, tuple | list):
            items = [copy(v) for v in value]
            return type(value)(items) if not hasattr(value, "_fields") else type(value)(*items)
        if isinstance(value, dict):
            return {k: copy(v) for k, v in value.items()}
        return value

    return copy(args), copy(kwargs)


def render_call(name: str, call: ExampleCall, dims: dict) -> str:
    """Python text of a call at these sizes: `f(x=torch.randn(1, 3), y=torch.randn(2,))`."""
    rendered_args = []
    for param_name, value in call._user_arguments().items():
        kind = call.signature.parameters[param_name].kind
        text = _render(value, LocalSource(param_name), dims)
        if kind is inspect.Parameter.VAR_POSITIONAL:
            rendered_args += [_render(v, ItemSource(LocalSource(param_name), i), dims)
                              for i, v in enumerate(value)]
        elif kind is inspect.Parameter.VAR_KEYWORD:
            rendered_args += [f"{k}={_render(v, ItemSource(LocalSource(param_name), k), dims)}"
                              for k, v in value.items()]
        elif kind is inspect.Parameter.POSITIONAL_ONLY:
            rendered_args.append(text)
        else:
            rendered_args.append(f"{param_name}={text}")
    return f"{name}({', '.join(rendered_args)})"


def _render(value, source: Source, dims: dict) -> str:
    if isinstance(value, torch.Tensor):
        return _render_tensor(value, _shape(value, dims.get(str(source), {})))
    if isinstance(value, tuple | list):
        items = [_render(v, ItemSource(source, i), dims) for i, v in enumerate(value)]
        inner = ", ".join(items) + ("," if isinstance(value, tuple) and len(items) == 1 else "")
        return f"({inner})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, dict):
        items = [f"{k!r}: {_render(v, ItemSource(source, k), dims)}" for k, v in value.items()]
        return "{" + ", ".join(items) + "}"
    return repr(value)


def _render_tensor(example: torch.Tensor, shape: tuple) -> str:
    size = ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "")
    extra = ""
    if example.dtype not in (torch.float32, torch.int64, torch.bool):
        extra += f", dtype={example.dtype}"
    if example.device.type != "cpu":
        extra += f", device={str(example.device)!r}"
    if example.requires_grad:
        extra += ", requires_grad=True"
    if example.dtype == torch.bool:
        return f"torch.rand(({size}){_device(example)}) < 0.5"
    if example.dtype.is_floating_point or example.dtype.is_complex:
        return f"torch.randn({size}{extra})"
    low, high = (int(example.min()), int(example.max())) if example.numel() else (0, 0)
    return f"torch.randint({low}, {high + 1}, ({size}){extra})"


def _device(example: torch.Tensor) -> str:
    return "" if example.device.type == "cpu" else f", device={str(example.device)!r}"
