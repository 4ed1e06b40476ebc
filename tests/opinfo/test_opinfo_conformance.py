"""torch's OpInfo samples through aot_eager and inductor match eager, forward and backward, for
every OpInfo whose function symc decomposes (tests/opinfo/conformance.py).

Entries that still fail are rows of known_failures.KNOWN_FAILURES and run as strict xfails: a
fix makes the test fail until its row is removed. `python -m tests.opinfo.report` regenerates
bench/results/opinfo_conformance.json and the README table.
"""

from __future__ import annotations

import functools

import pytest

from tests.opinfo.conformance import BACKENDS, PHASES, check, opinfo_entries
from tests.opinfo.known_failures import KNOWN_FAILURES

NAMES = sorted(opinfo_entries())


@functools.cache
def _result(name: str, backend: str):
    return check(opinfo_entries()[name], backend)


def test_known_failures_name_real_entries():
    stale = [key for key in KNOWN_FAILURES
             if key[0] not in NAMES or key[1] not in BACKENDS or key[2] not in PHASES]
    assert not stale, f"rows of KNOWN_FAILURES that name no checked entry: {stale}"


def test_every_decomposed_opinfo_is_checked():
    assert len(NAMES) >= 150, f"expected 150+ OpInfo entries to check, found {len(NAMES)}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("phase", PHASES)
@pytest.mark.parametrize("name", NAMES)
def test_opinfo_matches_eager(name, phase, backend, request):
    reason = KNOWN_FAILURES.get((name, backend, phase))
    if reason:
        request.applymarker(pytest.mark.xfail(strict=True, reason=reason))
    found = _result(name, backend).phase(phase)
    if found is not None and found.startswith("skipped"):
        assert phase == "backward", found
        pytest.skip(found)  # nothing differentiable in the samples (argmax, comparisons, ...)
    assert found is None, f"{name} through {backend}, {phase}: {found}"
