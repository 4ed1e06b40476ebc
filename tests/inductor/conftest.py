"""A fixed share of the inductor tests runs with SYMC_DEBUG_BOUNDS=1.

Every generated kernel of such a test checks each load/store index against its buffer's extent
and raises KernelBoundsError instead of reading or writing out of bounds, so an index bug in
codegen fails the test even where the stray access happens to read harmless memory. Which tests
is decided by a hash of the test id (the same tests every run: a failure reproduces); the share
is 1/SYMC_TEST_DEBUG_BOUNDS_EVERY (default 3; 1 runs every test with the checks, 0 none). A test
that must see the default kernels is marked `@pytest.mark.no_debug_bounds`.
"""

import os
import zlib

import pytest


def pytest_configure(config):
    config.addinivalue_line("markers", "no_debug_bounds: never run with SYMC_DEBUG_BOUNDS=1")


def debug_bounds_share() -> int:
    return int(os.environ.get("SYMC_TEST_DEBUG_BOUNDS_EVERY", "3"))


@pytest.fixture(autouse=True)
def _debug_bounds_share(request, monkeypatch):
    every = debug_bounds_share()
    if every <= 0 or request.node.get_closest_marker("no_debug_bounds"):
        return
    if zlib.crc32(request.node.nodeid.encode()) % every == 0:
        monkeypatch.setenv("SYMC_DEBUG_BOUNDS", "1")


@pytest.fixture(autouse=True)
def _fresh_kernel_cache():
    """Each test compiles its own kernels: tests that count variants or compiles must not find
    an identical kernel another test already compiled (runtime/kernel_dedupe.py)."""
    from inductor.runtime import kernel_dedupe

    kernel_dedupe.reset()
    yield
