"""Large CPU buffers on transparent huge pages: `madvise(MADV_HUGEPAGE)` before the first write.

    buf = empty((s0, s1), (s1, 1), dtype=torch.float32, device=dev0)
    if s0 * s1 >= 1048576: huge_pages(buf)     # the wrapper's line for a buffer of 4 MiB or more

A buffer of more than 32 MiB is always a fresh `mmap` (glibc's largest mmap threshold), and
smaller large ones often are: the kernel's first write to each 4 KiB page then faults, and for a
[16384, 768] float32 output the 12,288 faults cost more than the softmax itself (the C++ softmax
kernel with its output allocated each call: 100 ms, 48 ms with the advice, one thread, 2-core
dev machine). With the advice (Linux's THP in "madvise" mode) the whole 2 MiB pages inside the buffer fault once
each. Only the 2 MiB-aligned interior is advised: the bytes around it belong to other
allocations. Off with SYMC_HUGE_PAGES=0, and where there is no Linux `madvise`.
"""

from __future__ import annotations

import ctypes
import os
import sys

import sympy
import torch

MIN_BYTES = 4 << 20   # two huge pages: a smaller buffer may hold no aligned one
PAGE = 2 << 20
MADV_HUGEPAGE = 14    # Linux, every architecture
ENABLED = os.environ.get("SYMC_HUGE_PAGES", "1") != "0" and sys.platform.startswith("linux")


def _madvise():
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.madvise
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


_MADVISE = _madvise() if ENABLED else None


def aligned_range(address: int, nbytes: int) -> tuple[int, int] | None:
    """(start, length) of the whole huge pages inside [address, address + nbytes), or None."""
    start = (address + PAGE - 1) & ~(PAGE - 1)
    end = (address + nbytes) & ~(PAGE - 1)
    return (start, end - start) if end > start else None


def huge_pages(tensor: torch.Tensor) -> int:
    """Advise the huge pages inside `tensor`'s memory (a CPU buffer the wrapper just allocated);
    the bytes advised. Advice only: a kernel without THP support, or a failing call (0), changes
    nothing but speed."""
    if _MADVISE is None:
        return 0
    span = aligned_range(tensor.data_ptr(), tensor.numel() * tensor.element_size())
    if span is None or _MADVISE(span[0], span[1], MADV_HUGEPAGE) != 0:
        return 0
    return span[1]


def is_available() -> bool:
    return _MADVISE is not None


def advice_line(name: str, layout, dtype, an, size_text) -> str | None:
    """The wrapper's line advising buffer `name` (its `layout`, `dtype`) right after its
    allocation: None for a buffer off the CPU or one the Analyzer `an` proves smaller than
    MIN_BYTES; unconditional when it proves it larger; else behind a size test per call
    (`size_text` prints the element count as Python)."""
    if str(layout.device) != "cpu" or not is_available():
        return None
    numel = sympy.sympify(layout.numel())
    least = -(-MIN_BYTES // dtype.itemsize)  # elements in MIN_BYTES
    big = an.prove(sympy.Ge(numel, least))
    if big is False:
        return None
    if big is True:
        return f"huge_pages({name})"
    return f"if {size_text(numel)} >= {least}: huge_pages({name})"
