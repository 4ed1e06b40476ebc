"""The error flags of Triton kernels: one zeroed int32 per kernel and device, read now or later.

A kernel with a data-dependent index (an embedding id, a cross-entropy target) or an integer
division stores an error code into its flag instead of trapping (kernel_errors.py). Reading the
flag right after the launch (`.item()`) blocks the host until the GPU has caught up, so the
host can never queue a step ahead. On CUDA, a kernel whose every error shows in its outputs
(`meta["error_deferrable"]`: the only errors are indices out of range, and every read through
such an index is floating, NaN in the failing lanes) has its flag read later instead, without
a sync, the way eager reports a device-side assert at the next synchronization:

    after each launch:   host.copy_(flag, non_blocking=True)       pinned memory, no sync
    check_pending():     at the start of every compiled graph call (the backward, the next
                         step): raises if a copy that has landed holds a code
    check_errors():      synchronizes, then raises for any code (`symc.check_errors()`)
    at exit:             one still pending is printed to stderr

Until it is raised, the failing lanes' outputs hold NaN (the loss is NaN, never a plausible
wrong value), and nothing outside a buffer is read or written: the accesses stay masked.
On the CPU (the Triton interpreter) and for a kernel that cannot poison its outputs (a division
by zero, a store or an integer read through a bad index, SYMC_DEBUG_BOUNDS), the flag is read
right after the launch, as before.
"""

from __future__ import annotations

import atexit
import ctypes
import sys

import torch

from inductor.runtime.kernel_errors import raise_for

DEFERRED_DEVICE_TYPES = {"cuda"}  # devices whose deferrable flags are read later (tests add cpu)
_PENDING: list = []  # the deferred flags, for the checks (kept: an error outlives its kernel)
# their pinned host words, as ctypes ints (a read costs no torch call); never rebound: the
# generated wrappers test this list itself before calling `check_pending` (no call per graph
# call while no kernel defers its flag, as on the CPU)
DEFERRED_CELLS: list = []
_CELLS = DEFERRED_CELLS


class Flag:
    """One kernel's flag on one device; `after()` runs after every launch of the kernel."""

    __slots__ = ("name", "device", "tensor", "host", "cell", "after")

    def __init__(self, name: str, device: torch.device, deferrable: bool):
        self.name = name
        self.device = device
        self.tensor = torch.zeros(1, dtype=torch.int32, device=device)
        self.host = self.cell = None
        self.after = self.check_now
        if deferrable and device.type in DEFERRED_DEVICE_TYPES:
            self.host = torch.zeros(1, dtype=torch.int32, device="cpu",  # not the default device
                                    pin_memory=device.type == "cuda")
            self.cell = ctypes.c_int32.from_address(self.host.data_ptr())
            self.after = self.copy_back
            if not _PENDING:
                atexit.register(report_at_exit)
            _PENDING.append(self)
            _CELLS.append(self.cell)

    def copy_back(self) -> None:
        """Queue the flag's copy to the host word (stream-ordered after the launch)."""
        self.host.copy_(self.tensor, non_blocking=True)

    def check_now(self) -> None:
        """Read the flag now (a device sync on CUDA) and raise for a code."""
        code = int(self.tensor.item())
        if code:
            self.tensor.zero_()
            raise_for(code, self.name)

    def take(self) -> int:
        """The flag's code after a synchronization, both copies zeroed."""
        code = int(self.tensor.item())
        self.tensor.zero_()
        self.host.zero_()
        return code


def flag_for(flags: dict, name: str, device: torch.device, deferrable: bool) -> Flag:
    """`flags[device]`, made the first time a kernel runs on `device`."""
    flag = flags.get(device)
    if flag is None:
        flag = flags[device] = Flag(name, device, deferrable)
    return flag


def check_pending() -> None:
    """Raise for a deferred flag whose copy has landed with a code (no sync: a copy still in
    flight is seen by a later check). Runs at the start of every compiled graph call."""
    for cell in _CELLS:
        if cell.value:
            _raise_pending()


def check_errors() -> None:
    """Wait for every device with deferred flags, then raise for any code: what a sync
    (`loss.item()`) would report in eager, at a point of the caller's choosing."""
    if _PENDING:
        _raise_pending()


def _raise_pending() -> None:
    """Synchronize, then raise for the first flag holding a code (naming the others), every
    flag zeroed: an error is raised once."""
    for device in {f.device for f in _PENDING if f.device.type == "cuda"}:
        torch.cuda.synchronize(device)
    # after the sync every launch's copy has landed: the host words are the flags
    failed = [(f, code) for f in _PENDING if f.cell.value for code in [f.take()] if code]
    if not failed:
        return
    (first, code), rest = failed[0], failed[1:]
    also = "".join(f"; also {f.name} (error code {c})" for f, c in rest)
    try:
        raise_for(code, first.name)
    except Exception as e:  # the same error, told where it came from
        e.args = (f"{e.args[0] if e.args else e} [reported after the launch: its flag is read "
                  f"without a sync; the kernel's outputs held NaN in the failing lanes{also}]",
                  *e.args[1:])
        raise


def report_at_exit() -> None:
    """At interpreter exit, a kernel error no check raised is printed (a program that ends
    right after the failing step must not end silently)."""
    try:
        check_errors()
    except Exception as e:  # noqa: BLE001 - exiting: printed, not raised
        print(f"symc: a kernel error was never raised (call symc.check_errors() after the "
              f"last step): {type(e).__name__}: {e}", file=sys.stderr)
