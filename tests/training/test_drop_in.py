"""The drop-in contract (issue 26): symc.compile(module) is an nn.Module that fits in
containers, deep-copies and pickles before and after the first call, keeps the state_dict keys
of the original module and loads either form; partials, callable objects and bound methods
compile; hooks registered after the first call run."""

from __future__ import annotations

import copy
import functools
import pickle

import pytest
import torch
import torch.nn as nn

import symc

BACKENDS = ["eager", "aot_eager", "inductor"]


def _mlp():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


@pytest.mark.parametrize("backend", BACKENDS)
def test_compiled_module_is_an_nn_module_in_a_sequential(backend):
    model = _mlp()
    compiled = symc.compile(model, backend=backend)
    assert isinstance(compiled, nn.Module)
    outer = nn.Sequential(compiled, nn.Tanh())
    for n in (1, 2, 5, 9):
        x = torch.randn(n, 4)
        torch.testing.assert_close(outer(x), torch.tanh(model(x)))
    assert list(outer.parameters()) == list(model.parameters())
    outer.eval()
    assert not model.training
    outer.load_state_dict(outer.state_dict())
    assert symc.explain(compiled).compiles >= 1


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("when", ["before", "after"])
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_copy_and_pickle_rebuild_the_caches(backend, when, how):
    model = _mlp()
    compiled = symc.compile(model, backend=backend)
    x = torch.randn(3, 4)
    if when == "after":
        compiled(torch.randn(6, 4))
    clone = copy.deepcopy(compiled) if how == "deepcopy" else pickle.loads(pickle.dumps(compiled))
    assert isinstance(clone, type(compiled)) and clone._orig_mod is not model
    assert symc.explain(clone).compiles == 0          # caches are not copied
    torch.testing.assert_close(clone(x), model(x))
    assert symc.explain(clone).compiles == 1
    with torch.no_grad():                             # the copy owns its parameters
        clone._orig_mod[0].weight.zero_()
    assert model[0].weight.abs().sum() > 0
    clone(x).sum().backward()
    assert clone._orig_mod[2].weight.grad is not None and model[2].weight.grad is None


def test_state_dict_keys_and_loading_either_form():
    model = _mlp()
    compiled = symc.compile(model, backend="eager")
    assert list(compiled.state_dict()) == list(model.state_dict())   # no `_orig_mod.` prefix
    zeros = {k: torch.zeros_like(v) for k, v in model.state_dict().items()}
    compiled.load_state_dict(zeros)
    assert model[0].weight.abs().sum() == 0
    ones = {f"_orig_mod.{k}": torch.ones_like(v) for k, v in model.state_dict().items()}
    compiled.load_state_dict(ones)                    # torch.compile's keys load too
    assert torch.equal(model[0].weight, torch.ones_like(model[0].weight))
    fresh = _mlp()
    fresh.load_state_dict(compiled.state_dict())      # and into an eager model


@pytest.mark.parametrize("backend", BACKENDS)
def test_partial_callable_object_and_bound_method(backend):
    def scale(a, x, *, shift):
        return a * x + shift

    class Affine:
        def __init__(self):
            self.w = torch.randn(4)

        def __call__(self, x):
            return x * self.w

        def twice(self, x):
            return self(x) * 2

    partial = symc.compile(functools.partial(scale, 3.0, shift=1.0), backend=backend)
    obj = Affine()
    call = symc.compile(obj, backend=backend)
    method = symc.compile(obj.twice, backend=backend)
    for n in (1, 2, 7):
        x = torch.randn(n, 4)
        torch.testing.assert_close(partial(x), 3.0 * x + 1.0)
        torch.testing.assert_close(call(x), x * obj.w)
        torch.testing.assert_close(method(x), x * obj.w * 2)
    assert symc.explain(partial).compiles >= 1 and symc.explain(call).compiles >= 1
    obj.w = torch.randn(4)                            # a new tensor: guarded, read again
    x = torch.randn(3, 4)
    torch.testing.assert_close(call(x), x * obj.w)


@pytest.mark.parametrize("backend", BACKENDS)
def test_hooks_added_after_the_first_call_run(backend):
    model = _mlp()
    compiled = symc.compile(model, backend=backend)
    compiled(torch.randn(3, 4))
    seen = []
    handles = [model[0].register_forward_hook(lambda m, i, o: seen.append("fwd")),
               model[2].register_forward_pre_hook(lambda m, i: seen.append("pre"))]
    compiled(torch.randn(5, 4))
    assert seen == ["fwd", "pre"]
    for h in handles:
        h.remove()
    seen.clear()
    compiled(torch.randn(5, 4))
    assert seen == []
    assert any("_forward_hooks" in r for r in symc.explain(compiled).recompile_reasons)


@pytest.mark.parametrize("backend", BACKENDS)
def test_global_module_hooks_fire_on_every_module(backend):
    model = _mlp()
    compiled = symc.compile(model, backend=backend)
    compiled(torch.randn(3, 4))                      # compiled with no hooks anywhere
    seen = []
    handle = torch.nn.modules.module.register_module_forward_hook(
        lambda m, i, o: seen.append(type(m).__name__))
    try:
        compiled(torch.randn(3, 4))
        got = list(seen)
        seen.clear()
        model(torch.randn(3, 4))
    finally:
        handle.remove()
    assert got == seen == ["Linear", "ReLU", "Linear", "Sequential"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_full_backward_pre_hook_on_the_compiled_root(backend):
    model = _mlp()
    compiled = symc.compile(model, backend=backend)
    compiled(torch.randn(3, 4))
    seen = []
    model.register_full_backward_pre_hook(lambda m, grad_out: seen.append(grad_out[0].shape))
    x = torch.randn(5, 4, requires_grad=True)
    compiled(x).sum().backward()
    assert seen == [torch.Size([5, 2])]


def scaled_tanh(x):
    return torch.tanh(x) * 3


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_compiled_function_copies_and_pickles(how):
    compiled = symc.compile(scaled_tanh, backend="eager")
    compiled(torch.randn(4))
    clone = copy.deepcopy(compiled) if how == "deepcopy" else pickle.loads(pickle.dumps(compiled))
    assert clone is not compiled and symc.explain(clone).compiles == 0
    x = torch.randn(6)
    torch.testing.assert_close(clone(x), scaled_tanh(x))
    assert symc.explain(clone).compiles == 1 and clone.backend_name == "eager"
