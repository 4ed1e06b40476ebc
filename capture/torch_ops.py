"""Tensors in capture: attributes, methods, torch calls, in-place ops made functional, indexing
and setitem (its functional value: capture/assign.py).

    x.shape            -> SizeVariable of the meta's sympy sizes (no graph node)
    x.view(b, -1)      -> call_function torch.Tensor.view(x, s0, -1)
    x.add_(y)          -> call_function torch.Tensor.add(x, y), then `x` names the new node
    x[:, 0] = v        -> torch.select_scatter(x, v', 1, 0)  (v' broadcast to the slice)

A write to a graph input leaves its TensorVariable pointing at a new node; the translator
returns those as extra outputs and the driver copies them back into the user's tensors.
"""

from __future__ import annotations

import functools
import inspect

import sympy
import torch
import torch.nn.functional as F

from capture.assign import assign, full_slice
from capture.errors import Unsupported
from capture.functionalize import inplace_method, view_parent, write
from capture.graph import GraphState
from capture.layout import (
    LAYOUT_QUERIES,
    is_contiguous,
    layout_break,
    require_dense_storage,
    require_viewable,
)
from capture.running_stats import RUNNING_STATS_RULES
from capture.variables import (
    ConstVariable,
    SizeVariable,
    SymBoolVariable,
    TensorMethodVariable,
    TensorVariable,
    TupleVariable,
    Variable,
    sym_value,
)

# Ops indexing the tensor's storage (sizes, strides, offset): only of inputs that are all of it.
STORAGE_READS = frozenset({"as_strided", "as_strided_copy", "as_strided_scatter"})
DATA_DEPENDENT = frozenset("item tolist numpy __bool__ __int__ __float__ nonzero".split())
NOT_SUPPORTED_ATTRS = frozenset("grad data grad_fn _version storage untyped_storage".split())


def tensor_attribute(state: GraphState, t: TensorVariable, name: str) -> Variable:
    meta = t.meta
    if name == "shape":
        return SizeVariable([sym_value(s) for s in meta.shape])
    if name == "ndim":
        return ConstVariable(meta.ndim)
    if name == "dtype":
        return ConstVariable(meta.dtype)
    if name == "device":
        return ConstVariable(meta.device)
    if name == "requires_grad":
        return ConstVariable(meta.requires_grad)
    if name == "is_cuda":
        return ConstVariable(meta.device.type == "cuda")
    if name in ("T", "mT", "H", "mH"):
        return tensor_method(state, "permute" if name == "T" else "transpose", t,
                             _t_args(t, name), {})
    if name in NOT_SUPPORTED_ATTRS:
        raise Unsupported(f"reading Tensor.{name} inside a compiled region")
    if hasattr(torch.Tensor, name) and callable(getattr(torch.Tensor, name)):
        return TensorMethodVariable(name, t)
    raise Unsupported(f"Tensor attribute {name!r}")


def _t_args(t: TensorVariable, name: str) -> list:
    if name == "T":
        return [ConstVariable(d) for d in reversed(range(t.meta.ndim))]
    return [ConstVariable(-2), ConstVariable(-1)]


def tensor_method(state: GraphState, name: str, t: TensorVariable, args: list, kwargs: dict):
    meta = t.meta
    if name == "size":
        dim = _const_arg(args, kwargs, "dim")
        if dim is None:
            return SizeVariable([sym_value(s) for s in meta.shape])
        return sym_value(meta.shape[dim])
    if name in ("dim", "ndimension"):
        return ConstVariable(meta.ndim)
    if name == "numel":
        return sym_value(meta.numel())
    if name == "is_floating_point":
        return ConstVariable(meta.dtype.is_floating_point)
    if name == "is_contiguous":
        return is_contiguous(state, t, args, kwargs)
    if name == "get_device":
        return ConstVariable(meta.device.index if meta.device.type == "cuda" else -1)
    if name in LAYOUT_QUERIES:
        raise layout_break(f"Tensor.{name}()", t)
    if name == "view":
        require_viewable(state, t)
    if name in STORAGE_READS:
        require_dense_storage(state, t, f"Tensor.{name}")
    if name in DATA_DEPENDENT:
        raise Unsupported(f"data-dependent Tensor.{name}()")
    if name.endswith("_") and not name.endswith("__"):
        return inplace_method(state, name, t, args, kwargs)
    if name == "select" and len(args) + len(kwargs) == 2:   # x[:, ..., i]: one view op less
        dim = args[0] if args else kwargs["dim"]
        index = args[1] if len(args) > 1 else kwargs["index"]
        if isinstance(dim, ConstVariable) and isinstance(dim.value, int):
            full = [full_slice()] * (dim.value % max(meta.ndim, 1))
            return getitem(state, t, TupleVariable([*full, index]))
    view_of = view_parent(name, t, args)
    return state.call(getattr(torch.Tensor, name), [t, *args], kwargs, view_of=view_of)


def _const_arg(args, kwargs, key):
    var = args[0] if args else kwargs.get(key)
    if var is None:
        return None
    if not isinstance(var, ConstVariable):
        raise Unsupported(f"non-constant {key} argument")
    return var.value


