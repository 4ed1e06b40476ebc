"""`@contextlib.contextmanager` functions in compiled code (capture/contexts.py): entering runs
the generator to its yield, leaving runs the rest; results and side effects equal eager's, in one
compilation. What capture cannot follow (an exception the context manager would see, a break in
the block, a second yield) falls back to eager, which then behaves exactly as eager."""

from __future__ import annotations

import contextlib

import pytest
import torch

import symc
from capture.errors import Unsupported
from tests.device import DEVICE


@contextlib.contextmanager
def scaled(t, k):
    t.mul_(k)                 # an in-place write on an input before the yield
    try:
        yield t + 1           # the `as` value
    finally:
        t.div_(k)             # restored after the block


@contextlib.contextmanager
def shifted(t):
    t.add_(1)
    yield t * 2
    t.sub_(3)                 # not a restore: the input ends shifted by -2


class Config:
    def __init__(self):
        self.scale = 1.0


CONFIG = Config()


@contextlib.contextmanager
def config_scale(value):
    old = CONFIG.scale
    CONFIG.scale = value      # Python state changed inside the block...
    try:
        yield
    finally:
        CONFIG.scale = old    # ...and restored by the finally


@contextlib.contextmanager
def no_grad_inside():
    with torch.no_grad():
        yield


def _compare(fn, *shapes, backend="aot_eager"):
    compiled = symc.compile(fn, backend=backend, fullgraph=True)
    for shape in shapes:
        x = torch.randn(shape, device=DEVICE)
        a, b = x.clone(), x.clone()
        torch.testing.assert_close(compiled(a), fn(b))
        torch.testing.assert_close(a, b)     # the input's side effects match too
    report = symc.explain(compiled)
    assert (report.compiles, report.graph_breaks) == (1, 0), report
    return compiled


def test_as_value_and_in_place_writes_before_and_after_the_yield():
    def fn(x):
        with scaled(x, 2.0) as y:
            z = y * 3 + x        # x is scaled inside the block
        return z + x             # and restored after it

    _compare(fn, (4,), (7,))


def test_side_effect_that_is_not_a_restore():
    def fn(x):
        with shifted(x) as y:
            z = y + x
        return z * x

    _compare(fn, (3, 5), (2, 6), backend="inductor")


def test_nested_context_managers():
    def fn(x):
        with scaled(x, 3.0) as y:
            with shifted(x) as w:
                z = y + w * x
            z = z - x
        return z, x * 1

    _compare(fn, (5,), (8,))


def test_python_state_set_and_restored_in_finally():
    def fn(x):
        with config_scale(4.0):
            y = x * CONFIG.scale
        return y + CONFIG.scale

    _compare(fn, (6,))
    assert CONFIG.scale == 1.0


def test_grad_mode_inside_the_generator_applies_to_the_block():
    def fn(x):
        with no_grad_inside():
            y = x * 2
        return y, x * 3

    compiled = symc.compile(fn, backend="aot_eager", fullgraph=True)
    x = torch.randn(4, device=DEVICE, requires_grad=True)
    y, z = compiled(x)
    assert not y.requires_grad and z.requires_grad


@contextlib.contextmanager
def twice():
    yield 1
    yield 2


def test_a_generator_that_yields_twice_raises_as_eager():
    def fn(x):
        with twice():
            y = x + 1
        return y

    with pytest.raises(RuntimeError, match="didn't stop"):
        fn(torch.ones(2))
    compiled = symc.compile(fn, backend="aot_eager")
    with pytest.raises(RuntimeError, match="didn't stop"):
        compiled(torch.ones(2, device=DEVICE))
    with pytest.raises(Unsupported, match="yielded twice"):
        symc.compile(fn, backend="aot_eager", fullgraph=True)(torch.ones(2, device=DEVICE))


@contextlib.contextmanager
def swallow_value_error(t):
    try:
        yield
    except ValueError:
        t.add_(100)


def test_an_exception_the_context_manager_sees_runs_eagerly():
    def fn(x):
        with swallow_value_error(x):
            if x.shape[0] > 2:
                raise ValueError("caught by the context manager")
            x = x * 2
        return x + 1

    compiled = symc.compile(fn, backend="aot_eager")
    for n in (2, 4):
        a = torch.zeros(n, device=DEVICE)
        b = a.clone()
        torch.testing.assert_close(compiled(a), fn(b))
        torch.testing.assert_close(a, b)
    with pytest.raises(Unsupported):
        symc.compile(fn, backend="aot_eager", fullgraph=True)(torch.zeros(4, device=DEVICE))


def test_a_break_inside_the_block_runs_the_context_manager_once():
    def fn(x):
        with shifted(x) as y:
            if y.sum() > 0:     # data-dependent: a graph break inside the block
                y = y + 1
        return y + x

    compiled = symc.compile(fn, backend="aot_eager")
    for sign in (1.0, -1.0):
        a = torch.full((3,), sign, device=DEVICE)
        b = a.clone()
        torch.testing.assert_close(compiled(a), fn(b))
        torch.testing.assert_close(a, b)   # +1 then -3 exactly once, as eager
    assert "@contextmanager block is not resumed" in str(symc.explain(compiled))


@contextlib.contextmanager
def breaks_after_the_yield(t):
    t.add_(1)
    yield t
    if t.sum() > 0:     # a break while leaving the block
        t.mul_(2)
    t.sub_(1)


def test_a_break_in_the_code_after_the_yield_runs_the_frame_eagerly():
    def fn(x):
        with breaks_after_the_yield(x) as z:
            w = z * 3
        return w + x

    compiled = symc.compile(fn, backend="aot_eager")
    a, b = torch.ones(3, device=DEVICE), torch.ones(3, device=DEVICE)
    torch.testing.assert_close(compiled(a), fn(b))
    torch.testing.assert_close(a, b)
