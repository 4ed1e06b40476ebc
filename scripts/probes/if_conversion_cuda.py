"""Why an if-conversion is refused on a device: runs tests/capture/test_recompile_policy.py's
`_short_circuits` program with capture.if_conversion's debug log on and prints the refusals.

    SYMC_TEST_DEVICE=cuda python scripts/probes/if_conversion_cuda.py
"""
import logging
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import symc  # noqa: E402
from tests.capture.test_recompile_policy import _short_circuits  # noqa: E402

logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s")
logging.getLogger("capture.if_conversion").setLevel(logging.DEBUG)
device = os.environ.get("SYMC_TEST_DEVICE", "cpu")
compiled = symc.compile(_short_circuits, backend="aot_eager")
for b, t in ((3, 7), (3, 1), (1, 9), (6, 4), (2, 2), (4, 40)):
    compiled(torch.randn(b, t, device=device), None)
print(device, "compiles:", symc.explain(compiled).compiles)
