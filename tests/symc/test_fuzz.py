"""symc.fuzz: z3-chosen sizes at each entry's guard edges, compiled against eager."""

from __future__ import annotations

import textwrap

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings

import symc
from guards.constraints import holds
from symc.cli import main
from symc.fuzz_compare import RunResult, compare
from symc.fuzzing import constraints
from tests.models.models import build, make_batch


def scaled_softmax(x):
    return torch.softmax(x * 0.5, dim=-1)


def gelu_matmul(x, w):
    return F.gelu(x @ w) * 0.5


def row_sums(x, y):
    return (x - y).sum(1), (x * y).mean(0)


def size_branch(x):
    if x.size(0) > 16:
        return x.sum(0)
    return x * 2


SMALL_FUNCTIONS = [
    (scaled_softmax, (torch.randn(4, 16),)),
    (gelu_matmul, (torch.randn(3, 8, requires_grad=True), torch.randn(8, 5))),
    (row_sums, (torch.randn(6, 10), torch.randn(6, 10))),
]


@pytest.mark.parametrize("fn, example", SMALL_FUNCTIONS, ids=lambda v: getattr(v, "__name__", ""))
def test_fuzz_finds_no_failure_in_small_functions(fn, example):
    report = symc.fuzz(fn, *example, n=8, backend="inductor", max_value=32)
    assert report.ok, str(report)
    assert report.cases_run >= 8 and report.cases_per_second > 0
    assert any(s.case.kind == "int32 edge" and "max_elements" in s.reason
               for s in report.skipped), str(report)


@pytest.mark.parametrize("name", ["gpt", "bert", "llama", "t5"])
def test_fuzz_finds_no_failure_in_team_models(name):
    model = build(name)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    report = symc.fuzz(model, n=4, backend="aot_eager", max_value=12, max_entries=1,
                       empty=False, **make_batch(name, batch=2, seqlen=9))
    assert report.ok, str(report)
    assert report.entries[0].admitted >= 4
    assert all(p.grad is None for p in model.parameters()), "fuzzing must restore .grad"
    assert all(torch.equal(p, before[n]) for n, p in model.named_parameters())


def corrupt_tail_backend(capture):
    """A wrong kernel on purpose: the last element along the last dim is off by one whenever
    that size is not a multiple of 8 (an unmasked vector tail)."""
    run = symc.BACKENDS["eager"](capture)

    def corrupt(t):
        if not (isinstance(t, torch.Tensor) and t.is_floating_point() and t.ndim
                and t.size(-1) % 8):
            return t
        bump = torch.zeros_like(t)
        bump[..., -1] = 1.0
        return t + bump

    return lambda *inputs: tuple(corrupt(t) for t in run(*inputs))


@pytest.fixture
def corrupt_backend(monkeypatch):
    monkeypatch.setitem(symc.BACKENDS, "test_corrupt_tail", corrupt_tail_backend)
    return "test_corrupt_tail"


def test_planted_wrong_kernel_is_found_and_shrunk_to_small_sizes(corrupt_backend):
    report = symc.fuzz(lambda_free_add, torch.randn(16, 24), n=12, backend=corrupt_backend)
    assert not report.ok
    assert all(f.max_error == pytest.approx(1.0) for f in report.failures), str(report)
    assert all(f.problem.startswith("output: max abs error 1") for f in report.failures)
    shrunk = [f for f in report.failures if f.reproducer is not None]
    assert any(f.case.size > 2 and f.reproducer.tries > 0 for f in shrunk), str(report)
    assert all(f.reproducer.case.values == {"s0": 1, "s1": 1} for f in shrunk), str(report)
    assert shrunk[0].reproducer.code == "lambda_free_add(x=torch.randn(1, 1))"
    assert "minimal reproducer" in str(report)


def lambda_free_add(x):
    return x * 3 + 1


