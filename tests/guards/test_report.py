"""describe_guards: kept and removed guards, readable and as json."""

import json

import sympy
from conftest import build_entry

from guards import ValueGuard, describe_guards
from symbolic import AttrSource, LocalSource


def test_report_text_and_json():
    guard_set, _ = build_entry(
        (16, 32),
        lambda a, b: [a <= 1024, a <= 2048, a >= 2, sympy.Eq(b, 2 * a)],
        where="model.py:40",
    )
    guard_set.add(ValueGuard(AttrSource(LocalSource("self"), "training"), True))
    report = describe_guards(guard_set)
    assert str(report).splitlines() == [
        "L['x'].dtype == torch.float32, device.type == 'cpu', dim() == 2, requires_grad == False",
        "L['self'].training == True",
        "2 <= s0 <= 1024                      L['x'].size(0), model.py:40",
        "s1 >= 1                              L['x'].size(1)",
        "s1 == 2*s0                           model.py:40",
        "removed (implied by the others):",
        "  s0 <= 2048                           implied by s0 <= 1024",
    ]
    data = report.to_json()
    json.dumps(data)
    assert [g["kind"] for g in data["guards"]] == ["tensor", "value", "shape", "shape", "shape"]
    assert data["removed"] == [
        {"text": "s0 <= 2048", "implied_by": ["s0 <= 1024"], "where": "model.py:40"}
    ]


def test_report_without_shape_env():
    from guards import GuardSet, LengthGuard

    report = describe_guards(GuardSet([LengthGuard(LocalSource("t"), 2)]))
    assert str(report) == "len(L['t']) == 2"
    assert report.to_json() == {
        "guards": [{"text": "len(L['t']) == 2", "kind": "length", "where": None, "source": None}],
        "removed": [],
    }
