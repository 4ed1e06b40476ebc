"""Compiled code behaves as eager where Python semantics show: exception types, generators,
dataclass outputs.

- A size check eager fails on raises what eager raises: RuntimeError (a `view` eager rejects,
  also inside the program's own `try/except RuntimeError`), AssertionError for `assert`.
- A generator function returns a generator; a generator consumed with an early `break` runs
  only as far as the consumer asks (an infinite one included).
- A dataclass with an `init=False` field can be returned.
"""

from __future__ import annotations

import dataclasses
import importlib

import pytest
import torch

import symc
from assert_cases import asserts_even

translate_module = importlib.import_module("capture.translate")

BACKENDS = ["eager", "aot_eager", "inductor"]


def view_rows_of_seven(x):
    return x.view(-1, 7)


@pytest.mark.parametrize("backend", BACKENDS)
def test_failing_view_raises_runtime_error_like_eager(backend):
    compiled = symc.compile(view_rows_of_seven, backend=backend)
    assert compiled(torch.ones(2, 7)).shape == (2, 7)
    for shape in [(3, 4), (1, 5), (13, 2)]:
        with pytest.raises(RuntimeError) as compiled_error:
            compiled(torch.ones(shape))
        with pytest.raises(RuntimeError):
            view_rows_of_seven(torch.ones(shape))
        assert "7" in str(compiled_error.value)


def view_or_fallback(x):
    try:
        return x.view(-1, 7)
    except RuntimeError:
        return x + 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_failing_view_inside_try_reaches_the_programs_handler(backend):
    compiled = symc.compile(view_or_fallback, backend=backend)
    for shape in [(2, 7), (3, 4), (1, 7), (1, 5), (5, 7), (13, 2)]:
        x = torch.randn(shape)
        torch.testing.assert_close(compiled(x), view_or_fallback(x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_failing_assert_raises_assertion_error(backend):
    compiled = symc.compile(asserts_even, backend=backend)
    torch.testing.assert_close(compiled(torch.ones(4)), torch.full((4,), 2.0))
    for n in (1, 5, 13):
        with pytest.raises(AssertionError):
            compiled(torch.ones(n))
    torch.testing.assert_close(compiled(torch.ones(2)), torch.full((2,), 2.0))


def two_values(x):
    yield x + 1
    yield x * 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_generator_function_returns_a_generator(backend):
    compiled = symc.compile(two_values, backend=backend)
    for n in (1, 2, 7):
        x = torch.randn(n)
        produced = compiled(x)
        assert produced is not None and iter(produced) is produced
        for got, expected in zip(produced, two_values(x), strict=True):
            torch.testing.assert_close(got, expected)


def counter():
    i = 0
    while True:
        yield i
        i += 1


def stops_early(x):
    for i in counter():
        if i >= 3:
            break
        x = x + i
    return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_infinite_generator_with_break_is_inlined_lazily(backend, monkeypatch):
    # With the whole generator run up front, capture stops at the step limit (a break).
    monkeypatch.setattr(translate_module, "MAX_STEPS", 20_000)
    compiled = symc.compile(stops_early, backend=backend)
    for n in (1, 2, 5):
        x = torch.randn(n)
        torch.testing.assert_close(compiled(x), x + 3)
    assert symc.explain(compiled).graph_breaks == 0


def test_generator_stopped_early_runs_no_further():
    def f(x):
        for value in doubles(x):
            return value
        return x

    def doubles(x):
        yield x * 2
        raise ValueError("never reached: the consumer returned")

    compiled = symc.compile(f, backend="eager")
    torch.testing.assert_close(compiled(torch.ones(3)), torch.full((3,), 2.0))
    assert symc.explain(compiled).graph_breaks == 0


@dataclasses.dataclass
class WithDerived:
    value: torch.Tensor
    count: int = dataclasses.field(init=False, default=0)


def builds_with_derived(x):
    out = WithDerived(x + 1)
    out.count = x.shape[0]
    return out


@pytest.mark.parametrize("backend", BACKENDS)
def test_dataclass_with_init_false_field_is_returned(backend):
    compiled = symc.compile(builds_with_derived, backend=backend)
    for n in (1, 2, 7):
        x = torch.randn(n)
        out = compiled(x)
        assert isinstance(out, WithDerived)
        torch.testing.assert_close(out.value, x + 1)
        assert out.count == n


def multiples(x):
    i = 0
    while True:
        yield x * i
        i += 1


def pulls_with_next(x):
    g = multiples(x)
    first = next(g)
    second = next(iter(g))  # iter() of a generator is the generator: no values skipped
    return first + second + next(g, x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_next_and_iter_on_an_infinite_generator(backend):
    compiled = symc.compile(pulls_with_next, backend=backend)
    for n in (1, 2, 7):
        x = torch.randn(n)
        torch.testing.assert_close(compiled(x), pulls_with_next(x))
    assert symc.explain(compiled).graph_breaks == 0