def test_size_branch_is_fuzzed_on_both_sides_of_its_guard():
    report = symc.fuzz(size_branch, torch.randn(4, 8), n=6, backend="inductor", max_value=40)
    assert report.ok, str(report)
    sides: dict = {}
    for entry in report.entries:  # the first entry of each side: the example's, then s0 = 17's
        sides.setdefault(" ".join(entry.guards), entry)
    assert {"s0 <= 16", "s0 > 16"} <= set(sides), str(report)
    assert report.entries[0].guards == ["s0 <= 16"]
    assert all(e.admitted >= 6 for e in sides.values()), str(report)
    assert sides["s0 <= 16"].recompiled >= 1, "s0 = 17, just outside s0 <= 16, must recompile"


def test_backward_is_compared_when_inputs_require_grad(corrupt_backend):
    def wrong_grad_backend(capture):
        run = symc.BACKENDS["eager"](capture)

        class ScaleGrad(torch.autograd.Function):
            @staticmethod
            def forward(ctx, t):
                return t.clone()

            @staticmethod
            def backward(ctx, g):
                return g * (1.5 if g.size(0) % 2 else 1.0)

        return lambda *inputs: tuple(ScaleGrad.apply(t) for t in run(*inputs))

    symc.BACKENDS["test_corrupt_tail"] = wrong_grad_backend
    report = symc.fuzz(scaled_softmax, torch.randn(4, 6, requires_grad=True), n=6,
                       backend=corrupt_backend)
    assert not report.ok
    assert all("grad of input[0][0]" in f.problem for f in report.failures), str(report)
    assert report.failures[0].reproducer.case.values["s0"] == 1


def test_sizes_strategy_draws_what_the_entry_admits():
    compiled = symc.compile(size_branch, backend="eager")
    compiled(torch.randn(20, 3))
    entry = compiled.entries[0]
    found = constraints(entry)

    @settings(max_examples=25, deadline=None)
    @given(symc.fuzz.sizes(entry, max_value=48))
    def check(values):
        assert values and all(holds(g.expr, values) for g in found)
        assert values[min(values, key=str)] > 16

    check()


