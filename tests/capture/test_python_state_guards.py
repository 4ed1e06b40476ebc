"""Every piece of Python state the captured code read is guarded: changing it after the first
call gives eager's answer (recompiling), never the stale compiled one.

Default dtype, exact tensor types (Parameter, subclasses), function defaults (inlined and the
compiled function's own), class attributes (classmethod `cls.x`, `type(self).x`), bound methods
of objects (no recompile storm), global lists the code appends to (no guard per element).
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
import torch.nn as nn

import symc

BACKENDS = ["eager", "aot_eager", "inductor"]
SIZES = [3, 1, 2, 7, 13]


def zeros_plus(x):
    return torch.zeros(x.shape) + x


@pytest.mark.parametrize("backend", BACKENDS)
def test_default_dtype_change_recompiles(backend):
    compiled = symc.compile(zeros_plus, backend=backend)
    x = torch.randn(5)
    assert compiled(x).dtype == torch.float32
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    try:
        for n in SIZES:
            x = torch.randn(n, dtype=torch.float32)
            out, expected = compiled(x), zeros_plus(x)
            assert out.dtype == expected.dtype == torch.float64
            torch.testing.assert_close(out, expected)
    finally:
        torch.set_default_dtype(previous)
    assert compiled(x).dtype == torch.float32


def parameter_branch(x):
    if isinstance(x, nn.Parameter):
        return x * 2
    return x - 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_isinstance_parameter_follows_the_input(backend):
    compiled = symc.compile(parameter_branch, backend=backend)
    for n in (3, 2, 7):  # parameters get static sizes: one entry per size
        x = torch.randn(n)
        p = nn.Parameter(torch.randn(n))
        frozen = nn.Parameter(torch.randn(n), requires_grad=False)
        for value in (x, p, frozen, x):
            out, expected = compiled(value), parameter_branch(value)
            torch.testing.assert_close(out, expected)
        compiled(p).sum().backward()
        torch.testing.assert_close(p.grad, torch.full((n,), 2.0))


class Tagged(torch.Tensor):
    """A tensor subclass with no overrides: results of ops on it are Tagged in eager."""


def exact_type_branch(x):
    if type(x) is torch.Tensor:
        return x + 1
    return x - 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_subclass_input_runs_eagerly_and_keeps_its_type(backend):
    compiled = symc.compile(exact_type_branch, backend=backend)
    for n in SIZES:
        x = torch.randn(n)
        tagged = torch.randn(n).as_subclass(Tagged)
        torch.testing.assert_close(compiled(x), x + 1)
        out, expected = compiled(tagged), exact_type_branch(tagged)
        assert type(out) is type(expected) is Tagged
        torch.testing.assert_close(out.as_subclass(torch.Tensor),
                                   expected.as_subclass(torch.Tensor))
    assert "tensor subclass" in str(symc.explain(compiled))


def scale_by(x, k=2):
    return x * k


def calls_scale_by(x):
    return scale_by(x) + 1


def test_changed_defaults_of_an_inlined_function_recompile():
    compiled = symc.compile(calls_scale_by, backend="eager")
    x = torch.ones(3)
    torch.testing.assert_close(compiled(x), x * 2 + 1)
    old = scale_by.__defaults__
    scale_by.__defaults__ = (5,)
    try:
        torch.testing.assert_close(compiled(x), x * 5 + 1)
    finally:
        scale_by.__defaults__ = old


@pytest.mark.parametrize("backend", BACKENDS)
def test_changed_defaults_of_the_compiled_function(backend):
    def f(x, k=2, *, shift=1.0):
        return x * k + shift

    compiled = symc.compile(f, backend=backend)
    for n in SIZES:
        x = torch.randn(n)
        torch.testing.assert_close(compiled(x), x * 2 + 1)
    f.__defaults__ = (3,)
    f.__kwdefaults__ = {"shift": -4.0}
    for n in SIZES:
        x = torch.randn(n)
        torch.testing.assert_close(compiled(x), x * 3 - 4)
        torch.testing.assert_close(compiled(x, 7), x * 7 - 4)
    f.__defaults__ = None  # k is now required, as Python says
    with pytest.raises(TypeError):
        compiled(torch.randn(2))


class Scaler:
    factor = 2

    @classmethod
    def apply(cls, x):
        return x * cls.factor


def via_classmethod(x):
    return Scaler.apply(x)


class ClassScaled(nn.Module):
    factor = 2

    def forward(self, x):
        return x * type(self).factor


@pytest.mark.parametrize("backend", BACKENDS)
def test_class_attributes_read_through_cls_and_type_self_are_guarded(backend):
    compiled_fn = symc.compile(via_classmethod, backend=backend)
    module = ClassScaled()
    compiled_module = symc.compile(module, backend=backend)
    x = torch.randn(4)
    torch.testing.assert_close(compiled_fn(x), x * 2)
    torch.testing.assert_close(compiled_module(x), x * 2)
    try:
        Scaler.factor = 5
        ClassScaled.factor = 7
        for n in SIZES:
            x = torch.randn(n)
            torch.testing.assert_close(compiled_fn(x), x * 5)
            torch.testing.assert_close(compiled_module(x), x * 7)
    finally:
        Scaler.factor = 2
        ClassScaled.factor = 2


class Helper:
    k = 3

    @classmethod
    def scale(cls, x):
        return x * cls.k


def uses_bound_method(x):
    return Helper.scale(x)  # a new bound-method object at each attribute read


def test_bound_method_compiles_once():
    compiled = symc.compile(uses_bound_method, backend="eager")
    alive = []  # bound methods kept alive, so no new one reuses the address of an old one
    for n in SIZES:
        torch.testing.assert_close(compiled(torch.ones(n)), torch.full((n,), 3.0))
        alive.append(Helper.scale)
    assert symc.explain(compiled).compiles == 1
    Helper.k = 4
    try:
        torch.testing.assert_close(compiled(torch.ones(2)), torch.full((2,), 4.0))
    finally:
        Helper.k = 3


LOG: list = []


def appends_to_a_global_list(x):
    LOG.append(x.shape[0])
    return x * 2


def test_appending_to_a_global_list_does_not_guard_its_elements():
    LOG.clear()
    compiled = symc.compile(appends_to_a_global_list, backend="eager")
    for n in SIZES:
        torch.testing.assert_close(compiled(torch.ones(n)), torch.full((n,), 2.0))
    assert LOG == SIZES
    report = symc.explain(compiled)
    assert report.recompiles == 0, str(report)
    assert "G['LOG'][" not in str(report)


@dataclasses.dataclass
class Boxed:
    value: torch.Tensor
    SCALE = 2  # a class attribute, not a field

    def scaled(self):
        return self.value * self.SCALE


def builds_boxed(x):
    return Boxed(x + 1).scaled()


def test_class_attribute_of_an_object_built_in_the_graph_is_guarded():
    compiled = symc.compile(builds_boxed, backend="eager")
    x = torch.ones(3)
    torch.testing.assert_close(compiled(x), torch.full((3,), 4.0))
    Boxed.SCALE = 5
    try:
        torch.testing.assert_close(compiled(x), torch.full((3,), 10.0))
    finally:
        Boxed.SCALE = 2
