"""Huge-page advice for large CPU buffers: the aligned range, the VMA flag, the wrapper's line."""

from __future__ import annotations

import sys

import pytest
import torch

from inductor.runtime import huge_pages
from inductor.runtime.huge_pages import PAGE, aligned_range

MiB = 1 << 20

ALIGNED_CASES = [  # (address, nbytes, expected (start, length) or None)
    (0, 2 * MiB, (0, 2 * MiB)),
    (16, 4 * MiB, (2 * MiB, 2 * MiB)),            # the first page starts 16 bytes in: skipped
    (2 * MiB - 1, 2 * MiB + 1, (2 * MiB, 2 * MiB)),  # ends exactly on a page boundary
    (1, 4 * MiB - 2, None),                       # one aligned page would stick out at the end
    (3 * MiB, 3 * MiB, (4 * MiB, 2 * MiB)),
    (64, 100, None),
]


@pytest.mark.parametrize("address, nbytes, expected", ALIGNED_CASES)
def test_aligned_range_holds_only_whole_huge_pages_inside_the_buffer(address, nbytes, expected):
    got = aligned_range(address, nbytes)
    assert got == expected, (address, nbytes, got, expected)
    if got is not None:
        start, length = got
        assert start % PAGE == 0 and length % PAGE == 0
        assert address <= start and start + length <= address + nbytes


def _vm_flags(address: int) -> list[str]:
    """The VmFlags of the mapping holding `address` (/proc/self/smaps)."""
    current = None
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                lo, hi = (int(x, 16) for x in head.split("-"))
                current = lo <= address < hi
            elif head == "VmFlags:" and current:
                return line.split()[1:]
    raise AssertionError(f"no mapping holds {address:#x}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="madvise and smaps are Linux's")
def test_advice_marks_the_buffers_mapping_for_huge_pages():
    assert huge_pages.is_available()
    t = torch.empty(40 * MiB // 4)  # above glibc's largest mmap threshold: a mapping of its own
    advised = huge_pages.huge_pages(t)
    assert advised >= 36 * MiB, advised
    start, _ = aligned_range(t.data_ptr(), t.numel() * 4)
    assert "hg" in _vm_flags(start)  # VM_HUGEPAGE: the next faults there take 2 MiB pages
    t.fill_(1.0)
    assert float(t.sum()) == t.numel()  # the memory holds what is written, as any other


def test_small_buffer_is_left_alone():
    assert huge_pages.huge_pages(torch.empty(1000)) == 0


def test_wrapper_advises_buffers_that_may_be_large_and_stays_right_at_every_size():
    import symc
    from symc.backends import lazy_compiles

    def f(x):
        return torch.softmax(x, -1) * 2

    g = symc.compile(f)
    for rows in (3, 1, 1367, 5):  # 1367 x 768 floats: 4.2 MiB, past the advice's threshold
        x = torch.randn(rows, 768)
        torch.testing.assert_close(g(x), f(x))
    assert g.compiles == 1
    source = lazy_compiles(g.entries[0].run)["inference"].compiled.wrapper_source
    assert "if s0*s1 >= 1048576: huge_pages(buf" in source, source


def test_statically_small_buffers_get_no_advice_line():
    import symc
    from symc.backends import lazy_compiles

    g = symc.compile(lambda x: torch.softmax(x, -1), dynamic=False)
    y = torch.randn(3, 5)
    torch.testing.assert_close(g(y), torch.softmax(y, -1))
    source = lazy_compiles(g.entries[0].run)["inference"].compiled.wrapper_source
    assert "empty(" in source and "huge_pages" not in source, source
