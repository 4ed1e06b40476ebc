"""The one place device-aware tests take their device from: `SYMC_TEST_DEVICE=cpu|cuda`.

    from tests.device import DEVICE, ON_GPU, use_triton   # DEVICE: "cpu" (CI) or "cuda"
    x = torch.randn(3, 5, device=DEVICE)

On the CPU (CI), Triton kernels run under the interpreter on CPU tensors: `interpret_triton()`
must run before triton is imported (test modules call it at import), and `use_triton(mp)` sends
CPU tensors to the Triton backend (`SYMC_CPU_BACKEND=triton`). With `SYMC_TEST_DEVICE=cuda`
(the GPU run, `make test-gpu`) the same tests make CUDA tensors and compile real Triton.
"""

from __future__ import annotations

import os

import torch

DEVICE = os.environ.get("SYMC_TEST_DEVICE", "cpu").strip().lower() or "cpu"
if DEVICE not in ("cpu", "cuda"):
    raise ValueError(f"SYMC_TEST_DEVICE: expected 'cpu' or 'cuda', found {DEVICE!r}")
ON_GPU = DEVICE == "cuda"


def interpret_triton() -> None:
    """On the CPU, run Triton kernels in its interpreter (call before triton is imported)."""
    if not ON_GPU:
        os.environ["TRITON_INTERPRET"] = "1"


def use_triton(monkeypatch) -> None:
    """Route this test's compiled graphs to Triton kernels: native on CUDA, interpreted on CPU."""
    if not ON_GPU:
        monkeypatch.setenv("SYMC_CPU_BACKEND", "triton")


def generator(seed: int) -> torch.Generator:
    """A seeded generator on DEVICE (random inputs made where the test runs)."""
    return torch.Generator(device=DEVICE).manual_seed(seed)


def require_gpu_available() -> None:
    """Fail loudly when the GPU run is asked for on a machine without CUDA (never skip it)."""
    if ON_GPU and not torch.cuda.is_available():
        raise RuntimeError("SYMC_TEST_DEVICE=cuda but torch.cuda.is_available() is False")
