"""What symc found on this machine: torch, triton, z3, GPU, C++ compiler."""

from __future__ import annotations

import platform
import shutil
import subprocess
import sys


def _version(module: str) -> str:
    try:
        mod = __import__(module)
    except Exception as exc:  # noqa: BLE001 - report any import failure as text
        return f"not available ({type(exc).__name__})"
    if module == "z3":
        return mod.get_version_string()
    return getattr(mod, "__version__", "unknown")


def describe() -> dict[str, str]:
    """A dict of what matters for symc on this machine, each value readable text."""
    import torch

    cxx = shutil.which("g++") or shutil.which("c++") or shutil.which("clang++")
    cxx_version = "not found"
    if cxx:
        out = subprocess.run([cxx, "--version"], capture_output=True, text=True, check=False)
        cxx_version = out.stdout.splitlines()[0] if out.stdout else cxx
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else "none"
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "torch": torch.__version__,
        "triton": _version("triton"),
        "z3": _version("z3"),
        "sympy": _version("sympy"),
        "gpu": gpu,
        "c++ compiler": cxx_version,
    }
