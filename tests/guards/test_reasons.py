"""RecompileReason: readable str and json."""

import pytest

from guards import RecompileReason

CASES = [
    (
        RecompileReason(0, "s0 <= 1024", (("s0", 1500, "L['idx'].size(1)"),), "model.py:57"),
        "entry 0: s0 <= 1024 failed: s0 = 1500 (L['idx'].size(1), model.py:57)",
    ),
    (
        RecompileReason(
            1, "s1 == s0", (("s0", 3, "L['a'].size(0)"), ("s1", 4, "L['b'].size(0)")), "m.py:3"
        ),
        "entry 1: s1 == s0 failed: s0 = 3 (L['a'].size(0)), s1 = 4 (L['b'].size(0)) at m.py:3",
    ),
    (
        RecompileReason(2, "L['n'] == 3", (("L['n']", 4, "L['n']"),)),
        "entry 2: L['n'] == 3 failed: L['n'] = 4",
    ),
]


@pytest.mark.parametrize("reason, text", CASES, ids=lambda x: str(x)[:20])
def test_reason_str(reason, text):
    assert str(reason) == text


def test_reason_json():
    reason = CASES[0][0]
    assert reason.to_json() == {
        "entry_index": 0,
        "guard": "s0 <= 1024",
        "where": "model.py:57",
        "values": [{"name": "s0", "value": 1500, "source": "L['idx'].size(1)"}],
    }
