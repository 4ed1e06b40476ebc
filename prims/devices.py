"""The default device: where factory calls without `device=` put their tensors, as in eager.

`torch.zeros(n)` inside a compiled function follows `torch.set_default_device(...)`; the device
is read at capture time, so capture records each read (`recording_default_device`) and guards the
entry on it (an entry captured under "cuda" is not reused under "cpu").

    with recording_default_device() as reads:
        meta = output_meta(torch.zeros, ...)     # reads == [device(type='cuda', index=0)]
"""

from __future__ import annotations

import contextlib
import contextvars

import torch

_READS: contextvars.ContextVar = contextvars.ContextVar("symc_default_device_reads",
                                                        default=None)


def default_device() -> torch.device:
    """`torch.get_default_device()`, recorded for the capture that asked (if any)."""
    device = torch.get_default_device()
    reads = _READS.get()
    if reads is not None:
        reads.append(device)
    return device


@contextlib.contextmanager
def recording_default_device():
    """Collect the default-device reads of the decompositions run inside the block."""
    reads: list = []
    token = _READS.set(reads)
    try:
        yield reads
    finally:
        _READS.reset(token)
