"""`symc explain SCRIPT` and SYMC_LOGS-style logging."""

from __future__ import annotations

import json
import logging
import textwrap

import torch

import symc
from symc.cli import main


def test_cli_explain_prints_every_compiled_function(tmp_path, capsys):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import torch, symc

        def f(x):
            if x.shape[0] > 4:
                return x * 2
            return x

        g = symc.compile(f, backend="eager")
        for n in (2, 8):
            g(torch.ones(n))
    """))
    assert main(["explain", str(script)]) == 0
    out = capsys.readouterr().out
    assert "2 compile(s), 1 recompile(s)" in out and "s0 <= 4" in out
    assert main(["explain", "--json", str(script)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data[0]["compiles"] == 2 and len(data[0]["recompile_reasons"]) == 1


def test_log_topics_emit_on_standard_logging(monkeypatch, caplog):
    monkeypatch.setattr(symc.config, "log_topics", {"graph", "recompiles", "guards"})

    def fn(x):
        return x * 2 if x.shape[0] > 3 else x

    f = symc.compile(fn, backend="eager")
    with caplog.at_level(logging.INFO, logger="symc"):
        f(torch.ones(2))
        f(torch.ones(5))
    names = {r.name for r in caplog.records}
    assert {"symc.graph", "symc.guards", "symc.recompiles"} <= names
    assert any("s0 <= 3" in r.getMessage() for r in caplog.records if r.name == "symc.recompiles")


def test_kernels_topic_logs_the_generated_code(monkeypatch, caplog):
    monkeypatch.setattr(symc.config, "log_topics", {"kernels"})
    f = symc.compile(lambda x: (x * 2).sum(1), backend="inductor")
    with caplog.at_level(logging.INFO, logger="symc"), torch.no_grad():
        f(torch.ones(3, 5))
    (record,) = [r for r in caplog.records if r.name == "symc.kernels"]
    assert "def call(" in record.getMessage() and "kernel(s)" in record.getMessage()


def test_size_branch_at_4_16_32_gives_two_entries_and_one_reason_naming_the_guard():
    def f(x):
        if x.shape[0] > 8:
            return x * 2
        return x + 1

    g = symc.compile(f, backend="eager")
    for n in (4, 16, 32):
        assert torch.equal(g(torch.ones(n)), f(torch.ones(n)))
    report = symc.explain(g)
    assert report.compiles == 2 and len(report.entries) == 2
    assert [e.hits for e in report.entries] == [1, 2]
    assert len(report.recompile_reasons) == 1
    reason = report.recompile_reasons[0]
    assert "1 <= s0 <= 8 failed: s0 = 16 (L['x'].size(0), test_explain_cli.py:" in reason, reason
    assert any("s0 <= 8" in line for line in report.entries[0].guards)
    assert any("s0 >= 9" in line for line in report.entries[1].guards)
    # z3: size 0 is admitted by neither entry; the two entries never overlap
    assert [u.split("<locals>.")[-1] for u in report.uncovered] == [
        "f: s0 == 0 (L['x'].size(0)) compiles a new entry"]
    assert report.overlaps == []
    assert "if not (1 <= s0 <= 8)" in report.entries[0].check_source
    text = str(report)
    assert "sizes no entry admits" in text and "recompile reasons:" in text


def test_entries_split_by_a_python_value_do_not_overlap():
    def f(x, flag):
        return x * 2 if flag else x + 1

    g = symc.compile(f, backend="eager")
    g(torch.ones(3), True)
    g(torch.ones(3), False)
    report = symc.explain(g)
    assert len(report.entries) == 2
    assert report.overlaps == []  # same sizes, but L['flag'] is True in one and False in the other


def test_cli_explain_code_prints_check_functions(tmp_path, capsys):
    script = tmp_path / "prog.py"
    script.write_text("import torch, symc\nsymc.compile(lambda x: x + 1, backend='eager')"
                      "(torch.ones(2))\n")
    assert main(["explain", "--code", str(script)]) == 0
    out = capsys.readouterr().out
    assert "def check_guards(L, G=None):" in out and "1 compile(s)" in out
