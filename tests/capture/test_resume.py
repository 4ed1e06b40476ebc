"""Graph breaks split the frame: the graph before the break, the instruction run eagerly, and the
rest of the frame as a resume function compiled with its own guards and cache entries.

Each case runs over sizes 5 (the first call's hints), 1, 7 (prime) and 13; the result and what
the function prints must equal eager, the number of compiles is fixed after the first call (no
recompiles across sizes), and `symc.explain` lists the expected graphs and breaks.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch

import symc
import resume_cases as c

SIZES = (5, 1, 7, 13)

# (function, compiles: entries over all the functions the frame was split into, breaks, reason)
CASES = [
    (c.break_at_start, 2, 1, "print"),
    (c.break_in_middle, 2, 1, "print"),
    (c.break_at_end, 2, 1, "print"),
    (c.two_breaks, 3, 2, "print"),
    (c.live_stack_value, 4, 2, "print"),          # (x * 2).sum(0) lives on the stack
    (c.kwargs_call, 2, 1, "print"),               # KW_NAMES before the broken CALL
    (c.break_in_inlined_call, 4, 2, "print"),     # helper: a graph + its resume; then the caller's
    (c.break_in_loop, 4, 3, "print"),             # one entry per remaining iteration count
    (c.break_in_with_block, 2, 1, "print"),       # resumes inside `with torch.no_grad()`
    (c.data_dependent_branch, 2, 1, "data-dependent branch"),
    (c.branch_on_mask_both_ways, 2, 1, "data-dependent branch"),
    (c.item_as_value, 2, 1, "item"),
    (c.mask_index, 2, 1, "boolean mask"),
    (c.nonzero_rows, 2, 1, "nonzero"),
    (c.numpy_call, 4, 3, "numpy"),
]


def run_both(fn, compiled, n, capsys):
    torch.manual_seed(n)
    x = torch.randn(n, 4)
    expected = fn(x.clone())
    printed = capsys.readouterr().out
    actual = compiled(x.clone())
    assert capsys.readouterr().out == printed
    torch.testing.assert_close(actual, expected)


@pytest.mark.parametrize("fn, compiles, breaks, reason", CASES, ids=[f[0].__name__ for f in CASES])
def test_split_frame_matches_eager_without_recompiles(fn, compiles, breaks, reason, capsys):
    compiled = symc.compile(fn, backend="eager")
    counts = []
    for n in SIZES:
        run_both(fn, compiled, n, capsys)
        counts.append(symc.explain(compiled).compiles)
    report = symc.explain(compiled)
    assert counts == [compiles] * len(SIZES), str(report)
    assert report.graph_breaks == breaks, str(report)
    first = report.breaks[0]
    assert reason in first.reason, first.reason
    assert first.resumed_in and first.where.startswith("resume_cases.py:"), first
    assert {e.function for e in report.entries} >= {fn.__name__}


@pytest.mark.parametrize("backend", ["prims", "aot_eager"])
def test_split_frame_trains_like_eager(backend):
    compiled = symc.compile(c.break_in_middle, backend=backend)
    for n in (3, 1, 7):
        x = torch.randn(n, 4, requires_grad=True)
        x_eager = x.detach().clone().requires_grad_(True)
        compiled(x).pow(2).sum().backward()
        c.break_in_middle(x_eager).pow(2).sum().backward()
        torch.testing.assert_close(x.grad, x_eager.grad)


def test_break_inside_try_block_stays_a_whole_frame_fallback(capsys):
    compiled = symc.compile(c.break_in_try, backend="eager")
    for n in SIZES:
        run_both(c.break_in_try, compiled, n, capsys)
    report = symc.explain(compiled)
    assert report.compiles == 0 and report.graph_breaks == 1
    assert "not resumed: inside a try block" in report.breaks[0].reason


def test_live_size_is_a_symbol_in_the_resume_function(capsys):
    # An int computed from a size and live across the break is passed as a Python int: the
    # resume function takes it as a symbol (issue 22), not by value (one entry per size).
    compiled = symc.compile(c.size_int_live, backend="eager")
    for n in SIZES:
        run_both(c.size_int_live, compiled, n, capsys)
    report = symc.explain(compiled)
    assert report.compiles == 2, report.recompile_reasons  # the frame and its resume function


def test_long_loop_resumes_without_nesting_frames(capsys):
    compiled = symc.compile(c.long_loop, backend="eager")
    with pytest.warns(UserWarning, match="cache_size_limit"):
        run_both(c.long_loop, compiled, 3, capsys)   # 300 resumes: no RecursionError
    run_both(c.long_loop, compiled, 5, capsys)


def test_explain_shows_graphs_with_the_break_between():
    compiled = symc.compile(c.break_in_middle, backend="eager")
    compiled(torch.randn(5, 4))
    text = str(symc.explain(compiled))
    first = text.index("entry 0 of break_in_middle")
    split = text.index("-- graph break at resume_cases.py:")
    second = text.index("entry 1 of break_in_middle_resume_at_")
    assert first < split < second, text
    assert "print(\"middle\")" in text[split:second]
    assert "resumed in break_in_middle_resume_at_" in text[split:second]
    data = symc.explain(compiled).to_json()
    assert data["breaks"][0]["resumed_in"].startswith("break_in_middle_resume_at_")


def test_fullgraph_still_raises_at_the_break():
    compiled = symc.compile(c.break_in_middle, backend="eager", fullgraph=True)
    with pytest.raises(symc.Unsupported, match="print"):
        compiled(torch.randn(3, 4))


def test_resume_code_runs_on_this_python():
    # The same check runs on 3.12 (scripts/check_resume_code.py needs no torch).
    script = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "check_resume_code.py")
    done = subprocess.run([sys.executable, script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "MISMATCH" not in done.stdout


def test_grad_mode_is_restored_after_a_break_inside_no_grad(capsys):
    compiled = symc.compile(c.break_in_with_block, backend="eager")
    for n in (3, 4):
        x = torch.randn(n, 4, requires_grad=True)
        out = compiled(x)
        assert torch.is_grad_enabled()
        assert out.requires_grad == c.break_in_with_block(x).requires_grad
