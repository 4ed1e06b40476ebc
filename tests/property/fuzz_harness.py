"""Run a generated `Program` on eager PyTorch and on symc's backends; report the first difference.

For each call (size assignment) the harness builds the inputs from a seed (float data with the
input's layout: permuted strides, a storage offset or a step; int64 indices), runs the program,
and records its outputs, every input's whole storage afterwards (mutations, also through views)
and, when the program runs with grad, the gradients of the storages for seeded cotangents.
Backends run in pipeline order (eager capture, prims, aot_eager, inductor), so the first one
that differs from eager names the stage that broke:

    mismatch = first_mismatch(program)     # None, or a message with the program's source
"""

from __future__ import annotations

import os
import warnings
import zlib
from dataclasses import dataclass

import torch
import torch.nn.functional as F

import symc
from tests.property.fuzz_programs import InputSpec, Program, _concrete

BACKENDS = ("eager", "prims", "aot_eager", "inductor")
RTOL, ATOL = 1e-4, 1e-4


def backends() -> tuple[str, ...]:
    chosen = os.environ.get("SYMC_FUZZ_BACKENDS")
    return tuple(chosen.split(",")) if chosen else BACKENDS


def make_function(program: Program):
    """A fresh function object from the program's source (one per backend: no shared cache)."""
    namespace = {"torch": torch, "F": F}
    exec(compile(program.source, "<fuzz program>", "exec"), namespace)  # noqa: S102
    return namespace["program"]


def _layout_view(storage_shape, spec: InputSpec, shape):
    """(shape of the storage to allocate, function from storage to the argument view)."""
    rank = len(shape)
    layout = spec.layout if rank else "contiguous"
    if layout == "permuted" and rank >= 2:
        perm = tuple(reversed(range(rank)))
        return tuple(shape[p] for p in perm), lambda t: t.permute(perm)
    if layout == "offset":
        return (shape[0] + 1, *shape[1:]), lambda t: t[1:]
    if layout in ("stepped", "permuted"):
        return (*shape[:-1], 2 * shape[-1]), lambda t: t[..., ::2]
    return tuple(shape), lambda t: t


@dataclass
class Inputs:
    args: list
    storages: list  # the tensor each argument is a view of (mutations land here)
    leaves: list  # grad leaves (one per float input) when the program runs with grad


def make_inputs(program: Program, call: int) -> Inputs:
    gen = torch.Generator().manual_seed(zlib.crc32(program.source.encode()) + call)
    assignment = program.assignments[call]
    args, storages, leaves = [], [], []
    for spec in program.inputs:
        shape = _concrete(spec.dims, assignment)
        if spec.is_index:
            high = _concrete((spec.high,), assignment)[0]
            idx = torch.randint(0, high, shape, generator=gen)
            if spec.padding is not None:
                idx.view(-1)[::2] = spec.padding % high
            args.append(idx)
            storages.append(idx)
            continue
        storage_shape, view = _layout_view(None, spec, shape)
        storage = torch.randn(storage_shape, generator=gen)
        if program.grad:
            leaf = storage.requires_grad_(True)
            leaves.append(leaf)
            storage = leaf.clone()
        storages.append(storage)
        args.append(view(storage))
    return Inputs(args, storages, leaves)


@dataclass
class Outcome:
    outputs: list
    storages: list
    grads: list | None  # None: no backward (no grad, or the backward raised)
    error: BaseException | None = None
    backward_error: BaseException | None = None  # e.g. a saved tensor modified in place


def run_call(fn, program: Program, call: int) -> Outcome:
    inputs = make_inputs(program, call)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            outs = fn(*inputs.args)
        except Exception as e:  # noqa: BLE001 - eager errors reject the program; symc's are bugs
            return Outcome([], [], None, e)
        outputs = [o.detach().clone() for o in outs]
        storages = [s.detach().clone() for s in inputs.storages]
        grads = None
        tracked = [o for o in outs if o.requires_grad]
        if program.grad and tracked:
            gen = torch.Generator().manual_seed(call + 17)
            loss = sum((o * torch.randn(o.shape, generator=gen)).sum() for o in tracked)
            try:
                grads = torch.autograd.grad(loss, inputs.leaves, allow_unused=True)
            except Exception as e:  # noqa: BLE001 - compared below: raising is right iff eager did
                return Outcome(outputs, storages, None, backward_error=e)
            grads = [g if g is not None else torch.zeros_like(x)
                     for g, x in zip(grads, inputs.leaves, strict=True)]
    return Outcome(outputs, storages, grads)


def _difference(what: str, got, expected) -> str | None:
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return f"{what}: expected {expected.dtype}{list(expected.shape)}, " \
               f"found {got.dtype}{list(got.shape)}"
    if not torch.allclose(got.double(), expected.double(), rtol=RTOL, atol=ATOL, equal_nan=True):
        bad = ~torch.isclose(got.double(), expected.double(), rtol=RTOL, atol=ATOL,
                             equal_nan=True)
        return (f"{what}: {int(bad.sum())} of {bad.numel()} values differ, e.g. expected "
                f"{expected[bad].flatten()[:4].tolist()}, found {got[bad].flatten()[:4].tolist()}")
    return None


def compare(program: Program, got: Outcome, expected: Outcome) -> str | None:
    if got.error is not None:
        return f"raised {type(got.error).__name__}: {str(got.error)[:600]}"
    if len(got.outputs) != len(expected.outputs):
        return f"expected {len(expected.outputs)} outputs, found {len(got.outputs)}"
    pairs = [(f"output {k} ({program.outputs[k]})", g, e)
             for k, (g, e) in enumerate(zip(got.outputs, expected.outputs, strict=True))]
    pairs += [(f"input {spec.name} after the call", g, e) for spec, g, e in
              zip(program.inputs, got.storages, expected.storages, strict=True)]
    if got.backward_error is not None and expected.backward_error is None:
        e = got.backward_error
        return f"backward raised {type(e).__name__}: {str(e)[:600]}"
    if expected.grads is not None:
        if got.grads is None:
            return "no gradients (eager has them)"
        floats = [s for s in program.inputs if not s.is_index]
        pairs += [(f"gradient of {spec.name}", g, e)
                  for spec, g, e in zip(floats, got.grads, expected.grads, strict=True)]
    for what, g, e in pairs:
        diff = _difference(what, g, e)
        if diff:
            return diff
    return None


def eager_outcomes(program: Program) -> list[Outcome] | None:
    """Eager PyTorch's outcome per call, or None when eager itself rejects the program."""
    fn = make_function(program)
    outcomes = [run_call(fn, program, k) for k in range(len(program.assignments))]
    return None if any(o.error is not None for o in outcomes) else outcomes


def first_mismatch(program: Program, expected: list[Outcome]) -> str | None:
    """The first backend (pipeline order) and call that differ from eager, as a report."""
    for backend in backends():
        if log := os.environ.get("SYMC_FUZZ_LAST"):  # survives a crash of the whole process
            with open(log, "w") as f:
                f.write(f"# backend {backend}\n{program.describe()}")
        compiled = symc.compile(make_function(program), backend=backend)
        for call, want in enumerate(expected):
            diff = compare(program, run_call(compiled, program, call), want)
            if diff:
                earlier = backends()[: backends().index(backend)]
                return (f"backend {backend!r} differs from eager at call {call} "
                        f"(sizes {program.assignments[call]}); earlier backends agree: "
                        f"{list(earlier)}\n  {diff}\n\n{program.describe()}")
    return None
