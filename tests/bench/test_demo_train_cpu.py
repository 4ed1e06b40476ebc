"""bench/demo_train_cpu.py and bench/cpu_step_profile.py: the interleaved CPU training benchmark
and the step profile's wrapper-line kinds."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from bench import demo_train_cpu
from bench.cpu_step_profile import line_kind


@pytest.mark.parametrize("line, kind", [
    ("    buf7,  = extern8((arg6, buf5, ), ())  # mm, arg6.permute(1, 0)", "extern mm"),
    ("    buf62, buf63,  = extern65((buf54, buf56, ), (s0, ))  # sdpa_backward, buf54.view(s0)",
     "extern sdpa_backward"),
    ("    buf0 = empty((s0, 64), (64, 1), dtype=torch.float32, device=dev0)", "alloc"),
    ("    k3_pw_node10_node12(arg7.data_ptr(), buf7.data_ptr(), s0, s1)", "kernel"),
    ("    buf11 = buf5.view((s0, s1, 4, 16))  # reuses buf5", "other"),
    ("    del buf9", "other"),
])
def test_line_kind(line, kind):
    assert line_kind(line) == kind


def _mode(name, seconds):
    return SimpleNamespace(name=name, seconds=seconds, losses=[1.0] * len(seconds), error=None)


def test_summarize_leaves_out_the_warmup_and_compares_with_eager():
    eager = _mode("eager", [5.0, 1.0, 1.0, 2.0])
    symc = _mode("symc", [9.0, 0.5, 1.0, 1.0])
    tokens = [10, 20, 20, 40]
    row = demo_train_cpu.summarize(symc, tokens, 1, eager)
    assert row["steady_s"] == 2.5 and row["steady_tokens_per_s"] == 80 / 2.5
    assert row["speed_vs_eager"] == pytest.approx(4.0 / 2.5)
    assert row["median_step_speed_vs_eager"] == 2.0  # ratios 2, 1, 2
    assert "speed_vs_eager" not in demo_train_cpu.summarize(eager, tokens, 1, eager)


def test_a_short_run_interleaves_eager_and_symc(tmp_path):
    out = tmp_path / "r.json"
    assert demo_train_cpu.main(["--steps", "4", "--warmup", "1", "--modes", "eager,symc",
                                "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    rows = {r["mode"]: r for r in data["results"]}
    assert set(rows) == {"eager", "symc"} and not rows["symc"]["error"]
    assert rows["eager"]["steps"] == rows["symc"]["steps"] == 4
    assert rows["symc"]["compiles"] == 1 and rows["symc"]["recompiles"] == 0
    # the same weights, batches and optimizer: the same losses up to rounding
    assert rows["symc"]["last_loss"] == pytest.approx(rows["eager"]["last_loss"], rel=1e-3)
    assert rows["symc"]["speed_vs_eager"] > 0


def test_unknown_mode_is_refused():
    with pytest.raises(SystemExit):
        demo_train_cpu.main(["--modes", "eager,jit"])
