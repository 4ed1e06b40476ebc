"""Calling compiled C++ kernels from the wrapper: one vectorcall into a small C extension.

    call = kernel_caller(lib, "k0_pw_node1", nargs=4, flag=flag, on_error=raise_it)
    call(x.data_ptr(), out.data_ptr(), s0, s1)

The extension (cpp_call.c) converts the int arguments and calls the kernel's packed entry
(`<kernel>_packed(const int64_t*)`, written beside every kernel by inductor/codegen/cpp.py),
then reads the library's error flag where the kernel may set it. ctypes' call through argtypes
costs about 1.3 us for 8 arguments (a 64-row layer norm takes ~20 us): this one about 0.1.
Where the extension cannot be built (no compiler or Python headers) or SYMC_CPP_FASTCALL=0,
kernels keep ctypes (`FALLBACK` holds why) and run the same.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from inductor.codegen.cpp import PACKED_SUFFIX

ENABLED = os.environ.get("SYMC_CPP_FASTCALL", "1") != "0"
SOURCE = Path(__file__).with_name("cpp_call.c")
MODULE = "symc_cppcall"
_STATE: dict = {}  # "module": the extension or None; "reason": why there is none


def module():
    """The extension, built and loaded once; None (the reason in `fallback_reason()`)."""
    from inductor.runtime.c_launch import build_extension, load_extension, once

    return once(_STATE, ENABLED, "SYMC_CPP_FASTCALL", "C++ call extension",
                lambda: load_extension(build_extension(SOURCE, MODULE, "cppcall"), MODULE),
                (OSError, ImportError))


def fallback_reason() -> str | None:
    return _STATE.get("reason")


def kernel_caller(lib: ctypes.CDLL, name: str, nargs: int, flag: ctypes.c_int64 | None,
                  on_error):
    """A callable running kernel `name` on `nargs` ints; where `flag` is given, a nonzero flag
    after the call is reset and `on_error(code)` runs. None when the extension is missing."""
    mod = module()
    if mod is None:
        return None
    entry = ctypes.cast(getattr(lib, name + PACKED_SUFFIX), ctypes.c_void_p).value
    flag_address = ctypes.addressof(flag) if flag is not None else 0
    return mod.Kernel(entry, nargs, flag_address, on_error)
