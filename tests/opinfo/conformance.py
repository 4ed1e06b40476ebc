"""torch's OpInfo database as an independent oracle for symc's coverage of the torch API.

Every OpInfo entry with float32 CPU samples (all of `op_db`, not only the ops symc decomposes)
runs its first `MAX_SAMPLES` samples through a compiled backend; it must compile with no graph
break (and, on inductor, without falling back to the prims' reference), and its outputs and its
input gradients for seeded cotangents must match eager PyTorch:

    entry = opinfo_entries()["nn.functional.gelu"]
    check(entry, "inductor")    # Result(forward=None, backward=None): None means it matched

A phase's text starts with its status: "skipped: ", "graph break: ", "fallback: " (inductor ran
the reference), anything else is a mismatch or an error (see `status`).

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
from prims.decompositions import has_decomposition
from symc.backends import lazy_compiles
from symc.compile import compiled_functions

MAX_SAMPLES = 3
RTOL, ATOL = 1e-4, 1e-4
BACKENDS = ("aot_eager", "inductor")
PHASES = ("forward", "backward")
# Entries whose outputs hold uninitialised memory or random draws (symc's philox stream is not
# torch's generator): only their shapes and dtypes are compared.
VALUES_UNDEFINED = frozenset({
    "empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided", "empty_permuted",
    "bernoulli", "cauchy", "exponential", "geometric", "log_normal", "normal", "normal.in_place",
    "normal.number_mean", "uniform", "multinomial", "rand_like", "randint", "randint_like",
    "randn", "randn_like", "nn.functional.dropout", "nn.functional.dropout2d",
    "nn.functional.dropout3d", "nn.functional.alpha_dropout",
    "nn.functional.feature_alpha_dropout.with_train", "nn.functional.rrelu",
    "nn.functional.multi_head_attention_forward",  # its samples pass dropout_p=0.5 positionally
})
STATUSES = ("pass", "skipped", "break", "fallback", "mismatch", "error")


def entry_name(opinfo) -> str:
    return opinfo.name + (f".{opinfo.variant_test_name}" if opinfo.variant_test_name else "")


@functools.cache
def opinfo_entries() -> dict:
    """name -> OpInfo, for every OpInfo of op_db with float32 CPU support."""
    from torch.testing._internal.common_methods_invocations import op_db

    return {entry_name(o): o for o in op_db if torch.float32 in o.supported_dtypes("cpu")}


def is_decomposed(opinfo) -> bool:
    """The entry's function is a key of prims' decomposition table (the old selection)."""
    return has_decomposition(opinfo.op)


def status(reason: str | None) -> str:
    """pass / skipped / break / fallback / mismatch / error, from a phase's text."""
    if reason is None:
        return "pass"
    for prefix, name in (("skipped", "skipped"), ("graph break: ", "break"),
                         ("fallback: ", "fallback")):
        if reason.startswith(prefix):
            return name
    return "error" if ": raised " in reason or ": backward raised " in reason else "mismatch"


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
    if isinstance(value, slice) or value is Ellipsis:
        return repr(value)  # written as in a program (capture reads slice literals)
    if isinstance(value, list | tuple) and any(isinstance(v, torch.Tensor | slice)
                                               or v is Ellipsis for v in value):
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
        if w.dtype.is_complex:
            same = torch.allclose(g, w, rtol=RTOL, atol=ATOL, equal_nan=True)
        elif w.dtype.is_floating_point:
            same = torch.allclose(g.double(), w.double(), rtol=RTOL, atol=ATOL, equal_nan=True)
        else:
            same = torch.equal(g, w)
        if not same:
            wide = torch.complex128 if w.dtype.is_complex else torch.float64
            err = (g.to(wide) - w.to(wide)).abs().nan_to_num(float("inf")).max().item()
            return f"tensor {k}: values differ (max abs error {err:.3g})"
    return None


def values_defined(opinfo, sample) -> bool:
    """Whether eager's values are the oracle for this sample: not for an entry of
    VALUES_UNDEFINED, nor for a sample that draws random numbers (a `dropout_p` > 0, as
    scaled_dot_product_attention's). Then the outputs and the input gradients (which depend on
    the draws: dropout's mask, normal's noise) are compared by shape and dtype only; symc's
    random distributions are tested in tests/symc/test_rng_state.py."""
    return entry_name(opinfo) not in VALUES_UNDEFINED and not sample.kwargs.get("dropout_p")


def check(opinfo, backend: str) -> Result:
    """Run the OpInfo's first float32 samples through `backend`, forward and backward."""
    compiled: dict[str, object] = {}
    forward = backward = None
    backward_checked = compared = False
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
            compared = True
            where = f"sample {k} ({_describe(tensors)})"
            if got is None:
                forward = forward or f"{where}: raised {type(error).__name__}: {str(error)[:300]}"
                continue
            defined = values_defined(opinfo, sample)
            d = _differ(got, want, values=defined)
            forward = forward or (f"{where}: {d}" if d else None)
            if want_grads is None:
                continue
            backward_checked = True
            if got_grads is None and error is None:
                backward = backward or f"{where}: outputs do not require grad (eager's do)"
            elif got_grads is None:
                backward = backward or (f"{where}: backward raised {type(error).__name__}: "
                                        f"{str(error)[:300]}")
            elif d := _differ(got_grads, want_grads, values=defined):
                backward = backward or f"{where}: gradient {d}"
    if not compared:
        return Result("skipped: eager rejects every sample", "skipped: eager rejects every sample")
    if not backward_checked and backward is None:
        backward = "skipped: no differentiable sample"
    if broke := _not_compiled(compiled.values()):
        forward = broke
        backward = backward if status(backward) == "skipped" else broke
    return Result(forward, backward)


def _not_compiled(functions) -> str | None:
    """"graph break: why" or "fallback: why" (inductor ran the prims' reference) or None."""
    for compiled in functions:
        for fn in compiled_functions(compiled):
            for b in fn.breaks:
                return f"graph break: {b.reason}"
            for why in fn.eager_calls:
                return f"graph break: ran eagerly: {why}"
    for compiled in functions:
        for fn in compiled_functions(compiled):
            for entry in fn.entries:
                for lazy in lazy_compiles(entry.run).values():
                    inner = getattr(lazy, "compiled", None)
                    inner = getattr(inner, "inner", inner)
                    if getattr(inner, "backend", None) == "reference" and hasattr(inner,
                                                                                 "reason"):
                        return f"fallback: {inner.reason}"
    return None


def _describe(tensors) -> str:
    return ", ".join(f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}" for t in tensors)
