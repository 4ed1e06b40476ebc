"""Suite-wide fixtures: the test device (tests/device.py, `SYMC_TEST_DEVICE=cpu|cuda`)."""

from __future__ import annotations

import pytest
import torch

from tests.device import DEVICE, require_gpu_available


def pytest_configure(config):
    require_gpu_available()


def pytest_report_header(config):
    return f"symc test device: {DEVICE} (SYMC_TEST_DEVICE)"


@pytest.fixture
def device() -> str:
    """The device tensors of device-aware tests live on: "cpu" in CI, "cuda" in the GPU run."""
    return DEVICE


@pytest.fixture
def default_device():
    """Factory calls without a device make tensors on the test device for this test."""
    previous = torch.get_default_device()
    torch.set_default_device(DEVICE)
    try:
        yield DEVICE
    finally:
        torch.set_default_device(previous)
