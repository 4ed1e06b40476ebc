"""One run of a call with its gradients, and the comparison of a compiled run against eager.

    got = run_call(compiled, args, kwargs, params, seed=3)     # outputs, grads, or the error
    want = run_call(model, args, kwargs, params, seed=3)
    compare(got, want)  ->  Mismatch("output[0]", 0.73, "max abs error 0.73 > 0.0001 + ...")

Backward runs when an output requires grad: the loss is the sum of each differentiable output
times a random cotangent (seeded, so both runs use the same), and the gradients of the parameters
and of the inputs that require grad are compared too. Tolerances depend on the dtype.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

# dtype -> (atol, rtol); integer and bool results must be equal.
TOLERANCES = {
    torch.float64: (1e-7, 1e-6),
    torch.float32: (1e-4, 1e-3),
    torch.float16: (1e-2, 1e-2),
    torch.bfloat16: (5e-2, 2e-2),
}


@dataclass(frozen=True)
class Mismatch:
    """Where compiled and eager differ (`output[1]`, `grad of L['x']`) and by how much."""

    where: str
    max_error: float | None
    detail: str

    def __str__(self) -> str:
        return f"{self.where}: {self.detail}"


@dataclass
class RunResult:
    outputs: object = None
    grads: dict[str, torch.Tensor] = field(default_factory=dict)
    error: BaseException | None = None
    phase: str = ""              # where `error` was raised: "forward" or "backward"

    def error_text(self) -> str:
        first = str(self.error).strip().splitlines()[0] if str(self.error).strip() else ""
        return f"{type(self.error).__name__}: {first}"[:300]


def leaves(value, path: str = "output") -> list[tuple[str, object]]:
    """(path, leaf) pairs of nested tuples, lists and dicts; tensors and scalars are leaves."""
    if isinstance(value, tuple | list):
        return [leaf for i, v in enumerate(value) for leaf in leaves(v, f"{path}[{i}]")]
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in leaves(v, f"{path}[{k!r}]")]
    return [(path, value)]


def run_call(fn, args: tuple, kwargs: dict, params: dict, seed: int) -> RunResult:
    """Call `fn`, then backward through its differentiable outputs; errors are captured."""
    for p in params.values():
        p.grad = None
    try:
        outputs = fn(*args, **kwargs)
    except Exception as error:  # noqa: BLE001 - a failing run is a result to compare
        return RunResult(error=error, phase="forward")
    try:
        grads = _backward(outputs, (args, kwargs), params, seed)
    except Exception as error:  # noqa: BLE001
        return RunResult(outputs, error=error, phase="backward")
    return RunResult(outputs, grads)


def _backward(outputs, inputs, params: dict, seed: int) -> dict[str, torch.Tensor]:
    differentiable = [t for _, t in leaves(outputs)
                      if isinstance(t, torch.Tensor) and t.requires_grad]
    if not differentiable:
        return {}
    generator = torch.Generator().manual_seed(seed)
    total = sum((t * torch.randn(t.shape, generator=generator).to(t)).sum()
                for t in differentiable)
    total.backward()
    grads = {f"grad of {name}": p.grad.detach().clone()
             for name, p in params.items() if p.grad is not None}
    for path, t in leaves(inputs, "input"):
        if isinstance(t, torch.Tensor) and t.grad is not None:
            grads[f"grad of {path}"] = t.grad.detach().clone()
    return grads


def compare(got: RunResult, want: RunResult) -> Mismatch | None:
    """The worst difference between a compiled run and the eager run, or None when they agree.

    Both raising counts as agreement (eager rejects the sizes, and so does the compiled code).
    """
    if got.error is not None or want.error is not None:
        return _compare_errors(got, want)
    pairs_got = leaves(got.outputs) + sorted(got.grads.items())
    pairs_want = leaves(want.outputs) + sorted(want.grads.items())
    if [p for p, _ in pairs_got] != [p for p, _ in pairs_want]:
        return Mismatch("outputs", None, f"compiled gave {[p for p, _ in pairs_got]}, eager "
                                         f"{[p for p, _ in pairs_want]}")
    worst: Mismatch | None = None
    for (path, a), (_, b) in zip(pairs_got, pairs_want, strict=True):
        found = compare_leaf(path, a, b)
        if found is not None and (worst is None or _rank(found) > _rank(worst)):
            worst = found
    return worst


def _rank(m: Mismatch) -> float:
    return float("inf") if m.max_error is None else m.max_error


def _compare_errors(got: RunResult, want: RunResult) -> Mismatch | None:
    if got.error is not None and want.error is not None:
        if want.phase == "forward" and got.phase == "backward":
            return Mismatch("call", None, f"eager raised {want.error_text()}; the compiled "
                                          f"forward returned a result (it raised only in "
                                          f"backward: {got.error_text()})")
        return None
    if got.error is not None:
        return Mismatch("call", None, f"compiled raised {got.error_text()}; eager did not")
    return Mismatch("call", None, f"eager raised {want.error_text()}; compiled returned a "
                                  f"result (a wrong answer where eager rejects the input)")


def compare_leaf(path: str, a, b) -> Mismatch | None:
    if not isinstance(b, torch.Tensor):
        if isinstance(a, torch.Tensor) or a != b:
            return Mismatch(path, None, f"compiled gave {a!r}, eager {b!r}")
        return None
    if not isinstance(a, torch.Tensor):
        return Mismatch(path, None, f"compiled gave {type(a).__name__}, eager a tensor")
    if a.shape != b.shape or a.dtype != b.dtype:
        return Mismatch(path, None, f"compiled gave {_describe(a)}, eager {_describe(b)}")
    if a.numel() == 0:
        return None
    return _compare_values(path, a.detach(), b.detach())


def _compare_values(path: str, a: torch.Tensor, b: torch.Tensor) -> Mismatch | None:
    atol, rtol = TOLERANCES.get(b.dtype, (0.0, 0.0))
    x, y = a.cpu().to(torch.float64), b.cpu().to(torch.float64)
    same_nan = torch.isnan(x) == torch.isnan(y)
    same_inf = (x == y) | ~(torch.isinf(x) | torch.isinf(y))
    diff = (x - y).abs().nan_to_num(nan=0.0, posinf=0.0)
    bad = (diff > atol + rtol * y.abs().nan_to_num(nan=0.0, posinf=0.0)) | ~same_nan | ~same_inf
    if not bool(bad.any()):
        return None
    index = tuple(int(i) for i in bad.nonzero()[0])
    error = float("inf") if not bool(same_nan.all() & same_inf.all()) else float(diff.max())
    where = f" (first at index {list(index)}: compiled {a[index].item():.6g}, eager " \
            f"{b[index].item():.6g}; {int(bad.sum())} of {bad.numel()} elements)"
    return Mismatch(path, error, f"max abs error {error:.3g} > {atol:g} + {rtol:g} * |eager|"
                                 + where)


def _describe(t: torch.Tensor) -> str:
    return f"{str(t.dtype).removeprefix('torch.')}{list(t.shape)}"
