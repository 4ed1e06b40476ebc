"""torch's OpInfo database as an independent oracle for symc's decompositions.

Every OpInfo whose function symc decomposes (its `op` is a key of prims' decomposition registry)
runs its float32 CPU sample inputs (the first `MAX_SAMPLES`) through a compiled backend; its
outputs, and its input gradients for seeded cotangents, must match eager PyTorch:

    entry = opinfo_entries()["nn.functional.gelu"]
    check(entry, "inductor")    # Result(forward=None, backward=None): None means it matched

Each sample becomes a small function written as source (`def fn(t0, t1): return op(t0, t1,
alpha=c0)`): the sample's tensors are the arguments (sizes dynamic), everything else a global.
Samples with the same structure reuse one compiled function, so new sizes exercise its guards.
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass

import torch
import torch.utils._pytree as pytree

import symc
from prims.decompositions import DECOMPOSITIONS

MAX_SAMPLES = 3
RTOL, ATOL = 1e-4, 1e-4
BACKENDS = ("aot_eager", "inductor")
PHASES = ("forward", "backward")
# Entries whose outputs hold uninitialised memory: only their shapes and dtypes are compared.
VALUES_UNDEFINED = frozenset({"empty", "empty_like"})


def entry_name(opinfo) -> str:
    return opinfo.name + (f".{opinfo.variant_test_name}" if opinfo.variant_test_name else "")


@functools.cache
def opinfo_entries() -> dict:
    """name -> OpInfo, for the OpInfos whose function has a decomposition and float32 samples."""
    from torch.testing._internal.common_methods_invocations import op_db

    return {entry_name(o): o for o in op_db
            if o.op in DECOMPOSITIONS and torch.float32 in o.supported_dtypes("cpu")}


@dataclass(frozen=True)
class Result:
    """Per phase: None (matched eager), "skipped: why" (nothing to check), or what differed."""

    forward: str | None
    backward: str | None

    def phase(self, name: str) -> str | None:
        return self.forward if name == "forward" else self.backward


def _render(value, tensors: list, constants: dict) -> str:
    """Source text for a sample value; tensors become arguments, the rest globals."""
    if isinstance(value, torch.Tensor):
        tensors.append(value)
        return f"t{len(tensors) - 1}"
    if isinstance(value, list | tuple) and any(isinstance(v, torch.Tensor) for v in value):
        inner = ", ".join(_render(v, tensors, constants) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner},)"
    constants[f"c{len(constants)}"] = value
    return f"c{len(constants) - 1}"


def sample_function(op, sample):
    """(source, globals, tensors) of a function calling `op` on the sample's tensors."""
    tensors, constants = [], {}
    parts = [_render(sample.input, tensors, constants)]
    parts += [_render(a, tensors, constants) for a in sample.args]
    parts += [f"{k}={_render(v, tensors, constants)}" for k, v in sample.kwargs.items()]
    args = ", ".join(f"t{k}" for k in range(len(tensors)))
    source = f"def fn({args}):\n    return op({', '.join(parts)})\n"
    return source, {"op": op, **constants}, tensors


def _samples(opinfo):
    torch.manual_seed(0)
    out = []
    grad = opinfo.supports_autograd
    for sample in opinfo.sample_inputs("cpu", torch.float32, requires_grad=grad):
        out.append(sample)
        if len(out) == MAX_SAMPLES:
            break
    return out


def _fresh(tensors):
    """Detached copies, floating ones requiring grad (one leaf per argument)."""
    return [t.detach().clone().requires_grad_(t.is_floating_point() and t.requires_grad)
            for t in tensors]


def _run(fn, tensors, seed: int):
    """(flat outputs, input gradients or None, error)."""
    leaves = _fresh(tensors)
    try:
        out = fn(*leaves)
    except Exception as e:  # noqa: BLE001 - a compiled call must never raise where eager did not
        return None, None, e
    flat = [o for o in pytree.tree_leaves(out) if isinstance(o, torch.Tensor)]
    tracked = [o for o in flat if o.requires_grad and o.is_floating_point()]
    wrt = [t for t in leaves if t.requires_grad]
    grads = None
    if tracked and wrt:
        gen = torch.Generator().manual_seed(seed)
        loss = sum((o * torch.randn(o.shape, generator=gen)).sum() for o in tracked)
        try:
            grads = torch.autograd.grad(loss, wrt, allow_unused=True)
        except Exception as e:  # noqa: BLE001
            return [o.detach() for o in flat], None, e
        grads = [torch.zeros_like(t) if g is None else g for g, t in zip(grads, wrt, strict=True)]
    return [o.detach() for o in flat], grads, None


def _differ(got: list, want: list, values: bool = True) -> str | None:
    if len(got) != len(want):
        return f"expected {len(want)} tensors, found {len(got)}"
    for k, (g, w) in enumerate(zip(got, want, strict=True)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"tensor {k}: expected {w.dtype}{list(w.shape)}, found {g.dtype}{list(g.shape)}"
        if not values:
            continue
        if w.dtype.is_floating_point:
            same = torch.allclose(g.double(), w.double(), rtol=RTOL, atol=ATOL, equal_nan=True)
        else:
            same = torch.equal(g, w)
        if not same:
            err = (g.double() - w.double()).abs().nan_to_num(float("inf")).max().item()
            return f"tensor {k}: values differ (max abs error {err:.3g})"
    return None


def check(opinfo, backend: str) -> Result:
    """Run the OpInfo's first float32 samples through `backend`, forward and backward."""
    compiled: dict[str, object] = {}
    forward = backward = None
    backward_checked = False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k, sample in enumerate(_samples(opinfo)):
            source, namespace, tensors = sample_function(opinfo.op, sample)
            eager_ns = dict(namespace)
            exec(compile(source, f"<opinfo {entry_name(opinfo)}>", "exec"), eager_ns)  # noqa: S102
            want, want_grads, error = _run(eager_ns["fn"], tensors, k)
            if error is not None or want is None:
                continue  # eager rejects the sample: nothing to compare
            key = f"{source}{sorted((n, repr(v)) for n, v in namespace.items() if n != 'op')}"
            if key not in compiled:
                ns = dict(namespace)
                exec(compile(source, f"<opinfo {entry_name(opinfo)}>", "exec"), ns)  # noqa: S102
                compiled[key] = symc.compile(ns["fn"], backend=backend)
            got, got_grads, error = _run(compiled[key], tensors, k)
            where = f"sample {k} ({_describe(tensors)})"
            if got is None:
                forward = forward or f"{where}: raised {type(error).__name__}: {str(error)[:300]}"
                continue
            d = _differ(got, want, values=entry_name(opinfo) not in VALUES_UNDEFINED)
            forward = forward or (f"{where}: {d}" if d else None)
            if want_grads is None:
                continue
            backward_checked = True
            if got_grads is None:
                backward = backward or (f"{where}: backward raised {type(error).__name__}: "
                                        f"{str(error)[:300]}")
            elif d := _differ(got_grads, want_grads):
                backward = backward or f"{where}: gradient {d}"
    if not backward_checked and backward is None:
        backward = "skipped: no differentiable sample"
    return Result(forward, backward)


def _describe(tensors) -> str:
    return ", ".join(f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}" for t in tensors)
