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
