"""Torch externs: a torch op the compiled graph calls at run time, with a symbolic meta and a VJP.

For ops torch.compile does not generate code for either (linalg factorizations, real FFTs,
special functions), `torch_extern(name, args, kwargs, shapes)` calls the op named by a row of
EXTERN_OPS (filled by prims/decompositions/extern_ops.py); `kwargs` is a tuple of (key, value)
pairs. Its meta is the row's shape rule over symbolic sizes, checked against torch's own meta
kernel run at the example sizes (which also gives the dtypes); a disagreement, or a dtype outside
the prims' (complex), is a PrimError, so capture breaks the graph instead of guessing. `shapes`
(the rule's shapes, given by the decomposition) are checked again on every run:

    torch_extern("linalg.svd", (a f32[s0, s1],), (("full_matrices", False),))
        -> (f32[s0, Min(s0, s1)], f32[Min(s0, s1)], f32[Min(s0, s1), s1])

`torch_extern_backward(name, args, kwargs, wrt, grads)` returns the gradients of the arguments at
positions `wrt`: it reruns the op under torch autograd from the saved inputs and calls
torch.autograd.grad with the output cotangents `grads` (None where an output got none).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy
import torch

from prims.core import PrimError, PrimKind, register_prim
from prims.dtypes import PRIM_DTYPES
from prims.sizes import as_expr
from prims.trace import meta_value
from symbolic import TensorMeta, current_env


@dataclass(frozen=True, slots=True)
class ExternOp:
    """One row of the extern table.

    `shape(*args, **kwargs)` gets TensorMetas and returns the output shape (a tuple of sizes), or
    a list of shapes for an op returning a tuple. `grad_args`: the positions of the tensor
    arguments torch differentiates (None: every floating one; (): the op is not differentiable,
    its outputs never require grad, as in eager).
    """

    name: str
    fn: Callable
    shape: Callable
    grad_args: tuple[int, ...] | None = None
    notes: str = ""

    @property
    def differentiable(self) -> bool:
        return self.grad_args != ()


EXTERN_OPS: dict[str, ExternOp] = {}


def register_extern_op(op: ExternOp) -> ExternOp:
    if op.name in EXTERN_OPS:
        raise PrimError(f"extern op {op.name!r} registered twice in prims/decompositions/"
                        "extern_ops.py")
    EXTERN_OPS[op.name] = op
    return op


def extern_op(name: str) -> ExternOp:
    op = EXTERN_OPS.get(name)
    if op is None:
        raise PrimError(f"torch_extern: expected an op of EXTERN_OPS, found {name!r}; add a row "
                        "to prims/decompositions/extern_ops.py")
    return op


def grad_positions(name: str, args) -> tuple[int, ...]:
    """The positions of `args` that get gradients: floating tensors torch differentiates."""
    op = extern_op(name)
    allowed = range(len(args)) if op.grad_args is None else op.grad_args
    return tuple(i for i in allowed if i < len(args) and _is_float_tensor(args[i]))


def _is_float_tensor(value) -> bool:
    dtype = getattr(value, "dtype", None)
    return hasattr(value, "shape") and dtype is not None and dtype.is_floating_point


def _map(value, fn):
    if isinstance(value, (tuple, list)):
        return type(value)(_map(v, fn) for v in value)
    return fn(value)


# --------------------------------------------------------------------------- meta
def _hint(size, env) -> int:
    size = as_expr(size)
    if size.is_number:
        return int(size)
    if env is None:
        raise PrimError(f"torch_extern: the size {size} needs a ShapeEnv for its example value")
    return env.size_hint(size)


def _at_hints(value, env):
    """TensorMetas as torch meta tensors, sympy scalars as numbers, at the example sizes."""
    def convert(v):
        if isinstance(v, TensorMeta):
            return torch.empty([_hint(s, env) for s in v.shape], dtype=v.dtype, device="meta")
        if isinstance(v, sympy.Basic) and v not in (sympy.true, sympy.false):
            if v.is_integer:
                return _hint(v, env)
            return float(v if v.is_number else v.xreplace(env.hints))
        return v
    return _map(value, convert)


def _torch_meta(op: ExternOp, args, kwargs, wrt=()):
    """Torch's own outputs at the example sizes (meta tensors; CPU zeros for an op with no meta
    kernel), arguments at positions `wrt` requiring grad; its errors become PrimErrors."""
    env = current_env()
    args, kwargs = _at_hints(args, env), dict(_at_hints(kwargs, env))
    try:
        try:
            return env, _call_requiring_grad(op, args, kwargs, wrt)
        except NotImplementedError:  # no meta kernel (geqrf): tiny real zeros instead
            args, kwargs = _map((args, kwargs), _on_cpu)
            return env, _call_requiring_grad(op, args, kwargs, wrt)
    except PrimError:
        raise
    except Exception as e:  # noqa: BLE001 - eager raises it too: the call runs eagerly
        raise PrimError(f"{op.name}: torch at the example sizes raised "
                        f"{type(e).__name__}: {str(e)[:200]}") from None


def _call_requiring_grad(op: ExternOp, args, kwargs, wrt):
    args = list(args)
    with torch.enable_grad():
        for i in wrt:
            args[i] = args[i].detach().requires_grad_(True)
        return op.fn(*args, **kwargs)


def _on_cpu(v):
    if isinstance(v, torch.Tensor) and v.device.type == "meta":
        return torch.zeros(v.shape, dtype=v.dtype)
    return v


def differentiable_outputs(name: str, args, kwargs) -> tuple[bool, ...]:
    """Per output of the call: whether eager's requires grad when the differentiable arguments
    do (False for integer results and outputs torch declares non-differentiable, lu's P)."""
    args, kwargs = meta_value(args), meta_value(kwargs)
    _, out = _torch_meta(extern_op(name), args, kwargs, grad_positions(name, args))
    outs = out if isinstance(out, tuple) else (out,)
    return tuple(isinstance(o, torch.Tensor) and o.requires_grad for o in outs)


def output_shapes(name: str, args, kwargs) -> tuple:
    """The row's output shapes (one per result) for the call, sizes symbolic."""
    args, kwargs = meta_value(args), meta_value(kwargs)
    shapes = extern_op(name).shape(*args, **dict(kwargs))
    shapes = list(shapes) if isinstance(shapes, list) else [shapes]
    return tuple(tuple(as_expr(s) for s in shape) for shape in shapes)


def _meta(name, args, kwargs, shapes=None):
    op = extern_op(name)
    env, real = _torch_meta(op, args, kwargs)
    outs = tuple(real) if isinstance(real, tuple) else (real,)
    for o in outs:
        if not isinstance(o, torch.Tensor):
            raise PrimError(f"{name}: expected tensor results, found {type(o).__name__}")
        if o.dtype not in PRIM_DTYPES:
            raise PrimError(f"{name}: its result is {o.dtype}, a dtype symc's prims do not "
                            "have (complex results need complex prims); the op runs eagerly")
    expected = output_shapes(name, args, kwargs)
    if shapes is not None and tuple(map(tuple, shapes)) != expected:
        raise PrimError(f"{name}: expected the output shapes {expected}, found {shapes}")
    shapes = expected
    if len(shapes) != len(outs):
        raise PrimError(f"{name}: the shape rule gives {len(shapes)} results, torch "
                        f"{len(outs)}; fix its row in prims/decompositions/extern_ops.py")
    metas = []
    for shape, o in zip(shapes, outs):
        hinted = [_hint(s, env) for s in shape]
        if hinted != list(o.shape):
            raise PrimError(f"{name}: expected the shape rule's {tuple(shape)} to be torch's "
                            f"{tuple(o.shape)} at the example sizes, found {tuple(hinted)}; "
                            "fix its row in prims/decompositions/extern_ops.py")
        metas.append(TensorMeta.contiguous(tuple(as_expr(s) for s in shape), o.dtype,
                                           _device(args, kwargs)))
    return tuple(metas) if isinstance(real, tuple) else metas[0]


def _device(args, kwargs):
    found = []
    _map((args, kwargs), lambda v: found.append(v.device) if isinstance(v, TensorMeta) else v)
    return found[0] if found else torch.device("cpu")


def _ref(name, args, kwargs, shapes=None):
    """The op on real tensors; with `shapes` (the meta's, symbols substituted) a result of
    another shape raises, so a wrong shape rule never reaches the kernels reading it."""
    out = extern_op(name).fn(*args, **dict(kwargs))
    outs = out if isinstance(out, tuple) else (out,)
    if shapes is not None:
        for k, (o, shape) in enumerate(zip(outs, shapes, strict=True)):
            if tuple(o.shape) != tuple(int(s) for s in shape):
                raise PrimError(f"torch_extern: expected result {k} of {name} to have the "
                                f"shape {tuple(int(s) for s in shape)} of its rule, found "
                                f"{tuple(o.shape)}; fix its row in "
                                "prims/decompositions/extern_shapes.py")
    outs = tuple(o.contiguous() for o in outs)
    return outs if isinstance(out, tuple) else outs[0]


# --------------------------------------------------------------------------- backward
def _backward_meta(name, args, kwargs, wrt, grads):
    if not wrt:
        raise PrimError(f"torch_extern_backward: {name} has no differentiable argument")
    for i in wrt:
        if not isinstance(args[i], TensorMeta) or not args[i].dtype.is_floating_point:
            raise PrimError(f"torch_extern_backward: expected a floating tensor at argument "
                            f"{i} of {name}, found {args[i]!r}")
    return tuple(TensorMeta.contiguous(args[i].shape, args[i].dtype, args[i].device)
                 for i in wrt)


def _backward_ref(name, args, kwargs, wrt, grads):
    with torch.enable_grad():
        args = list(args)
        leaves = []
        for i in wrt:
            args[i] = args[i].detach().requires_grad_(True)
            leaves.append(args[i])
        out = extern_op(name).fn(*args, **dict(kwargs))
        outs = out if isinstance(out, tuple) else (out,)
        pairs = [(o, g) for o, g in zip(outs, grads) if g is not None and o.requires_grad]
        if not pairs:
            return tuple(torch.zeros_like(x) for x in leaves)
        found = torch.autograd.grad([o for o, _ in pairs], leaves, [g for _, g in pairs],
                                    allow_unused=True)
    return tuple((torch.zeros_like(x) if g is None else g).contiguous()
                 for g, x in zip(found, leaves))


register_prim("torch_extern", PrimKind.EXTERN, _meta, _ref,
              doc="a torch op called at run time (a row of prims/decompositions/extern_ops.py)")
register_prim("torch_extern_backward", PrimKind.EXTERN, _backward_meta, _backward_ref,
              doc="gradients of a torch_extern's arguments `wrt` (torch autograd on a rerun)")