def test_cli_fuzz_prints_the_report_and_exits_1_on_failure(tmp_path, capsys, corrupt_backend):
    source = tmp_path / "fuzz_target.py"
    source.write_text(textwrap.dedent("""
        import torch

        def f(x, scale=2.0):
            return torch.relu(x) * scale
    """))
    argv = ["fuzz", f"{source}:f", "--example", "torch.randn(4, 8)", "--example", "scale=3.0",
            "-n", "4", "--backend", "eager"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "symc.fuzz f (backend eager)" in out and "0 failures" in out
    assert main([*argv[:-1], corrupt_backend]) == 1
    out = capsys.readouterr().out
    assert "minimal reproducer" in out and "f(x=torch.randn(1, 1), scale=3.0)" in out


# Bugs symc.fuzz found in symc; each test flips to XPASS (and fails, strict) once fixed.
def layer_norm_last(x):
    return F.layer_norm(x, (x.size(-1),))


def test_layer_norm_backward_over_a_dynamic_dim_matches_eager():
    """Found by symc.fuzz: the mean's scale 1/s1 once reached the index printers."""
    compiled = symc.compile(layer_norm_last, backend="inductor")
    for n in (8, 5, 13, 1):
        x = torch.randn(3, n, requires_grad=True)
        ref = x.detach().clone().requires_grad_(True)
        compiled(x).pow(2).sum().backward()
        layer_norm_last(ref).pow(2).sum().backward()
        torch.testing.assert_close(x.grad, ref.grad, atol=1e-5, rtol=1e-4)
    assert symc.explain(compiled).compiles == 1


@pytest.mark.parametrize("backend", ["eager", "prims", "aot_eager", "inductor"])
def test_amax_over_an_empty_dim_raises_like_eager(backend):
    compiled = symc.compile(lambda_free_amax, backend=backend)
    compiled(torch.randn(6, 10))
    with pytest.raises(IndexError):  # eager's own error: the op runs eagerly (a graph break)
        compiled(torch.randn(0, 0))


def lambda_free_amax(x):
    return x.amax(0)


@pytest.mark.parametrize("backend", ["prims", "aot_eager", "inductor"])
def test_softmax_over_an_empty_dim_is_empty_on_every_backend(backend):
    compiled = symc.compile(scaled_softmax, backend=backend)
    compiled(torch.randn(3, 8))
    assert compiled(torch.randn(2, 0)).shape == (2, 0)


def position_embedding(x, table):
    return F.embedding(torch.arange(x.size(0)), table) + x[:, None]


def test_an_embedding_position_past_the_table_raises_index_error_like_eager():
    """Found by symc.fuzz (GPT at length 257, block_size + 1): the C++ gather read garbage."""
    compiled = symc.compile(position_embedding, backend="inductor")
    table = torch.randn(8, 4)
    x = torch.randn(5)
    torch.testing.assert_close(compiled(x, table), position_embedding(x, table))
    with pytest.raises(IndexError):
        position_embedding(torch.randn(9), table)
    with pytest.raises(IndexError, match="index out of range"):
        compiled(torch.randn(9), table)
    x = torch.randn(8)
    torch.testing.assert_close(compiled(x, table), position_embedding(x, table))  # flag reset


COMPARE_CASES = [
    # (name, compiled run, eager run, expected start of the mismatch text or None)
    ("equal", RunResult(torch.ones(3)), RunResult(torch.ones(3)), None),
    ("within f32 tolerance", RunResult(torch.ones(3) + 1e-5), RunResult(torch.ones(3)), None),
    ("off by one", RunResult(torch.tensor([1.0, 3.0])), RunResult(torch.tensor([1.0, 2.0])),
     "output: max abs error 1"),
    ("nan where eager is finite", RunResult(torch.tensor([float("nan")])),
     RunResult(torch.tensor([0.0])), "output: max abs error inf"),
    ("same nans", RunResult(torch.tensor([float("nan")])), RunResult(torch.tensor([float("nan")])),
     None),
    ("shape", RunResult((torch.ones(2),)), RunResult((torch.ones(3),)), "output[0]: compiled gave"),
    ("ints exact", RunResult(torch.tensor([2])), RunResult(torch.tensor([1])), "output: max abs"),
    ("both raise", RunResult(error=ValueError("a"), phase="forward"),
     RunResult(error=IndexError("b"), phase="forward"), None),
    ("compiled raises", RunResult(error=ValueError("a"), phase="forward"),
     RunResult(torch.ones(1)), "call: compiled raised ValueError: a"),
    ("eager raises", RunResult(torch.ones(1)), RunResult(error=IndexError("b"), phase="forward"),
     "call: eager raised IndexError: b"),
    ("compiled raises only in backward", RunResult(torch.ones(1), error=RuntimeError("c"),
                                                   phase="backward"),
     RunResult(error=IndexError("b"), phase="forward"), "call: eager raised IndexError: b"),
    ("grads compared", RunResult(torch.ones(1), {"grad of w": torch.ones(2)}),
     RunResult(torch.ones(1), {"grad of w": torch.zeros(2)}), "grad of w: max abs error 1"),
]


@pytest.mark.parametrize("case", COMPARE_CASES, ids=lambda c: c[0])
def test_compare_table(case):
    name, got, want, expected = case
    found = compare(got, want)
    text = None if found is None else str(found)
    assert (text is None) == (expected is None) and (text or "").startswith(expected or ""), \
        f"{name}: expected {expected!r}, got {text!r}"


def cross_entropy(logits, targets):
    return F.cross_entropy(logits, targets)


def test_cross_entropy_with_every_target_ignored_has_zero_grads_like_eager():
    report = symc.fuzz(cross_entropy, torch.randn(4, 5, requires_grad=True),
                       torch.full((4,), -100), n=4, backend="aot_eager", empty=False)
    assert report.ok, str(report)


def test_cross_entropy_rejects_a_target_of_another_length_like_eager():
    compiled = symc.compile(cross_entropy, backend="aot_eager")
    compiled(torch.randn(4, 5), torch.zeros(4, dtype=torch.long))
    with pytest.raises(Exception, match="nll_loss: target size"):
        compiled(torch.randn(4, 5), torch.zeros(3, dtype=torch.long))