def getitem(state: GraphState, t: TensorVariable, index: Variable) -> Variable:
    if isinstance(index, TensorVariable) and index.meta.dtype == torch.bool:
        # Boolean masks give data-dependent sizes.
        raise Unsupported("indexing with a boolean mask (data-dependent output size)")
    return state.call(torch.Tensor.__getitem__, [t, index], {},
                      view_of=view_parent("__getitem__", t, [index]))


def setitem(state: GraphState, t: TensorVariable, index: Variable, value: Variable) -> None:
    """`t[index] = value`: a functional op written back into `t` (and its base, if a view)."""
    write(state, t, assign(state, t, index, value), "setitem")


def call_torch(state: GraphState, fn, args: list, kwargs: dict) -> Variable:
    """A torch function call: in-place forms (`torch.tanh_(x)`, `F.relu(x, inplace=True)`)
    write their first argument, view functions (`torch.narrow`) return views."""
    out_arg = kwargs.get("out")
    if out_arg is not None and not (isinstance(out_arg, ConstVariable) and out_arg.value is None):
        raise Unsupported(f"{getattr(fn, '__name__', fn)}(out=...) in a compiled region")
    name = getattr(fn, "__name__", "")
    if (rule := _running_stats_rule(fn)) is not None:
        return rule(state, list(args), dict(kwargs))   # batch norm writing running statistics
    if fn is F.scaled_dot_product_attention:
        args, kwargs = _causal_flag(state, list(args), dict(kwargs))
    t = args[0] if args else None
    if not isinstance(t, TensorVariable):
        flag = kwargs.get("inplace")
        if isinstance(flag, ConstVariable) and flag.value:
            raise Unsupported(f"{name}(inplace=True) with its tensor passed by keyword")
        return state.call(fn, args, kwargs)
    if getattr(torch.Tensor, name, None) is fn or (name == "select" and fn is torch.select):
        return tensor_method(state, name, t, args[1:], kwargs)   # x.add_(y), x.select(0, 1)
    if name.endswith("_") and not name.endswith("__"):
        if callable(getattr(torch.Tensor, name, None)):
            return inplace_method(state, name, t, args[1:], kwargs)
        functional = getattr(F, name[:-1], None) or getattr(torch, name[:-1], None)
        if functional is None:
            raise Unsupported(f"in-place {name} with no functional form")
        return write(state, t, state.call(functional, args, kwargs), name)
    if name in STORAGE_READS and getattr(torch, name, None) is fn:
        require_dense_storage(state, t, f"torch.{name}")
    flag = _inplace_flag(fn, args, kwargs)
    if flag is not None:
        args, kwargs = flag
        return write(state, t, state.call(fn, args, kwargs), f"{name}(inplace=True)")
    view_of = view_parent(name, t, args[1:]) if getattr(torch, name, None) is fn else None
    return state.call(fn, args, kwargs, view_of=view_of)


def _running_stats_rule(fn):
    try:
        return RUNNING_STATS_RULES.get(fn)
    except TypeError:   # unhashable callable
        return None


def _causal_flag(state: GraphState, args: list, kwargs: dict) -> tuple[list, dict]:
    """SDPA's `is_causal` given as a size relation (transformers: `q_length > 1 and mask is
    None`) and no mask: a causal mask over S <= 1 keys keeps every key, so the flag is True for
    every size where `is_causal or S <= 1` is proved (False where `not is_causal or S <= 1`
    is), with no guard; otherwise it is decided as any SymBool argument."""
    position = 5  # (query, key, value, attn_mask, dropout_p, is_causal, ...)
    flag = args[position] if len(args) > position else kwargs.get("is_causal")
    key = args[1] if len(args) > 1 else kwargs.get("key")
    mask = args[3] if len(args) > 3 else kwargs.get("attn_mask", ConstVariable(None))
    if not isinstance(flag, SymBoolVariable) or not isinstance(key, TensorVariable) or not (
            isinstance(mask, ConstVariable) and mask.value is None) or len(key.meta.shape) < 2:
        return args, kwargs
    one_key = sympy.Le(key.meta.shape[-2], 1)
    for value in (True, False):
        if state.env.prove(sympy.Or(flag.expr if value else sympy.Not(flag.expr), one_key)):
            if len(args) > position:
                args[position] = ConstVariable(value)
            else:
                kwargs["is_causal"] = ConstVariable(value)
            break
    return args, kwargs


@functools.lru_cache(maxsize=1024)
def _inplace_position(fn) -> int | None:
    """The position of `fn`'s `inplace` parameter (F.relu(input, inplace)), if it has one."""
    try:
        params = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    return params.index("inplace") if "inplace" in params else None


def _inplace_flag(fn, args: list, kwargs: dict):
    """(args, kwargs) with `inplace=False` when the call passes `inplace=True`, else None."""
    try:
        position = _inplace_position(fn)
    except TypeError:   # unhashable callable
        position = None
    if "inplace" in kwargs:
        flag = kwargs["inplace"]
    elif position is not None and position < len(args):
        flag = args[position]
    else:
        return None
    if not isinstance(flag, ConstVariable):
        raise Unsupported(f"{fn.__name__}: a non-constant inplace= argument")
    if not flag.value:
        return None
    if "inplace" in kwargs:
        return args, {**kwargs, "inplace": ConstVariable(False)}
    args = list(args)
    args[position] = ConstVariable(False)
    return args, kwargs
