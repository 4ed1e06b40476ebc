"""Errors a generated kernel reports through a flag instead of trapping, and their Python form.

A kernel never reads or writes out of bounds and never divides an integer by zero: where eager
would raise (an index out of range, an integer `//` or `%` by zero), or where a debug bounds
check (`SYMC_DEBUG_BOUNDS=1`) finds an index past its buffer, the kernel writes a code into an
error flag, uses a harmless value (index 0 with the access masked, quotient 0) and goes on. The
caller reads the flag after the kernel and raises what eager raises:

    C++:    the library global `symc_error` (cpp_prelude.h), read with ctypes after the call;
    Triton: a one-element int32 buffer `symc_err_ptr` the kernel stores the code into.

    raise_for(ERROR_INDEX, "k0_pw_node1")  ->  IndexError("index out of range ...")
"""

from __future__ import annotations

import os

from symbolic import SymcError

ERROR_INDEX = 1  # a data-dependent index (gather, index_select, embedding) out of range
ERROR_ZERO_DIVISION = 2  # integer floor division or modulo by zero
ERROR_BOUNDS = 3  # SYMC_DEBUG_BOUNDS: a load/store index outside its buffer (a compiler bug)

DEBUG_BOUNDS_ENV = "SYMC_DEBUG_BOUNDS"


class KernelBoundsError(SymcError):
    """A generated kernel computed an index outside a buffer (found by SYMC_DEBUG_BOUNDS=1)."""


def debug_bounds() -> bool:
    """True when SYMC_DEBUG_BOUNDS=1: kernels check every load/store index (read at compile
    time; the generated source differs, so the kernel caches keep the two apart)."""
    return os.environ.get(DEBUG_BOUNDS_ENV, "") not in ("", "0")


def raise_for(code: int, kernel: str) -> None:
    """Raise the Python error for a kernel's nonzero error flag `code`."""
    if code == ERROR_INDEX:
        raise IndexError(f"index out of range in a gather (generated kernel {kernel}): an index "
                         f"below -size or at/after the size of the indexed dim, an embedding "
                         f"id past the table, or any index into an empty dim")
    if code == ERROR_ZERO_DIVISION:
        raise RuntimeError("ZeroDivisionError")  # eager's message for integer // and % by 0
    if code == ERROR_BOUNDS:
        raise KernelBoundsError(f"expected every load/store index of generated kernel {kernel} "
                                f"inside its buffer, found one outside (SYMC_DEBUG_BOUNDS=1; "
                                f"run with SYMC_LOGS=kernels to see the source)")
    raise KernelBoundsError(f"generated kernel {kernel}: unknown error flag {code}")
