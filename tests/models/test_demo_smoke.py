"""The demo machinery runs a few steps end to end (symc's eager backend, tiny model) and compiles
once; a compilation failure (fallback to eager) fails the test."""

from __future__ import annotations

import io
import math

from rich.console import Console

from symc.demo import DemoOptions, draw_lengths, format_report, load_text, run_demo, split_guards


def test_shipped_text_is_real_english_and_large_enough():
    text = load_text()
    assert len(text) > 30_000
    assert b"Alice" in text and b" the " in text
    text.decode("utf-8")


def test_lengths_are_reproducible_and_in_range():
    lengths = draw_lengths(50, 16, 128, seed=3)
    assert lengths == draw_lengths(50, 16, 128, seed=3)
    assert all(16 <= t <= 128 for t in lengths)


def test_demo_runs_three_steps_with_finite_loss():
    opts = DemoOptions(steps=3, backend="eager", seqlen_min=4, seqlen_max=12, batch=2, n_layer=1,
                       n_embd=16, n_head=2, sample_bytes=8, compare_eager=True, progress=False)
    report = run_demo(opts, console=Console(file=io.StringIO()))
    assert report.steps == 3
    assert all(math.isfinite(v) for v in report.losses)
    assert report.eager is not None and len(report.eager.step_seconds) == 3
    text = format_report(report)
    assert "steps: 3" in text and "sample:" in text
    # symc compiled the step itself: no fallback to eager, one compile serving every length
    assert report.failure is None, report.failure
    assert report.compiles == 1 and report.recompiles == 0 and report.graph_breaks == 0, text
    assert "FAILED" not in text and "fell back" not in text


def test_split_guards_separates_size_guards():
    sized, other = split_guards(["2 <= s0 <= 128", "L['x'].dtype == torch.int64", "s1 == 2*s0"])
    assert sized == ["2 <= s0 <= 128", "s1 == 2*s0"] and len(other) == 1


def test_demo_falls_back_to_eager_and_names_the_failing_stage(monkeypatch):
    import symc
    from capture import CaptureError

    def broken_compile(model, **kwargs):
        def step(*args):
            raise CaptureError("expected a tensor, got a generator")

        return step

    monkeypatch.setattr(symc, "compile", broken_compile)
    opts = DemoOptions(steps=2, backend="inductor", seqlen_min=4, seqlen_max=8, batch=2,
                       n_layer=1, n_embd=16, n_head=2, sample_bytes=4, compare_eager=False,
                       progress=False)
    report = run_demo(opts, console=Console(file=io.StringIO()))
    assert report.steps == 2 and report.failure_step == 0
    assert "CaptureError" in report.failure and "training step 0" in report.failure
    assert "fell back" in format_report(report) or "used eager" in format_report(report)


def test_report_gives_the_speed_against_eager_and_torch_compile():
    from symc.demo import DemoReport, ModeTiming

    def timing(name, step_s):
        return ModeTiming(name, step_seconds=[5.0] + [step_s] * 9, tokens=1000)
    report = DemoReport(DemoOptions(steps=10), losses=[3.0] * 10, sample="x",
                        compiled=timing("symc", 0.5), eager=timing("eager", 1.0),
                        torch_compile=timing("torch.compile", 0.25))
    text = format_report(report)
    assert "steady-state speed vs eager: 2.00x" in text
    assert "steady-state speed vs torch.compile: 0.50x" in text
