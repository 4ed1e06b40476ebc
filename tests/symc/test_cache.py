"""The guard cache: entries, recompile reasons, cache limit, marks, size 1, reset."""

from __future__ import annotations

import warnings

import pytest
import torch

import symc


def branchy(x):
    if x.shape[0] > 8:
        return x * 2
    return x + 1


def test_size_branch_makes_two_entries_and_names_the_guard():
    f = symc.compile(branchy, backend="eager")
    for n in (4, 16, 32, 5):
        x = torch.randn(n, 3)
        torch.testing.assert_close(f(x), branchy(x))
    report = symc.explain(f)
    assert (report.compiles, report.recompiles, report.graph_breaks) == (2, 1, 0)
    assert len(report.entries) == 2
    (reason,) = report.recompile_reasons
    assert "s0 <= 8" in reason and "s0 = 16" in reason
    assert "L['x'].size(0)" in reason and "test_cache.py:" in reason


def test_batch_8_then_1_then_8_does_not_recompile():
    def fn(x, w):
        return torch.relu(x @ w).sum(-1)

    f = symc.compile(fn, backend="eager")
    w = torch.randn(4, 5)
    for n in (8, 1, 8, 3):
        x = torch.randn(n, 4)
        torch.testing.assert_close(f(x, w), fn(x, w))
    assert symc.explain(f).compiles == 1


def test_dtype_change_recompiles_with_tensor_reason():
    f = symc.compile(branchy, backend="eager")
    f(torch.randn(3, 3))
    f(torch.randn(3, 3, dtype=torch.float64))
    report = symc.explain(f)
    assert report.compiles == 2
    assert "float32" in report.recompile_reasons[0]


def test_mark_static_specialises_and_mark_dynamic_range_is_checked():
    def fn(x):
        return x.sum(0)

    f = symc.compile(fn, backend="eager")
    x = symc.mark_static(torch.randn(5, 3), 0)
    f(x)
    f(torch.randn(6, 3))  # size 6 fails `size(0) == 5`
    assert symc.explain(f).compiles == 2

    g = symc.compile(fn, backend="eager")
    y = symc.mark_dynamic(torch.randn(4, 3), 0, min=2, max=16)
    g(y)
    g(torch.randn(16, 3))
    assert symc.explain(g).compiles == 1
    g(torch.randn(17, 3))  # outside the declared range
    report = symc.explain(g)
    assert report.compiles == 2
    assert "16" in report.recompile_reasons[0]


def test_mark_dynamic_keeps_size_one_symbolic():
    def fn(x):
        return x * 2

    f = symc.compile(fn, backend="eager")
    f(symc.mark_dynamic(torch.randn(1, 3), 0, min=1, max=64))
    f(torch.randn(7, 3))
    assert symc.explain(f).compiles == 1


def test_int_argument_is_a_symbol_guarded_where_a_branch_reads_it():
    def fn(x, k):
        return x * k

    def branch(x, k):
        return x * k if k % 2 == 0 else x - k

    f, g = symc.compile(fn, backend="eager"), symc.compile(branch, backend="eager")
    x = torch.randn(2, 2)
    for k in (2, 3, 4, 5):
        torch.testing.assert_close(f(x, k), x * k)
        torch.testing.assert_close(g(x, k), branch(x, k))
    assert symc.explain(f).compiles == 1   # an int argument is a symbol (issue 22)
    report = symc.explain(g)
    # the branch reads `k % 2`: one entry per parity, not per value
    assert report.compiles == 2 and "L['k'] == 2" not in str(report.recompile_reasons), report


def test_cache_size_limit_runs_eagerly_with_one_warning(monkeypatch):
    monkeypatch.setattr(symc.config, "cache_size_limit", 2)

    def fn(x, k):
        return x + k

    f = symc.compile(fn, backend="eager")
    x = torch.zeros(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for k in range(5):
            torch.testing.assert_close(f(x, k), x + k)
    assert symc.explain(f).compiles == 2
    assert sum("cache_size_limit" in str(w.message) for w in caught) == 1


def test_reset_drops_entries():
    f = symc.compile(branchy, backend="eager")
    f(torch.randn(2, 2))
    symc.reset()
    assert f.entries == []
    f(torch.randn(2, 2))
    assert symc.explain(f).compiles == 2  # the count is history; the cache was emptied


def test_unknown_backend_names_the_known_ones():
    with pytest.raises(symc.BackendError) as info:
        symc.compile(branchy, backend="nope")
    assert "'eager'" in str(info.value) and "'prims'" in str(info.value)


def test_input_mutation_is_copied_back():
    def fn(x):
        x.mul_(2)
        return x.sum()

    f = symc.compile(fn, backend="eager", fullgraph=True)
    x = torch.ones(3)
    out = f(x)
    assert torch.equal(x, torch.full((3,), 2.0)) and out.item() == 6.0


def test_runtime_assert_raises_instead_of_recompiling():
    def fn(x, y):
        return x + y

    f = symc.compile(fn, backend="eager")
    f(torch.randn(3, 2), torch.randn(3, 2))
    with pytest.raises(Exception):  # noqa: B017 - eager raises too (mismatched sizes)
        f(torch.randn(3, 2), torch.randn(4, 2))


def test_decorator_form_and_explain_text():
    @symc.compile(backend="eager")
    def fn(x):
        return x.relu()

    fn(torch.randn(3))
    text = str(symc.explain(fn))
    assert "1 compile(s)" in text and "relu" in text and "guards:" in text
    data = symc.explain(fn).to_json()
    assert data["compiles"] == 1 and data["entries"][0]["guards"]


ALL_BACKENDS = ["eager", "prims", "aot_eager", "inductor"]


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_no_grad_region_stops_gradients(backend):
    def fn(x):
        with torch.no_grad():
            y = x * 3
        return (y * x).sum()

    f = symc.compile(fn, backend=backend, fullgraph=True)
    x = torch.randn(4, requires_grad=True)
    f(x).backward()
    expected = x.detach() * 3  # d/dx of (3x).detach() * x
    torch.testing.assert_close(x.grad, expected)


@pytest.mark.parametrize("backend", ALL_BACKENDS)
def test_detach_stops_gradients_on_every_backend(backend):
    def fn(x):
        return (x * x.detach()).sum() + x.detach().exp().sum()

    f = symc.compile(fn, backend=backend, fullgraph=True)
    for n in (4, 7):
        x = torch.randn(n, requires_grad=True)
        f(x).backward()
        torch.testing.assert_close(x.grad, x.detach())  # only the first factor carries grad
    assert symc.explain(f).compiles == 1


def test_dynamic_false_specialises_every_size():
    def fn(x):
        return x * 2

    f = symc.compile(fn, backend="eager", dynamic=False)
    f(torch.randn(3))
    f(torch.randn(4))
    assert symc.explain(f).compiles == 2
